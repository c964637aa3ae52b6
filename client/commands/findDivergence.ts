// QAT: Find Where INT8 Diverges — runs compare/stages (FP32, fake-quant, PyTorch INT8, ONNX Runtime, the C runner
// and TVM compared at every quantized layer), opens the kernel's Markdown report beside the config and says where
// the stages that should agree first part, with a button to that layer's source line.
import * as vscode from 'vscode';
import type { CompareStagesResult } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
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

export function findDivergence(ctx: Ctx) {
  return async (uri?: vscode.Uri, optionsArg?: FindDivergenceOptions): Promise<CompareStagesResult | undefined> => {
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
    await vscode.commands.executeCommand('markdown.showPreviewToSide', vscode.Uri.file(result.markdownPath));
    const first = result.bisected.map((key) => result.divergence[key]).find((d) => d?.source);
    const message = divergenceMessage(result);
    if (!first?.source) {
      void vscode.window.showInformationMessage(message);
      return result;
    }
    const source = first.source;
    void vscode.window.showWarningMessage(message, 'Go to Source').then(async (choice) => {
      if (choice !== 'Go to Source') return;
      const line = Math.max(0, source.line - 1);
      await vscode.window.showTextDocument(vscode.Uri.file(source.file), {
        selection: new vscode.Range(line, 0, line, 0),
        preview: false,
      });
    });
    return result;
  };
}
