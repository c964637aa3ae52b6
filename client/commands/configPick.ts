// Which QAT config a command acts on.
import path from 'node:path';
import * as vscode from 'vscode';

/** The config for a clicked file: itself if it is a config, else a *.qat.yaml beside it, else one in the workspace.
 * From the palette: the active editor's, else the one config an editor shows (a webview such as the walkthrough or
 * a results page can hold the focus while the config stays in view). */
export async function configFor(uri: vscode.Uri | undefined): Promise<vscode.Uri | undefined> {
  const shown = vscode.window.visibleTextEditors
    .map((e) => e.document.uri)
    .filter((u) => u.scheme === 'file' && /\.qat\.ya?ml$/i.test(u.fsPath));
  const target =
    uri ??
    vscode.window.activeTextEditor?.document.uri ??
    (new Set(shown.map(String)).size === 1 ? shown[0] : undefined);
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

/** A command's options object from its arguments: menus pass more arguments than the file (the explorer its selected
 * URIs), so only a plain object counts. */
export function commandOptions<T extends object>(arg: unknown): Partial<T> {
  return arg && typeof arg === 'object' && !Array.isArray(arg) && !(arg instanceof vscode.Uri) ? (arg as T) : {};
}

async function pick(uris: vscode.Uri[]): Promise<vscode.Uri | undefined> {
  const item = await vscode.window.showQuickPick(
    uris.map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u })),
    // Kept open when focus moves (a webview taking focus back as the palette closes would dismiss it).
    { placeHolder: 'Which QAT config?', ignoreFocusOut: true },
  );
  return item?.uri;
}
