// Runs an extension-host suite (a test/ext runner) inside code-server through the smoke-test driver and returns
// what its runner printed: every test's title and state, and the console lines.
import path from 'node:path';
import { launchChromium } from './browser';
import { devUrl, startCodeServer } from './codeServer';
import { repoRoot } from './paths';

export interface ExtSuiteResult {
  code: number;
  tests: Array<{ title: string; state: string; error?: string }>;
  lines: string[];
}

/** `runner`: the compiled runner under out/test/ext (e.g. index.js); `limitMs`: how long until its exit code;
 * `settings`: user settings over the tests' own. */
export async function runExtensionSuite(
  workspace: string,
  runner: string,
  limitMs: number,
  settings: Record<string, unknown> = {},
): Promise<ExtSuiteResult> {
  const cs = await startCodeServer(workspace, { smokeTestDriver: true, settings });
  const browser = await launchChromium();
  const lines: string[] = [];
  try {
    const page = await browser.newPage();
    const exit = new Promise<number>(
      (resolve) => void page.exposeFunction('codeAutomationExit', (code: number) => resolve(code)),
    );
    await page.exposeFunction('codeAutomationLog', (type: string, args: unknown[]) =>
      lines.push(args.map(String).join(' ')),
    );
    await page.goto(devUrl(cs, workspace, path.join(repoRoot, 'out', 'test', 'ext', runner)));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<number>(
      (_, reject) =>
        (timer = setTimeout(
          () => reject(new Error(`no exit code within ${limitMs / 1000} s; log:\n${lines.join('\n')}`)),
          limitMs,
        )),
    );
    const code = await Promise.race([exit, timeout]).finally(() => clearTimeout(timer));
    const resultLine = lines.find((l) => l.includes('EXT-RESULT '));
    if (!resultLine)
      throw new Error(`the extension-host runner printed no result (exit ${code}); log:\n${lines.join('\n')}`);
    const result = JSON.parse(resultLine.slice(resultLine.indexOf('EXT-RESULT ') + 11)) as {
      tests: ExtSuiteResult['tests'];
    };
    return { code, tests: result.tests, lines };
  } finally {
    await browser.close();
    await cs.stop();
  }
}
