// The Layers view: the last comparison's layers, worst first; a click selects the layer in the results view
// and reveals its definition in the source; the wrench applies the fix, and hovering a row says which and why.
import * as vscode from 'vscode';
import type { LayerResult } from '../../protocol/kernel';
import type { ModelAccuracy, ToWebview } from '../../protocol/webview';
import type { ReopeningPanel } from '../editors/panelLife';
import { bandOf } from '../../common/bands';
import { suggestFix } from '../fix/suggestFix';
import { LIMITS, readWorkspaceFile } from '../../common/workspaceFile';

export interface Comparison {
  config: string;
  threshold: number;
  layers: LayerResult[];
  accuracy?: ModelAccuracy;
  /** The results view: reopened with the same results when a layer is clicked after its tab was closed. */
  results?: Pick<ReopeningPanel<unknown, ToWebview>, 'post'>;
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
    const below = c.layers.filter((l) => l.cosine < c.threshold).length;
    const a = c.accuracy;
    const pct = (v: number) => `${(v * 100).toFixed(2)} %`;
    // The model's accuracy first: layers under the threshold in a model that lost nothing are not alarms.
    const accuracy =
      a?.fp32 !== undefined && a.int8 !== undefined ? `INT8 ${pct(a.int8)} vs FP32 ${pct(a.fp32)}; ` : '';
    this.tree.message =
      `${vscode.workspace.asRelativePath(c.config)}: ${accuracy}${c.layers.length} layers, lowest cosine first` +
      (below ? `, ${below} below ${c.threshold}` : '');
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
    // Coloured by the layer's own cosine against the threshold, in the results view's bands.
    item.iconPath = new vscode.ThemeIcon(
      'circle-filled',
      new vscode.ThemeColor(bandColour(l.cosine, this.last?.threshold ?? 0.99)),
    );
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
        const s = suggestFix(
          open?.getText() ?? (await readWorkspaceFile(last.config, LIMITS.config)),
          last.layers,
          l.module,
        );
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

/** The theme colour (charts.yellow) of the results view's band for a cosine: common/bands.ts, one source. */
export function bandColour(cosine: number, threshold: number): string {
  const css = bandOf(cosine, threshold).colour;
  return /--vscode-([a-zA-Z]+)-([a-zA-Z]+)/.exec(css)?.slice(1).join('.') ?? 'foreground';
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
