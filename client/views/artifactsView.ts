// The Artifacts view: what the kernel exported and built under out/ — ONNX files, .pt2 programs, TVM libraries
// and C deploy folders — with open and reveal actions; it follows the folder as builds write into it.
import path from 'node:path';
import * as vscode from 'vscode';
import { artifactKind, type ArtifactKind } from '../runs/artifacts';

export interface Artifact {
  uri: vscode.Uri;
  kind: ArtifactKind;
  folder: boolean;
}

const ICONS: Record<ArtifactKind, string> = {
  onnx: 'type-hierarchy',
  pt2: 'package',
  tvm: 'library',
  deploy: 'folder-library',
};

export class ArtifactsView implements vscode.TreeDataProvider<Artifact>, vscode.Disposable {
  static readonly id = 'qatStudio.artifacts';
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    this.disposables.push(vscode.window.createTreeView(ArtifactsView.id, { treeDataProvider: this }));
    const watcher = vscode.workspace.createFileSystemWatcher('**/out/**');
    let pending: NodeJS.Timeout | undefined;
    const refresh = () => {
      clearTimeout(pending);
      pending = setTimeout(() => this.changed.fire(undefined), 300);
    };
    this.disposables.push(watcher, watcher.onDidCreate(refresh), watcher.onDidDelete(refresh), this.changed);
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(element?: Artifact): Promise<Artifact[]> {
    if (element) return [];
    const found: Artifact[] = [];
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const out = vscode.Uri.joinPath(folder.uri, 'out');
      await walk(out, '', 0, found);
    }
    return found.sort((a, b) => a.kind.localeCompare(b.kind) || a.uri.fsPath.localeCompare(b.uri.fsPath));
  }

  getTreeItem(a: Artifact): vscode.TreeItem {
    const item = new vscode.TreeItem(a.uri, vscode.TreeItemCollapsibleState.None);
    item.label = path.basename(a.uri.fsPath);
    item.description = `${a.kind} · ${vscode.workspace.asRelativePath(path.dirname(a.uri.fsPath))}`;
    item.iconPath = new vscode.ThemeIcon(ICONS[a.kind]);
    item.contextValue = `artifact.${a.kind}`;
    item.command = { command: 'qatStudio.openArtifact', title: 'Open', arguments: [a] };
    return item;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

async function walk(dir: vscode.Uri, rel: string, depth: number, found: Artifact[]): Promise<void> {
  let entries: Array<[string, vscode.FileType]>;
  try {
    entries = await vscode.workspace.fs.readDirectory(dir);
  } catch {
    return;
  }
  for (const [name, type] of entries) {
    const r = rel ? `${rel}/${name}` : name;
    const uri = vscode.Uri.joinPath(dir, name);
    const kind = artifactKind(r);
    if (kind && kind.folder === (type === vscode.FileType.Directory)) found.push({ uri, ...kind });
    if (type === vscode.FileType.Directory && depth < 2 && !kind?.folder) await walk(uri, r, depth + 1, found);
  }
}

/** A file opens in its editor (ONNX in the graph view); a deploy folder is revealed in the explorer. */
export async function openArtifact(a?: Artifact | vscode.Uri): Promise<void> {
  if (!a) return;
  const art = a instanceof vscode.Uri ? { uri: a, folder: false } : a;
  if (art.folder) await vscode.commands.executeCommand('revealInExplorer', art.uri);
  else await vscode.commands.executeCommand('vscode.open', art.uri);
}

export async function revealArtifact(a?: Artifact | vscode.Uri): Promise<void> {
  if (!a) return;
  await vscode.commands.executeCommand('revealInExplorer', a instanceof vscode.Uri ? a : a.uri);
}
