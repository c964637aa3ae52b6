// The Runs view: every run the extension started, newest first, with its time, config, key figures and status.
// A click opens its results or report; two selected runs open side by side in the run comparison.
import path from 'node:path';
import * as vscode from 'vscode';
import type { RunRecord, RunStore } from '../runs/runStore';
import { runLabel, runTime } from '../runs/present';

const STATUS_ICON: Record<RunRecord['status'], vscode.ThemeIcon> = {
  running: new vscode.ThemeIcon('sync~spin'),
  done: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  failed: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
  cancelled: new vscode.ThemeIcon('circle-slash'),
};

export class RunsView implements vscode.TreeDataProvider<RunRecord>, vscode.Disposable {
  static readonly id = 'qatStudio.runs';
  private readonly changed = new vscode.EventEmitter<RunRecord | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly tree: vscode.TreeView<RunRecord>;
  private readonly sub: { dispose(): void };

  constructor(private readonly store: RunStore) {
    this.tree = vscode.window.createTreeView(RunsView.id, {
      treeDataProvider: this,
      canSelectMany: true,
      showCollapseAll: false,
    });
    this.sub = store.onDidChange(() => this.changed.fire(undefined));
  }

  getChildren(element?: RunRecord): RunRecord[] {
    return element ? [] : this.store.list();
  }

  getTreeItem(r: RunRecord): vscode.TreeItem {
    const item = new vscode.TreeItem(runLabel(r), vscode.TreeItemCollapsibleState.None);
    item.id = r.id;
    const figures = r.figures
      .slice(0, 3)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ');
    item.description = `${runTime(r)}${r.status === 'done' ? '' : ` · ${r.status}`}${figures ? ` · ${figures}` : ''}`;
    const tip = new vscode.MarkdownString();
    tip.appendMarkdown(`**${runLabel(r)}** — ${r.status}\n\n`);
    tip.appendText(`${runTime(r)}${r.seconds !== undefined ? `, ${r.seconds} s` : ''}\n${r.config}\n`);
    for (const [k, v] of r.figures) tip.appendText(`${k}: ${v}\n`);
    if (r.error) tip.appendText(`error: ${r.error}\n`);
    item.tooltip = tip;
    item.iconPath = STATUS_ICON[r.status];
    item.contextValue = r.kind === 'fix' ? 'run.fix' : r.report || r.result ? 'run.withReport' : 'run';
    item.command = { command: 'qatStudio.openRun', title: 'Open Run', arguments: [r] };
    return item;
  }

  /** The runs selected in the view (several with Ctrl/Shift-click). */
  selected(): RunRecord[] {
    return [...this.tree.selection];
  }

  dispose(): void {
    this.sub.dispose();
    this.tree.dispose();
    this.changed.dispose();
  }
}

/** Opens a run's results or report: its page where `openPage` has one for it (sensitivity, search), else its
 * report (.md in the Markdown preview, anything else with its editor; ONNX: the graph). */
export async function openRun(r?: RunRecord, openPage?: (r: RunRecord) => Promise<boolean>): Promise<void> {
  if (!r) return;
  if (openPage && (await openPage(r))) return;
  if (!r.report) {
    void vscode.window.showInformationMessage(
      `${runLabel(r)} (${r.status}): ${r.figures.map(([k, v]) => `${k} ${v}`).join(', ') || r.error || 'no figures'}`,
    );
    return;
  }
  const uri = vscode.Uri.file(r.report);
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    void vscode.window.showWarningMessage(`${path.basename(r.report)} is no longer there: run it again to rebuild it.`);
    return;
  }
  if (r.report.endsWith('.md')) await vscode.commands.executeCommand('markdown.showPreview', uri);
  else await vscode.commands.executeCommand('vscode.open', uri);
}
