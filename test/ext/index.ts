// Extension-host test runner (mocha), used inside code-server (CI) and by @vscode/test-electron (desktop).
// It prints one `EXT-RESULT {json}` line so the outer harness can count and name every test.
import path from 'node:path';
import Mocha from 'mocha';

/** Runs the given compiled test files of this folder in one mocha run. */
export function runFiles(files: string[], timeout = 120_000): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout, color: false, reporter: 'spec' });
  for (const f of files) mocha.addFile(path.join(__dirname, f));
  return new Promise((resolve, reject) => {
    const results: Array<{ title: string; state: string; error?: string }> = [];
    const runner = mocha.run((failures) => {
      console.log(
        `EXT-RESULT ${JSON.stringify({ passed: results.filter((r) => r.state === 'passed').length, failed: failures, tests: results })}`,
      );
      if (failures > 0) reject(new Error(`${failures} extension-host tests failed`));
      else resolve();
    });
    runner.on('pass', (t) => results.push({ title: t.fullTitle(), state: 'passed' }));
    runner.on('fail', (t, err: Error) =>
      results.push({ title: t.fullTitle(), state: 'failed', error: String(err?.stack ?? err) }),
    );
  });
}

export function run(): Promise<void> {
  return runFiles(['extension.test.js']);
}
