// Which QAT config a command acts on.
import path from 'node:path';
import * as vscode from 'vscode';

/** The config for a clicked file: itself if it is a config, else a *.qat.yaml beside it, else one in the workspace. */
export async function configFor(uri: vscode.Uri | undefined): Promise<vscode.Uri | undefined> {
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (target && /\.qat\.ya?ml$/i.test(target.fsPath)) return target;
  if (target) {
    const folder = vscode.Uri.file(path.dirname(target.fsPath));
    const beside = (await vscode.workspace.fs.readDirectory(folder))
      .filter(([n]) => /\.qat\.ya?ml$/i.test(n))
      .map(([n]) => vscode.Uri.joinPath(folder, n));
    if (beside.length === 1) return beside[0];
    if (beside.length > 1) return pick(beside);
  }
  const all = await vscode.workspace.findFiles('**/*.qat.{yaml,yml}', '**/node_modules/**', 50);
  return all.length <= 1 ? all[0] : pick(all);
}

async function pick(uris: vscode.Uri[]): Promise<vscode.Uri | undefined> {
  const item = await vscode.window.showQuickPick(
    uris.map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u })),
    // Kept open when focus moves (a webview taking focus back as the palette closes would dismiss it).
    { placeHolder: 'Which QAT config?', ignoreFocusOut: true },
  );
  return item?.uri;
}
