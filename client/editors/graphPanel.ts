// The graph view: a webview showing a model (ONNX or the kernel's graph JSON) with Q/DQ marked and layers coloured
// by compare results. Used for new panels (after Compare Layers) and for the custom editor, which hands us its panel.
import * as vscode from 'vscode';
import type { LayerHistograms, LayerResult, ObserverDrift } from '../../protocol/kernel';
import type { FromWebview, ModelAccuracy, StageResults, ToWebview } from '../../protocol/webview';
import { makeNonce, webviewHtml } from './html';
import { selectionSync, type SyncPeer } from './graphSync';
import type { SlimResult } from './slimOnnx';
import { SlimError, SlimService } from './slimService';
import { contentKey, layoutCache } from './layoutCache';
import { PanelLife, type ContentPanel } from './panelLife';

/** One worker thread slims every panel's model (started on first use, ended when idle). */
let slimService: SlimService | undefined;

export interface GraphContent {
  title: string;
  /** The model file's bytes: ONNX, or the kernel's graph JSON (*.qatgraph.json, named so in `title`). */
  onnx: Uint8Array;
  layers: LayerResult[];
  threshold: number;
  config?: string;
  /** Folder that relative source paths in the model resolve against. */
  baseDir?: string;
  /** analyze/histograms of the compared layers, for the properties panel. */
  histograms?: LayerHistograms[];
  /** Precision as executed by a runtime, per node name. */
  executed?: import('../../protocol/webview').ExecutedOverlay;
  /** Observer scale/zero-point over the QAT run (compare/layers' drift). */
  drift?: ObserverDrift;
  /** Top-1 accuracy of the model at each stage the run measured. */
  accuracy?: ModelAccuracy;
  /** Find Where INT8 Diverges' results over this graph (stage lanes and table), and its Markdown report, which
   * the page's button opens. */
  stages?: StageResults;
  stageReport?: string;
}

export class GraphPanel implements vscode.Disposable, SyncPeer, ContentPanel<GraphContent, ToWebview> {
  static readonly viewType = 'qatStudio.graph';
  /** Every post goes through it: none reaches a closed panel (VS Code would throw "Webview is disposed"). */
  private readonly life: PanelLife<ToWebview>;
  private disposables: vscode.Disposable[] = [];
  private readonly rendered = new vscode.EventEmitter<Extract<FromWebview, { type: 'rendered' }>>();
  readonly onDidRender = this.rendered.event;
  /** What the page last drew (its 'rendered' message): undefined before its first graph. */
  lastRender: Extract<FromWebview, { type: 'rendered' }> | undefined;
  /** Settles the wait for the page's next draw: true when it drew, false when it failed or the panel closed. */
  private drawWaiters: Array<(drew: boolean) => void> = [];
  /** The Markdown report of the stages shown: the only file the page's "Open Markdown Report" opens. */
  private stageReport: string | undefined;

  static create(extensionUri: vscode.Uri, title: string, log: vscode.LogOutputChannel): GraphPanel {
    const panel = vscode.window.createWebviewPanel(GraphPanel.viewType, title, vscode.ViewColumn.Active, {
      retainContextWhenHidden: true,
    });
    return new GraphPanel(panel, extensionUri, title, log);
  }

  static webviewRoot(extensionUri: vscode.Uri): vscode.Uri {
    return vscode.Uri.joinPath(extensionUri, 'out', 'webview');
  }

  constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    title: string,
    private log: vscode.LogOutputChannel,
  ) {
    const webviewRoot = GraphPanel.webviewRoot(extensionUri);
    const webview = panel.webview;
    webview.options = { enableScripts: true, localResourceRoots: [webviewRoot] };
    this.life = new PanelLife((m) => webview.postMessage(m));
    this.life.onDisposed(() => this.settleDraw(false));
    this.disposables.push(
      webview.onDidReceiveMessage((m: FromWebview) => {
        if (m.type === 'ready') this.life.pageReady();
        else if (m.type === 'rendered') {
          this.log.info(`graph rendered: ${m.nodes} nodes, ${m.qdq} Q/DQ, ${m.coloured} coloured`);
          this.lastRender = m;
          this.rendered.fire(m);
          this.settleDraw(true);
        } else if (m.type === 'layoutComputed') {
          const { contentKey: key, options, boxes, width, height } = m;
          layoutCache.put(key, { options, boxes, width, height });
        } else if (m.type === 'error') {
          this.log.error(`graph view: ${m.message}`);
          this.settleDraw(false);
        } else if (m.type === 'export') void this.saveExport(m);
        else if (m.type === 'selected') selectionSync.relay(this, m);
        else if (m.type === 'openStageReport') void this.openStageReport();
        else if (m.type === 'revealSource') {
          const line = Math.max(0, m.line - 1);
          void vscode.window.showTextDocument(vscode.Uri.file(m.file), {
            selection: new vscode.Range(line, 0, line, 0),
            viewColumn: vscode.ViewColumn.Beside,
            preserveFocus: true,
          });
        }
      }),
    );
    webview.html = webviewHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      title,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(webviewRoot, 'main.js')).toString(),
    });
    panel.onDidDispose(() => this.dispose(), null, this.disposables);
  }

  /** The user closed the panel (or it was disposed): posts to it are dropped. */
  get disposed(): boolean {
    return this.life.disposed;
  }

  reveal(): void {
    if (!this.disposed) this.panel.reveal(undefined, true);
  }

  /** Resolves when the page next draws a graph (true), shows an error or the panel closes (false). */
  drawn(): Promise<boolean> {
    if (this.disposed) return Promise.resolve(false);
    return new Promise((resolve) => this.drawWaiters.push(resolve));
  }

  private settleDraw(drew: boolean): void {
    for (const w of this.drawWaiters.splice(0)) w(drew);
  }

  /** Selecting a node here selects its counterpart in the other views joined under the same key, and back. */
  syncSelectionWith(key: string): void {
    this.disposables.push(selectionSync.join(this, key));
  }

  /** Posts once the page is ready; false when the panel is closed (never throws for that). */
  post(message: ToWebview): Promise<boolean> {
    return this.life.post(message);
  }

  async show(content: GraphContent): Promise<void> {
    if (this.disposed) return;
    // Weights the view never reads stay here (the webview reads values of tensors up to 1,024 elements); the
    // properties panel gets their summaries instead. Graph JSON holds no weights: it goes as it is.
    // Slimming parses the user's file: it runs in a worker thread with time and memory limits, never here. A file
    // it cannot read (MalformedOnnxError) or that hits a limit is reported here and never reaches the view whole.
    let slim: SlimResult | undefined;
    if (!/\.qatgraph\.json$/i.test(content.title)) {
      slimService ??= new SlimService(vscode.Uri.joinPath(this.extensionUri, 'out', 'client', 'slimWorker.js').fsPath);
      try {
        slim = await slimService.slim(content.onnx);
      } catch (err) {
        if (!(err instanceof SlimError)) throw err;
        this.log.error(`graph view: ${content.title}: ${err.message}`);
        await this.showError(`Cannot show ${content.title}: ${err.message} The file was not changed.`);
        return;
      }
    }
    this.stageReport = content.stageReport;
    // Graph JSON goes as read. The file system API can give a Node Buffer (a remote extension host's, code-server's),
    // whose toJSON turns it into {type, data} before VS Code's message serializer sees a typed array: the webview got
    // no bytes. A plain Uint8Array over the same memory travels as one.
    const raw = content.onnx;
    const onnx = slim ? slim.bytes : new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
    const key = contentKey(onnx);
    const layouts = layoutCache.get(key);
    const msg: ToWebview = {
      type: 'showGraph',
      contentKey: key,
      ...(layouts.length ? { layouts } : {}),
      title: content.title,
      layers: content.layers,
      threshold: content.threshold,
      config: content.config,
      onnx,
      baseDir: content.baseDir,
      ...(slim?.removed.size ? { weights: Object.fromEntries(slim.removed) } : {}),
      ...(content.histograms?.length ? { histograms: content.histograms } : {}),
      ...(content.drift ? { drift: content.drift } : {}),
      ...(content.executed ? { executed: content.executed } : {}),
      ...(content.accuracy ? { accuracy: content.accuracy } : {}),
      ...(content.stages ? { stages: content.stages } : {}),
    };
    await this.post(msg);
  }

  /** Asks where to save an export from the webview and writes it (base64 for PNG). */
  private async saveExport(m: Extract<FromWebview, { type: 'export' }>): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      defaultUri: folder ? vscode.Uri.joinPath(folder, m.fileName) : undefined,
      filters: { [m.format.toUpperCase()]: [m.format === 'html' ? 'html' : m.format] },
    });
    if (!target) return;
    const bytes = m.format === 'png' ? Buffer.from(m.data, 'base64') : Buffer.from(m.data, 'utf8');
    await vscode.workspace.fs.writeFile(target, bytes);
    this.log.info(`exported ${m.format} to ${target.fsPath} (${bytes.byteLength} bytes)`);
  }

  /** The stage report beside the graph, as a Markdown preview. */
  private async openStageReport(): Promise<void> {
    if (!this.stageReport) return;
    await vscode.commands.executeCommand('markdown.showPreviewToSide', vscode.Uri.file(this.stageReport));
  }

  async showError(message: string): Promise<void> {
    await this.post({ type: 'error', message });
  }

  dispose(): void {
    this.life.disposedNow();
    this.rendered.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
  }
}
