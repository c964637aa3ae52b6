// Runs inside a real VS Code extension host with the example workspace open (see test/e2e/extensionHost.test.ts).
import assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'qat-studio.qat-studio';

function waitForDiagnostics(uri: vscode.Uri, predicate: (d: readonly vscode.Diagnostic[]) => boolean, timeoutMs = 20_000) {
  return new Promise<readonly vscode.Diagnostic[]>((resolve, reject) => {
    const check = () => {
      const d = vscode.languages.getDiagnostics(uri);
      if (predicate(d)) { sub.dispose(); clearTimeout(timer); resolve(d); return true; }
      return false;
    };
    const sub = vscode.languages.onDidChangeDiagnostics((e) => { if (e.uris.some((u) => u.toString() === uri.toString())) check(); });
    const timer = setTimeout(() => { sub.dispose(); reject(new Error(`diagnostics for ${uri} never matched: ${JSON.stringify(vscode.languages.getDiagnostics(uri))}`)); }, timeoutMs);
    check();
  });
}

describe('QAT Studio in the extension host', () => {
  const ws = () => vscode.workspace.workspaceFolders![0].uri;

  it('activates and registers its commands', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, 'extension not found');
    await ext.activate();
    const commands = await vscode.commands.getCommands(true);
    for (const id of ['qatStudio.compareLayers', 'qatStudio.showKernelInfo', 'qatStudio.restartKernel']) assert.ok(commands.includes(id), id);
  });

  it('publishes QCFG001 for a quant_max outside quint8, and clears it after the fix', async () => {
    const uri = vscode.Uri.joinPath(ws(), 'bad-range.qat.yaml');
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    const diags = await waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'QCFG001'));
    const hit = diags.find((x) => x.code === 'QCFG001')!;
    assert.equal(hit.message, 'quant_max 300 is outside the range of quint8 (0..255).');
    assert.equal(doc.getText(hit.range), '300');
    await editor.edit((e) => e.replace(hit.range, '255'));
    await waitForDiagnostics(uri, (d) => d.length === 0);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });

  it('publishes QAT001 for prepare_qat after eval() in a Python script, none for the example script', async () => {
    const doc = await vscode.workspace.openTextDocument({ language: 'python', content: 'from torch.ao.quantization import prepare_qat\nmodel.eval()\nmodel = prepare_qat(model)\n' });
    const diags = await waitForDiagnostics(doc.uri, (d) => d.length > 0);
    assert.deepEqual(diags.map((d) => d.code), ['QAT001']);
    const script = vscode.Uri.joinPath(ws(), 'qat_train.py');
    await vscode.workspace.openTextDocument(script);
    // The first publish for an opened document is its full analysis; the clean example must have none.
    await waitForDiagnostics(script, () => true, 100).catch(() => undefined);
    await new Promise<void>((resolve) => {
      const sub = vscode.languages.onDidChangeDiagnostics((e) => { if (e.uris.some((u) => u.toString() === script.toString())) { sub.dispose(); resolve(); } });
      setTimeout(() => { sub.dispose(); resolve(); }, 3000);
    });
    assert.deepEqual(vscode.languages.getDiagnostics(script).filter((d) => d.source === 'qat-studio'), []);
  });

  it('QAT: Show Kernel Info starts the real kernel and reports torch and torchao', async () => {
    const info = await vscode.commands.executeCommand<{ python: string; packages: Record<string, { version: string | null }> }>('qatStudio.showKernelInfo');
    assert.ok(info, 'no kernel info returned');
    assert.match(info.python, /^3\.\d+/);
    assert.match(info.packages.torch.version ?? '', /^2\.13\.0/);
    assert.ok(info.packages.torchao.version, 'torchao missing');
  });
});
