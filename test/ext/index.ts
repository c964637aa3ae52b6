// Extension-host test runner (mocha), used inside code-server (CI) and by @vscode/test-electron (desktop).
// It prints one `EXT-RESULT {json}` line so the outer harness can count and name every test.
import path from 'node:path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 120_000, color: false, reporter: 'spec' });
  mocha.addFile(path.join(__dirname, 'extension.test.js'));
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
