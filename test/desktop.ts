// `npm run test:desktop`: the extension-host suite (test/ext) in a desktop VS Code via @vscode/test-electron.
// It downloads VS Code unless VSCODE_EXECUTABLE points at an installed one. CI runs the same suite in code-server.
import { mkdtempSync, cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { BAD_RANGE_YAML, BROKEN_MODEL_PY, BROKEN_YAML } from './e2e/workspaceFiles';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  const workspace = mkdtempSync(path.join(tmpdir(), 'qat-desktop-'));
  cpSync(path.join(root, 'examples', 'digits'), workspace, { recursive: true });
  writeFileSync(path.join(workspace, 'bad-range.qat.yaml'), BAD_RANGE_YAML);
  writeFileSync(path.join(workspace, 'broken.qat.yaml'), BROKEN_YAML);
  writeFileSync(path.join(workspace, 'broken_model.py'), BROKEN_MODEL_PY);
  await runTests({
    extensionDevelopmentPath: root,
    extensionTestsPath: path.join(root, 'out', 'test', 'ext', 'index.js'),
    vscodeExecutablePath: process.env.VSCODE_EXECUTABLE || undefined,
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
