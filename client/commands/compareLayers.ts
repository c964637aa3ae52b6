// QAT: Compare Layers — runs compare/layers in the kernel with progress and cancel, then shows the graph.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import type { CompareLayersResult } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
import { GraphPanel, type GraphContent } from '../editors/graphPanel';
import { ReopeningPanel } from '../editors/panelLife';
import type { LayerContext, ToWebview } from '../../protocol/webview';
import { compareFigures } from '../runs/figures';
import { configFor } from './configPick';
import { reportKernelError } from './errors';
import { findLayer, layerSummary } from './layerSummary';

/** The graph's "Compare This Layer": compare/layers on the node's config (the kernel reuses the trained
 * model), the results view with the layer selected, and its figures in a notification. */
export function compareLayer(ctx: Ctx) {
  return async (c: LayerContext = {}): Promise<{ result: CompareLayersResult; summary?: string } | undefined> => {
    if (!c.module || !c.config) {
      void vscode.window.showWarningMessage('This node has no module or config to compare.');
      return undefined;
    }
    const result = await compareLayers(ctx)(vscode.Uri.file(c.config), c.module);
    if (!result) return undefined;
    const layer = findLayer(result, c.module);
    if (!layer) {
      void vscode.window.showInformationMessage(
        `${c.module} is not a quantized layer of ${path.basename(c.config)}: nothing to compare.`,
      );
      return { result };
    }
    const summary = layerSummary(result, layer);
    ctx.log.info(`compare ${c.module}: ${summary}`);
    void vscode.window.showInformationMessage(summary);
    return { result, summary };
  };
}

/**
 * `focus`: a module path; the results view then selects that layer and its figures are shown. Menus call the
 * command with more arguments than the file (the explorer adds the selected URIs, the editor title its group):
 * anything but a string is not a focus.
 */
/** The kernel's result and the graph view showing it (its lastRender: what the page last drew). */
export type CompareLayersShown = CompareLayersResult & { view?: GraphPanel };

export function compareLayers(ctx: Ctx) {
  return async (uri?: vscode.Uri, focusArg?: unknown): Promise<CompareLayersShown | undefined> => {
    const focus = typeof focusArg === 'string' && focusArg ? focusArg : undefined;
    const config = await configFor(uri instanceof vscode.Uri ? uri : undefined);
    if (!config) {
      void vscode.window.showWarningMessage(
        'No QAT config (*.qat.yaml) found. Create one next to your model to compare layers.',
      );
      return undefined;
    }
    ctx.log.info(`compare/layers ${config.fsPath}`);
    let run: string | undefined;
    try {
      const result = await ctx.trackRun(
        'compare',
        config.fsPath,
        () =>
          vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: 'QAT: Compare Layers', cancellable: true },
            async (progress, token) => {
              let last = 0;
              return ctx.kernel.request(
                'compare/layers',
                { config: config.fsPath },
                {
                  token,
                  onProgress: (p) => {
                    const fraction = p.fraction ?? last;
                    progress.report({ message: p.message, increment: Math.max(0, (fraction - last) * 100) });
                    last = Math.max(last, fraction);
                    ctx.log.info(`[${p.stage}] ${p.message}`);
                  },
                },
              );
            },
          ),
        compareFigures,
        { onRecord: (r) => (run = r.id) },
      );
      ctx.log.info(
        `compare/layers done in ${result.seconds?.toFixed(1)} s: FP32 ${(result.accuracy.fp32 * 100).toFixed(2)} %, INT8 ${(result.accuracy.int8 * 100).toFixed(2)} %`,
      );
      for (const l of result.layers)
        ctx.log.info(`  ${l.module.padEnd(16)} cos ${l.cosine.toFixed(5)}  SQNR ${l.sqnr.toFixed(2)} dB`);
      const title = `Layers: ${path.basename(config.fsPath)}`;
      const open = () => ctx.track(GraphPanel.create(ctx.extensionUri, title, ctx.log));
      const panel = open();
      // The results outlive their panel: a layer clicked in the Layers view after the tab was closed reopens them.
      const results = new ReopeningPanel<GraphContent, ToWebview>(open, panel);
      ctx.layersView.show({
        config: config.fsPath,
        threshold: result.threshold,
        layers: result.layers,
        accuracy: result.accuracy,
        results,
        run,
      });
      if (result.onnx.path) {
        ctx.onnxEditor.overlays.set(result.onnx.path, {
          layers: result.layers,
          threshold: result.threshold,
          config: config.fsPath,
        });
        // Histograms of the same trained model (reused by the kernel) for the selected layer; optional.
        const histograms = await ctx.kernel
          .request('analyze/histograms', { config: config.fsPath })
          .then((h) => h.layers)
          .catch((err: Error) => {
            ctx.log.warn(`analyze/histograms: ${err.message}`);
            return undefined;
          });
        await results.show({
          title,
          onnx: await readFile(result.onnx.path),
          layers: result.layers,
          threshold: result.threshold,
          config: config.fsPath,
          histograms,
          drift: result.drift,
          accuracy: result.accuracy,
        });
        if (focus) await results.post({ type: 'selectCounterpart', name: '', op: '', module: focus });
      } else if (result.flow === 'torchao' && result.graph) {
        // torchao's quantized modules have no QDQ ONNX export: the layers are shown on the FP32 model's graph,
        // whose nodes carry the same module paths.
        await results.show({
          // the file's name: graph JSON goes to the view as it is (an .onnx would be slimmed first)
          title: path.basename(result.graph),
          onnx: await readFile(result.graph),
          layers: result.layers,
          threshold: result.threshold,
          config: config.fsPath,
          accuracy: result.accuracy,
        });
        if (focus) await results.post({ type: 'selectCounterpart', name: '', op: '', module: focus });
      } else {
        await panel.showError(`The INT8 model could not be exported to ONNX: ${result.onnx.error ?? 'unknown reason'}`);
      }
      return { ...result, view: panel };
    } catch (err) {
      await reportKernelError(err, 'Compare Layers', ctx.log);
      return undefined;
    }
  };
}
