// QAT: Show Model Graph — the kernel exports the model's graph (FP32, QAT-prepared or INT8) as graph JSON
// with module paths and source lines, or the graph ONNX Runtime runs for its QDQ export (an .onnx file whose fused
// nodes name their modules), and the graph view opens it. The graph JSON also gives the language server the
// model's module names (override completion, QCFG015).
import * as vscode from 'vscode';
import type { GraphExportParams, GraphExportResult } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
import { configFor } from './configPick';
import { reportKernelError } from './errors';

type Stage = NonNullable<GraphExportParams['stage']>;
const STAGES: Array<{ label: string; description: string; stage: Stage }> = [
  { label: 'INT8 (converted)', description: 'quantize / dequantize around integer layers', stage: 'converted' },
  {
    label: 'Fake-quant (QAT prepared)',
    description: 'the model as it trains, with fake quantizers',
    stage: 'prepared',
  },
  { label: 'FP32', description: 'the float model; no training needed', stage: 'fp32' },
  {
    label: 'ONNX Runtime (as it runs)',
    description: "the QDQ export after ONNX Runtime's graph optimisations: its fused int8 kernels",
    stage: 'ort',
  },
];

export function showModelGraph(ctx: Ctx) {
  return async (uri?: vscode.Uri, stage?: Stage): Promise<GraphExportResult | undefined> => {
    const config = await configFor(uri);
    if (!config) {
      void vscode.window.showWarningMessage('No QAT config (*.qat.yaml) found.');
      return undefined;
    }
    if (!stage) {
      const picked = await vscode.window.showQuickPick(STAGES, {
        title: 'QAT: Show Model Graph',
        placeHolder: 'Which model?',
      });
      if (!picked) return undefined;
      stage = picked.stage;
    }
    let result: GraphExportResult;
    try {
      result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `QAT: Show Model Graph (${stage})`,
          cancellable: true,
        },
        (progress, token) =>
          ctx.kernel.request(
            'graph/export',
            { config: config.fsPath, stage },
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
      await reportKernelError(err, 'Show Model Graph', ctx.log);
      return undefined;
    }
    ctx.log.info(`graph/export: ${result.nodes} nodes, ${result.modules.length} modules -> ${result.path}`);
    await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(result.path), 'qatStudio.onnxViewer');
    return result;
  };
}
