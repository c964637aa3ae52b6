// Runs the extension-host suite (test/ext) inside code-server, a real VS Code, through the smoke-test driver.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { launchChromium } from '../support/browser';
import { devUrl, exampleWorkspace, startCodeServer } from '../support/codeServer';
import { repoRoot } from '../support/paths';
import { BAD_RANGE_YAML, BROKEN_MODEL_PY, BROKEN_YAML, DDP_YAML } from './workspaceFiles';

test('extension-host tests in code-server', { timeout: 660_000 }, async (t) => {
  const workspace = exampleWorkspace({
    'bad-range.qat.yaml': BAD_RANGE_YAML,
    'broken.qat.yaml': BROKEN_YAML,
    'broken_model.py': BROKEN_MODEL_PY,
    'ddp.qat.yaml': DDP_YAML,
  });
  const cs = await startCodeServer(workspace, { smokeTestDriver: true });
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
    await page.goto(devUrl(cs, workspace, path.join(repoRoot, 'out', 'test', 'ext', 'index.js')));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<number>(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error(`no exit code within 540 s; log:\n${lines.join('\n')}`)), 540_000)),
    );
    const code = await Promise.race([exit, timeout]).finally(() => clearTimeout(timer));
    const resultLine = lines.find((l) => l.includes('EXT-RESULT '));
    assert.ok(resultLine, `the extension-host runner printed no result (exit ${code}); log:\n${lines.join('\n')}`);
    const result = JSON.parse(resultLine.slice(resultLine.indexOf('EXT-RESULT ') + 11)) as {
      tests: Array<{ title: string; state: string; error?: string }>;
    };
    assert.ok(result.tests.length >= 4, `expected the whole suite, got ${result.tests.length} tests`);
    for (const r of result.tests) {
      await t.test(r.title, () => assert.equal(r.state, 'passed', r.error));
    }
    assert.equal(code, 0);
  } finally {
    await browser.close();
    await cs.stop();
  }
});
