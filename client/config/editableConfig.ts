// Which files the editor actions that write overrides (Keep This Layer in FP16, Apply Fix) may edit: a QAT config
// (*.qat.yaml) that is a regular file inside one of the workspace's folders, symlinks resolved, in a trusted
// workspace. The path they get comes from a view's context (a graph JSON's own `config` field, for one), which a
// planted file can point anywhere: it is checked here, never trusted.
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';

const CONFIG = /\.qat\.ya?ml$/i;

/** Why `file` may not be edited, or undefined when it may. */
export async function refuseConfigEdit(file: string): Promise<string | undefined> {
  const name = path.basename(file);
  if (!vscode.workspace.isTrusted) return `QAT Studio edits ${name} only in a trusted workspace.`;
  if (!CONFIG.test(file)) return `${name} is not a QAT config (*.qat.yaml): it is not edited.`;
  const real = await realpath(file).catch(() => undefined);
  if (!real || !CONFIG.test(real)) return `${file} is not a QAT config in this workspace: it is not edited.`;
  const info = await stat(real).catch(() => undefined);
  if (!info?.isFile()) return `${file} is not a regular file: it is not edited.`;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const root = await realpath(folder.uri.fsPath).catch(() => folder.uri.fsPath);
    const rel = path.relative(root, real);
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return undefined;
  }
  return `${file} is outside the workspace's folders: QAT Studio edits only configs inside them.`;
}
