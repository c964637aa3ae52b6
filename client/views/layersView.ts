// The Layers view: the last comparison's layers, worst first; a click selects the layer in the results view
// and reveals its definition in the source.
import * as vscode from 'vscode';
import type { LayerResult } from '../../protocol/kernel';
import type { ToWebview } from '../../protocol/webview';
import type { ReopeningPanel } from '../editors/panelLife';

export interface Comparison {
  config: string;
  threshold: number;
  layers: LayerResult[];
  /** The results view: reopened with the same results when a layer is clicked after its tab was closed. */
  results?: Pick<ReopeningPanel<unknown, ToWebview>, 'post'>;
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
    item.tooltip = `${l.module} (${l.group.join('+')}): cosine ${l.cosine.toFixed(5)}, SQNR ${l.sqnr.toFixed(2)} dB, MSE ${l.mse.toExponential(2)}${l.source ? `\n${l.source.file}:${l.source.line}` : ''}`;
    item.contextValue = 'layer';
    item.command = { command: 'qatStudio.revealLayer', title: 'Reveal Layer', arguments: [l] };
    return item;
  }

  dispose(): void {
    this.tree.dispose();
    this.changed.dispose();
  }
}

/** Selects the layer in the last results view (reopened when it was closed) and opens its source line. */
export function revealLayer(view: LayersView, log?: vscode.LogOutputChannel) {
  return async (l?: LayerResult): Promise<void> => {
    if (!l) return;
    const last = view.last;
    try {
      await last?.results?.post({ type: 'selectCounterpart', name: '', op: '', module: l.module });
    } catch (err) {
      // The source line still opens; the results view is a convenience here.
      log?.warn(`results view: ${(err as Error).message}`);
    }
    if (l.source)
      await vscode.commands.executeCommand('qatStudio.revealLayerSource', {
        module: l.module,
        config: last?.config,
        sourceFile: l.source.file,
        sourceLine: l.source.line,
      });
  };
}
