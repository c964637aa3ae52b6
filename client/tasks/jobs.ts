// The kernel jobs a `qat` task can run: which method, its params from the config path, and a summary.
import { writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import type {
  BuildTvmResult, CompareLayersResult, EvalAccuracyResult, ExportOnnxResult, KernelInfoResult, KernelMethod, QatTrainResult, SensitivityResult,
} from '../../protocol/kernel';
import type { Ctx } from '../ctx';

export interface Job<R> {
  method: KernelMethod;
  /** False for methods whose params take no progressToken (they report no progress). */
  progress?: boolean;
  params(config: string, def: { target?: string }): object;
  summary(result: R): string[];
  after?(ctx: Ctx, result: R, config: string): Promise<void>;
}

const pct = (v: number) => `${(v * 100).toFixed(2)} %`;

export type JobName = 'train' | 'evaluate' | 'export' | 'compare' | 'sensitivity' | 'build' | 'info';

export const JOBS: Record<JobName, Job<never>> = {
  train: {
    method: 'qat/train',
    params: (config) => ({ config }),
    summary: (r) => [
      `${r.flow} QAT: ${r.epochs} epochs, ${r.steps} steps${r.seconds ? ` in ${r.seconds.toFixed(1)} s` : ''}`,
      `accuracy FP32 ${pct(r.accuracy.fp32)} · fake-quant ${pct(r.accuracy.fakeQuant)} on ${r.accuracy.samples} samples`,
      r.checkpoint ? `checkpoint: ${r.checkpoint}` : 'no checkpoint written',
      ...(r.warnings ?? []).map((w) => `warning: ${w}`),
    ],
  } satisfies Job<QatTrainResult> as Job<never>,
  evaluate: {
    method: 'eval/accuracy',
    params: (config) => ({ config }),
    summary: (r) => [
      `accuracy on ${r.samples} samples (${r.flow}): FP32 ${pct(r.fp32)} · QAT float ${pct(r.qatFloat)} · fake-quant ${pct(r.fakeQuant)} · INT8 ${pct(r.int8)}` +
        (r.ptq !== undefined ? ` · PTQ INT8 ${pct(r.ptq)}` : ''),
    ],
  } satisfies Job<EvalAccuracyResult> as Job<never>,
  export: {
    method: 'export/onnx',
    params: (config) => ({ config }),
    summary: (r) => [
      r.path ? `QDQ ONNX (opset ${r.opset}): ${r.path}` : `export failed: ${r.error}`,
      ...(r.size ? [`size: FP32 ${(r.size.fp32Bytes / 1024).toFixed(1)} KiB -> INT8 ${(r.size.int8Bytes / 1024).toFixed(1)} KiB (${r.size.ratio.toFixed(2)}x smaller), ONNX file ${(r.size.onnxFileBytes / 1024).toFixed(1)} KiB`] : []),
      ...(r.verify ? [`ONNX Runtime vs PyTorch INT8 on ${r.verify.samples} samples: max |Δ| ${r.verify.maxAbs.toExponential(2)}` +
        (r.verify.maxSteps !== undefined ? ` = ${r.verify.maxSteps.toFixed(2)} quantization steps` : '') +
        `, same prediction ${pct(r.verify.predictionsEqual)}, ORT accuracy ${pct(r.verify.ortAccuracy)}`] : []),
    ],
  } satisfies Job<ExportOnnxResult> as Job<never>,
  compare: {
    method: 'compare/layers',
    params: (config) => ({ config }),
    summary: (r) => [
      `FP32 ${pct(r.accuracy.fp32)} · INT8 ${pct(r.accuracy.int8)} on ${r.accuracy.samples} samples · ${r.seconds?.toFixed(1) ?? '?'} s`,
      'layer            cosine    SQNR dB   MSE',
      ...[...r.layers].sort((a, b) => a.cosine - b.cosine).map((l) =>
        `${l.module.padEnd(16)} ${l.cosine.toFixed(5)}  ${l.sqnr.toFixed(2).padStart(7)}   ${l.mse.toExponential(2)}${l.cosine < r.threshold ? '  < threshold' : ''}`),
      r.onnx.path ? `QDQ ONNX: ${r.onnx.path}` : `ONNX export failed: ${r.onnx.error}`,
    ],
    after: async (ctx, r, config) => {
      if (r.onnx.path) ctx.onnxEditor.overlays.set(r.onnx.path, { layers: r.layers, threshold: r.threshold, config });
    },
  } satisfies Job<CompareLayersResult> as Job<never>,
  info: {
    method: 'kernel/info',
    progress: false,
    params: () => ({}),
    summary: (r) => [`Python ${r.python} (${r.executable})`, ...Object.entries(r.packages).map(([n, p]) => `${n.padEnd(12)} ${p.version ?? `missing: ${p.error}`}`)],
  } satisfies Job<KernelInfoResult> as Job<never>,
  sensitivity: {
    method: 'analyze/sensitivity',
    params: (config) => ({ config }),
    summary: (r) => [
      `fake-quant ${pct(r.accuracy.fakeQuant)} vs QAT float ${pct(r.accuracy.qatFloat)}; budget ${r.budget} points`,
      'rank layer            quantized alone      kept float',
      ...r.layers.map((l) => `${String(l.rank).padStart(4)} ${l.module.padEnd(16)} ${pct(l.quantizedAlone.accuracy).padStart(8)} ${l.quantizedAlone.sqnr.toFixed(1).padStart(6)} dB   ${pct(l.keptFloat.accuracy).padStart(8)} ${l.keptFloat.sqnr.toFixed(1).padStart(6)} dB`),
      r.suggestion.overrides.length
        ? `suggested: keep ${r.suggestion.overrides.map((o) => `${o.match} ${o.precision}`).join(', ')} -> ${pct(r.suggestion.accuracy)}${r.suggestion.withinBudget ? ' (within budget)' : ' (still over budget)'}`
        : 'no override needed within the budget',
    ],
  } satisfies Job<SensitivityResult> as Job<never>,
  build: {
    method: 'build/tvm',
    params: (config, def) => ({ config, target: def.target ?? 'x86-64', verify: true }),
    summary: (r) => r.summary,
    after: async (_ctx, r) => {
      // A readable report beside the kernel's JSON one, opened in the Markdown preview.
      const md = buildReportMarkdown(r);
      const file = path.join(r.outDir, 'build-report.md');
      await writeFile(file + '.tmp', md);
      await rename(file + '.tmp', file);
      await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(file));
    },
  } satisfies Job<BuildTvmResult> as Job<never>,
};

export function buildReportMarkdown(r: BuildTvmResult): string {
  const rows = r.ops.map((o) => `| ${o.onnxNode} | ${o.opType} | ${o.precision} | ${(o.reason ?? o.detail ?? '').replace(/\|/g, '\\|')} |`);
  return [
    `# TVM build: ${r.target}`, '',
    ...r.summary.map((l) => `    ${l}`), '',
    `Artifact: [${path.basename(r.artifact)}](${vscode.Uri.file(r.artifact).toString()}) (${(r.artifactBytes / 1024).toFixed(1)} KiB) in [${r.outDir}](${vscode.Uri.file(r.outDir).toString()})`, '',
    '## Precision of each op as built', '',
    '| ONNX node | op | precision | why |', '|---|---|---|---|', ...rows, '',
  ].join('\n');
}
