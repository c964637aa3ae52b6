// Read-only custom editor for .onnx and .qatgraph.json files (the kernel's graph JSON): opening one in the explorer
// shows its graph, with the overlay of the last Compare Layers run that exported this file, if any.
import * as vscode from 'vscode';
import type { LayerResult } from '../../protocol/kernel';
import { GraphPanel } from './graphPanel';
import { syncKey } from './graphSync';
import { findExecutedOverlay } from './executedOverlay';
import type { ExecutedOverlay } from '../../protocol/webview';

export interface LayerOverlay {
  layers: LayerResult[];
  threshold: number;
  config: string;
}

export class OnnxEditorProvider implements vscode.CustomReadonlyEditorProvider {
  static readonly viewType = 'qatStudio.onnxViewer';
  /** Results of the latest compare/layers per exported ONNX file (fsPath). */
  readonly overlays = new Map<string, LayerOverlay>();

  constructor(
    private extensionUri: vscode.Uri,
    private log: vscode.LogOutputChannel,
  ) {}

  register(): vscode.Disposable {
    return vscode.window.registerCustomEditorProvider(OnnxEditorProvider.viewType, this, {
      webviewOptions: { retainContextWhenHidden: true },
      supportsMultipleEditorsPerDocument: true,
    });
  }

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): void {
    // VS Code shows the webview only after this returns, so the content is sent once the page says it is ready.
    void this.load(document, panel).catch((err) =>
      this.log.error(`opening ${document.uri.fsPath}: ${(err as Error).stack ?? err}`),
    );
  }

  private async load(document: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    const name = document.uri.path.split('/').pop() ?? 'model.onnx';
    const view = new GraphPanel(panel, this.extensionUri, name, this.log);
    // The FP32, fake-quant and INT8 graphs (and the QDQ ONNX) of one model follow each other's selection.
    view.syncSelectionWith(syncKey(document.uri.toString()));
    let bytes: Uint8Array;
    try {
      bytes = await vscode.workspace.fs.readFile(document.uri);
    } catch (err) {
      await view.showError(`Cannot read ${name}: ${(err as Error).message}`);
      return;
    }
    const overlay = this.overlays.get(document.uri.fsPath);
    const executed = await this.executed(document.uri);
    this.log.info(
      `opening ${document.uri.fsPath} (${bytes.byteLength} bytes${overlay ? `, ${overlay.layers.length} compared layers` : ''})`,
    );
    await view.show({
      title: name,
      onnx: bytes,
      layers: overlay?.layers ?? [],
      threshold: overlay?.threshold ?? 0.99,
      config: overlay?.config,
      baseDir: document.uri.scheme === 'file' ? vscode.Uri.joinPath(document.uri, '..').fsPath : undefined,
      executed,
    });
  }

  /** Precision as executed, from the newest build report (ONNX Runtime or TVM) that describes the file. */
  private async executed(uri: vscode.Uri): Promise<ExecutedOverlay | undefined> {
    if (uri.scheme !== 'file') return undefined;
    const found = await findExecutedOverlay(uri.fsPath);
    if (found) this.log.info(`${uri.fsPath}: precision as executed by ${found.overlay.runtime} from ${found.from}`);
    return found?.overlay;
  }
}
