// The Layers view: the last comparison's layers, worst first; a click selects the layer in the results view
// and reveals its definition in the source; the wrench applies the fix, and hovering a row says which and why.
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import type { LayerResult } from '../../protocol/kernel';
import type { GraphPanel } from '../editors/graphPanel';
import { suggestFix } from '../fix/suggestFix';

export interface Comparison {
  config: string;
  threshold: number;
  layers: LayerResult[];
  panel?: GraphPanel;
  /** The id of the compare run it came from (its record holds the config text and the model). */
  run?: string;
}

export class LayersView implements vscode.TreeDataProvider<LayerResult>, vscode.Disposable {
  static readonly id = 'qatStudio.layers';
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly tree: vscode.TreeView<LayerResult>;
  last?: Comparison;

  constructor() {
    this.tree = vscode.window.createTreeView(LayersView.id, { treeDataProvider: this });
  }

  show(c: Comparison): void {
    this.last = c;
    this.tree.message = `${vscode.workspace.asRelativePath(c.config)}: ${c.layers.length} layers, worst first`;
    this.changed.fire(undefined);
  }

  getChildren(element?: LayerResult): LayerResult[] {
    if (element || !this.last) return [];
    return [...this.last.layers].sort((a, b) => a.cosine - b.cosine);
  }

  getTreeItem(l: LayerResult): vscode.TreeItem {
    const item = new vscode.TreeItem(l.module, vscode.TreeItemCollapsibleState.None);
    item.id = l.module;
    item.description = `cos ${l.cosine.toFixed(5)} · SQNR ${l.sqnr.toFixed(2)} dB · ${l.op}`;
    const bad = this.last && l.cosine < this.last.threshold;
    item.iconPath = bad
      ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'))
      : new vscode.ThemeIcon('symbol-class');
    // The tooltip (with the fix Apply Fix would write, in full) is made on hover: resolveTreeItem.
    item.contextValue = 'layer';
    item.command = { command: 'qatStudio.revealLayer', title: 'Reveal Layer', arguments: [l] };
    return item;
  }

  /** On hover: the layer's figures, then the fix Apply Fix would write for it and why, in full. */
  async resolveTreeItem(item: vscode.TreeItem, l: LayerResult): Promise<vscode.TreeItem> {
    const tip = new vscode.MarkdownString('', true);
    tip.appendMarkdown(`**${l.module}** (${l.group.join('+')})\n\n`);
    tip.appendText(
      `cosine ${l.cosine.toFixed(5)}, SQNR ${l.sqnr.toFixed(2)} dB` +
        `${l.local ? `, local SQNR ${l.local.sqnr.toFixed(2)} dB` : ''}, MSE ${l.mse.toExponential(2)}` +
        `${l.source ? `\n${l.source.file}:${l.source.line}` : ''}`,
    );
    const last = this.last;
    if (last) {
      try {
        const open = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === last.config);
        const s = suggestFix(open?.getText() ?? (await readFile(last.config, 'utf8')), last.layers, l.module);
        const others = s.modules.length - 1;
        tip.appendMarkdown(
          `\n\n---\n\n$(wrench) **Apply Fix**: ${s.label}${others ? ` (with ${others} more layers that lose as much)` : ''}\n\n`,
        );
        tip.appendText(s.reason);
      } catch {
        // No fix to describe (the config is gone or no longer has this layer): the figures alone.
      }
    }
    item.tooltip = tip;
    return item;
  }

  dispose(): void {
    this.tree.dispose();
    this.changed.dispose();
  }
}

/** Selects the layer in the last results view (when still open) and opens its source line. */
export function revealLayer(view: LayersView) {
  return async (l?: LayerResult): Promise<void> => {
    if (!l) return;
    const last = view.last;
    last?.panel?.post({ type: 'selectCounterpart', name: '', op: '', module: l.module });
    if (l.source)
      await vscode.commands.executeCommand('qatStudio.revealLayerSource', {
        module: l.module,
        config: last?.config,
        sourceFile: l.source.file,
        sourceLine: l.source.line,
      });
  };
}
