// QAT: Find Where INT8 Diverges — runs compare/stages (FP32, fake-quant, PyTorch INT8, ONNX Runtime, the C runner
// and TVM compared at every quantized layer), shows the results over the QDQ ONNX graph it ran (stage lanes on the
// nodes, the stage table, the first divergence selected) and says where the stages that should agree first part,
// with buttons to that layer's source line and to the kernel's Markdown report.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import type { CompareStagesResult } from '../../protocol/kernel';
import type { StageResults } from '../../protocol/webview';
import type { Ctx } from '../ctx';
import { GraphPanel } from '../editors/graphPanel';
import { commandOptions, configFor } from './configPick';
import { reportKernelError } from './errors';

export interface FindDivergenceOptions {
  /** A QDQ ONNX file exported from this model, to run in ONNX Runtime instead of the config's export. */
  onnx?: string;
  /** False: only return the result (automation, tests). */
  show?: boolean;
}

/** The message the command shows: the first divergence of each bisected pair, or that every stage agrees. */
export function divergenceMessage(result: CompareStagesResult): string {
  const found = result.bisected.map((key) => result.divergence[key]).filter((d) => d !== undefined);
  if (!found.length)
    return `Every quantized layer agrees across ${result.stages.map((s) => s.label).join(', ')} to rounding.`;
  const label = (id: string) => result.stages.find((s) => s.id === id)?.label ?? id;
  return found
    .map((d) => {
      const [a, b] = d.pair.split(':');
      const amount =
        d.localSteps !== null && d.localSteps !== undefined
          ? `${d.localSteps.toFixed(1)} output steps`
          : `${d.localSqnr.toFixed(1)} dB`;
      return `${label(a)} → ${label(b)} first diverges at ${d.module} (${d.op}, ${amount}): ${d.cause}`;
    })
    .join(' ');
}

/** What the graph view shows of a result (protocol/webview.ts StageResults). */
export function stageResults(r: CompareStagesResult): StageResults {
  const { stages, pairs, bisected, layers, divergence, accuracy, missing, roundingSteps, floatSqnrDb } = r;
  return {
    stages,
    pairs,
    bisected,
    layers,
    divergence,
    accuracy,
    ...(missing ? { missing } : {}),
    roundingSteps,
    floatSqnrDb,
  };
}

/** The graph the kernel ran in ONNX Runtime, with the stage results over it, in a new graph view. */
async function showStages(ctx: Ctx, config: vscode.Uri, result: CompareStagesResult): Promise<GraphPanel> {
  const title = `Stages: ${path.basename(config.fsPath)}`;
  const panel = ctx.track(GraphPanel.create(ctx.extensionUri, title, ctx.log));
  const file = path.resolve(path.dirname(config.fsPath), result.onnx);
  let onnx: Uint8Array;
  try {
    onnx = await readFile(file);
  } catch (err) {
    await panel.showError(`Cannot read the ONNX file the stages ran, ${file}: ${(err as Error).message}`);
    return panel;
  }
  await panel.show({
    title,
    onnx,
    // No per-layer cosine here: the stages colour the graph.
    layers: [],
    threshold: 0,
    config: config.fsPath,
    stages: stageResults(result),
    stageReport: result.markdownPath,
  });
  return panel;
}

/** The kernel's result and, when shown, the graph view showing it. */
export type FindDivergenceResult = CompareStagesResult & { view?: GraphPanel };

export function findDivergence(ctx: Ctx) {
  return async (uri?: vscode.Uri, optionsArg?: FindDivergenceOptions): Promise<FindDivergenceResult | undefined> => {
    const options: FindDivergenceOptions = commandOptions<FindDivergenceOptions>(optionsArg);
    const config = await configFor(uri instanceof vscode.Uri ? uri : undefined);
    if (!config) {
      void vscode.window.showWarningMessage('No QAT config (*.qat.yaml) found.');
      return undefined;
    }
    let result: CompareStagesResult;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'QAT: Find Where INT8 Diverges', cancellable: true },
        (progress, token) =>
          ctx.kernel.request(
            'compare/stages',
            { config: config.fsPath, ...(options.onnx ? { onnx: options.onnx } : {}) },
            {
              token,
              onProgress: (p) => {
                progress.report({ message: p.message });
                ctx.log.info(`[${p.stage}] ${p.message}`);
              },
            },
          ),
      );
    } catch (err) {
      await reportKernelError(err, 'Find Where INT8 Diverges', ctx.log);
      return undefined;
    }
    for (const line of result.summary) ctx.log.info(line);
    if (options.show === false) return result;
    const view = await showStages(ctx, config, result);
    const source = result.bisected.map((key) => result.divergence[key]).find((d) => d?.source)?.source;
    const message = divergenceMessage(result);
    const report = 'Open Report';
    const shown = source
      ? vscode.window.showWarningMessage(message, 'Go to Source', report)
      : vscode.window.showInformationMessage(message, report);
    void shown.then(async (choice) => {
      if (choice === report)
        await vscode.commands.executeCommand('markdown.showPreviewToSide', vscode.Uri.file(result.markdownPath));
      else if (choice === 'Go to Source' && source) {
        const line = Math.max(0, source.line - 1);
        await vscode.window.showTextDocument(vscode.Uri.file(source.file), {
          selection: new vscode.Range(line, 0, line, 0),
          preview: false,
        });
      }
    });
    return { ...result, view };
  };
}
