// The kernel jobs a `qat` task can run: which method, its params from the config path, and a summary.
import { writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import type {
  BuildTvmResult,
  CompareLayersResult,
  EvalAccuracyResult,
  ExportOnnxResult,
  KernelInfoResult,
  KernelMethod,
  QatTrainResult,
  SensitivityResult,
} from '../../protocol/kernel';
import type { BuildOrtResult, HistogramsResult, QatConvertResult, VerifyParityResult } from '../../protocol/kernel';
import type { Ctx } from '../ctx';
import { driftLines } from './drift';

export interface Job<R> {
  method: KernelMethod;
  /** False for methods whose params take no progressToken (they report no progress). */
  progress?: boolean;
  params(config: string, def: { target?: string }): object;
  summary(result: R): string[];
  after?(ctx: Ctx, result: R, config: string): Promise<void>;
}

const pct = (v: number) => `${(v * 100).toFixed(2)} %`;
const span = (r?: number[]) => (r ? `[${r[0].toPrecision(3)}, ${r[1].toPrecision(3)}]` : '-').padEnd(22);

export type JobName =
  'train' | 'evaluate' | 'convert' | 'histograms' | 'export' | 'compare' | 'sensitivity' | 'build' | 'info';

export const JOBS: Record<JobName, Job<never>> = {
  train: {
    method: 'qat/train',
    params: (config) => ({ config }),
    summary: (r) => [
      `${r.flow} QAT: ${r.epochs} epochs, ${r.steps} steps${r.seconds ? ` in ${r.seconds.toFixed(1)} s` : ''}` +
        (r.distributed ? ` on ${r.distributed.processes} processes (torchrun, ${r.distributed.backend})` : ''),
      `accuracy FP32 ${pct(r.accuracy.fp32)} · fake-quant ${pct(r.accuracy.fakeQuant)} on ${r.accuracy.samples} samples`,
      ...driftLines(r.drift),
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
  convert: {
    method: 'qat/convert',
    params: (config) => ({ config }),
    summary: (r) => [
      `INT8 ${r.format === 'exported-program' ? 'ExportedProgram (torch.export.load)' : 'state_dict (torch.load weights_only)'}: ${r.path}`,
      `accuracy FP32 ${pct(r.accuracy.fp32)} -> INT8 ${pct(r.accuracy.int8)} on ${r.accuracy.samples} samples; ` +
        `tensors ${(r.size.fp32Bytes / 1024).toFixed(1)} KiB -> ${(r.size.int8Bytes / 1024).toFixed(1)} KiB (${r.size.ratio.toFixed(2)}x smaller), file ${(r.size.fileBytes / 1024).toFixed(1)} KiB`,
    ],
  } satisfies Job<QatConvertResult> as Job<never>,
  histograms: {
    method: 'analyze/histograms',
    params: (config) => ({ config }),
    summary: (r) => [
      `weight and input-activation histograms of ${r.layers.length} layers on ${r.samples} samples (${r.bins} bins); clipped = more than half a step outside the range`,
      'layer            weight range           clipped   activation range       clipped',
      ...r.layers.map(
        (l) =>
          `${l.module.padEnd(16)} ${span(l.weight?.representable)} ${pct(l.weight?.clippedFraction ?? 0).padStart(8)}   ${span(l.activation?.representable)} ${pct(l.activation?.clippedFraction ?? 0).padStart(8)}`,
      ),
    ],
  } satisfies Job<HistogramsResult> as Job<never>,
  export: {
    method: 'export/onnx',
    params: (config) => ({ config }),
    summary: (r) => [
      r.path ? `QDQ ONNX (opset ${r.opset}): ${r.path}` : `export failed: ${r.error}`,
      ...(r.size
        ? [
            `size: FP32 ${(r.size.fp32Bytes / 1024).toFixed(1)} KiB -> INT8 ${(r.size.int8Bytes / 1024).toFixed(1)} KiB (${r.size.ratio.toFixed(2)}x smaller), ONNX file ${(r.size.onnxFileBytes / 1024).toFixed(1)} KiB`,
          ]
        : []),
      ...(r.verify
        ? [
            `ONNX Runtime vs PyTorch INT8 on ${r.verify.samples} samples: max |Δ| ${r.verify.maxAbs.toExponential(2)}` +
              (r.verify.maxSteps !== undefined ? ` = ${r.verify.maxSteps.toFixed(2)} quantization steps` : '') +
              `, same prediction ${pct(r.verify.predictionsEqual)}, ORT accuracy ${pct(r.verify.ortAccuracy)}`,
          ]
        : []),
    ],
  } satisfies Job<ExportOnnxResult> as Job<never>,
  compare: {
    method: 'compare/layers',
    params: (config) => ({ config }),
    summary: (r) => [
      `FP32 ${pct(r.accuracy.fp32)} · INT8 ${pct(r.accuracy.int8)} on ${r.accuracy.samples} samples · ${r.seconds?.toFixed(1) ?? '?'} s`,
      'layer            cosine    SQNR dB   MSE',
      ...[...r.layers]
        .sort((a, b) => a.cosine - b.cosine)
        .map(
          (l) =>
            `${l.module.padEnd(16)} ${l.cosine.toFixed(5)}  ${l.sqnr.toFixed(2).padStart(7)}   ${l.mse.toExponential(2)}${l.cosine < r.threshold ? '  < threshold' : ''}`,
        ),
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
    summary: (r) => [
      `Python ${r.python} (${r.executable})`,
      ...Object.entries(r.packages).map(([n, p]) => `${n.padEnd(12)} ${p.version ?? `missing: ${p.error}`}`),
    ],
  } satisfies Job<KernelInfoResult> as Job<never>,
  sensitivity: {
    method: 'analyze/sensitivity',
    params: (config) => ({ config }),
    summary: (r) => [
      `fake-quant ${pct(r.accuracy.fakeQuant)} vs QAT float ${pct(r.accuracy.qatFloat)}; budget ${r.budget} points`,
      'rank layer            quantized alone      kept float',
      ...r.layers.map(
        (l) =>
          `${String(l.rank).padStart(4)} ${l.module.padEnd(16)} ${pct(l.quantizedAlone.accuracy).padStart(8)} ${l.quantizedAlone.sqnr.toFixed(1).padStart(6)} dB   ${pct(l.keptFloat.accuracy).padStart(8)} ${l.keptFloat.sqnr.toFixed(1).padStart(6)} dB`,
      ),
      r.suggestion.overrides.length
        ? `suggested: keep ${r.suggestion.overrides.map((o) => `${o.match} ${o.precision}`).join(', ')} -> ${pct(r.suggestion.accuracy)}${r.suggestion.withinBudget ? ' (within budget)' : ' (still over budget)'}`
        : 'no override needed within the budget',
    ],
  } satisfies Job<SensitivityResult> as Job<never>,
  build: {
    method: 'build/tvm',
    params: (config, def) => ({ config, target: def.target ?? 'x86-64', verify: true }),
    summary: (r) => r.summary,
    after: async (ctx, r, config) => {
      // The same model in ONNX Runtime (the baseline users trust, with its precision as executed) and every
      // artifact's parity with PyTorch INT8 go into the report too; either may fail without losing the build.
      const ort = await ctx.kernel.request('build/ort', { config, benchRuns: 30 }).catch((err: Error) => {
        ctx.log.warn(`build/ort for the report: ${err.message}`);
        return undefined;
      });
      const parity = await ctx.kernel.request('verify/parity', { config, target: r.target }).catch((err: Error) => {
        ctx.log.warn(`verify/parity for the report: ${err.message}`);
        return undefined;
      });
      // A readable report beside the kernel's JSON one, opened in the Markdown preview.
      const md = buildReportMarkdown(r, ort, parity);
      const file = path.join(r.outDir, 'build-report.md');
      await writeFile(file + '.tmp', md);
      await rename(file + '.tmp', file);
      await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(file));
    },
  } satisfies Job<BuildTvmResult> as Job<never>,
};

type LatencyRow = NonNullable<BuildOrtResult['bench']>['rows'][number];

export function buildReportMarkdown(r: BuildTvmResult, ort?: BuildOrtResult, parity?: VerifyParityResult): string {
  const rows = r.ops.map(
    (o) => `| ${o.onnxNode} | ${o.opType} | ${o.precision} | ${cell(o.reason ?? o.detail ?? '')} |`,
  );
  const out = [
    `# TVM build: ${r.target}`,
    '',
    ...r.summary.map((l) => `    ${l}`),
    '',
    `Artifact: [${path.basename(r.artifact)}](${vscode.Uri.file(r.artifact).toString()}) (${(r.artifactBytes / 1024).toFixed(1)} KiB) in [${r.outDir}](${vscode.Uri.file(r.outDir).toString()})`,
    '',
  ];
  const latency = latencyRows(r, ort);
  if (latency.length) {
    const top = Math.max(...latency.map((l) => l.speedupVsTorchFp32?.b1 ?? 0));
    out.push(
      '## Latency on this machine',
      '',
      '| artifact | batch 1 median | p10–p90 | vs PyTorch FP32 | batch 16 median | p10–p90 | vs PyTorch FP32 | |',
      '|---|---|---|---|---|---|---|---|',
      ...latency.map(
        (l) =>
          `| ${l.label} | ${ms(l.latency.b1?.medianMs)}${noisy(l, 'b1')} | ${spread(l, 'b1')} | ${x(l.speedupVsTorchFp32?.b1)} | ${ms(l.latency.b16?.medianMs)}${noisy(l, 'b16')} | ${spread(l, 'b16')} | ${x(l.speedupVsTorchFp32?.b16)} | ${bar(l.speedupVsTorchFp32?.b1 ?? 0, top)} |`,
      ),
      '',
      ...timingLines(r, ort, latency),
      '',
    );
    const best = fastestCorrect(latency, parity);
    out.push(
      best
        ? `Fastest correct INT8 artifact here: **${best.label}** (${x(best.speedupVsTorchFp32?.b1)} PyTorch FP32 at batch 1, same top-1 as PyTorch INT8 on the parity samples).`
        : fastestCorrect(latency, parity, true)
          ? 'No fastest INT8 artifact is named here: the batch-1 figures of the correct ones, or of PyTorch FP32, are noisy.'
          : 'No fastest INT8 artifact is named here: none had the same top-1 as PyTorch INT8 on the parity samples.',
      '',
    );
  }
  if (parity) out.push(...parityMarkdown(parity));
  // The kernel renders this section; the report shows its lines as they are.
  out.push(...(ort?.qdqReplacement?.markdown ?? []));
  out.push(
    '## Precision of each op as built (TVM)',
    '',
    '| ONNX node | op | precision | why |',
    '|---|---|---|---|',
    ...rows,
    '',
  );
  if (ort) {
    for (const v of ort.variants) {
      out.push(
        `## Precision as executed in ONNX Runtime: ${v.label}`,
        '',
        `Compute ops: ${Object.entries(v.computePerPrecision)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}; optimised graph: [${path.basename(v.optimized)}](${vscode.Uri.file(v.optimized).toString()})`,
        '',
        '| op | type | precision | why |',
        '|---|---|---|---|',
        ...v.ops
          .filter((o) => o.role === 'compute')
          .map((o) => `| ${o.name} | ${o.opType} | ${o.precision} | ${cell(o.reason ?? '')} |`),
        '',
      );
    }
  }
  return out.join('\n');
}

/** Parity in the units a user reads: a quantized output in its own quantization steps; float outputs (logits)
 * as top-1 agreement and absolute / relative difference, the int32-accumulator step count only as a detail. */
function parityMarkdown(parity: VerifyParityResult): string[] {
  const quantized = parity.outputKind === 'quantized';
  const out = [
    `## Parity with PyTorch INT8 (${parity.samples} validation samples)`,
    '',
    `| artifact | status | top-1 agreement | max abs diff | of the largest output |${quantized ? ' max diff (output steps) | within one step |' : ''} accuracy |`,
    `|---|---|---|---|---|${quantized ? '---|---|' : ''}---|`,
    ...parity.rows.map((p) => {
      const m = p.vsTorchInt8;
      const steps = quantized ? ` ${num(m?.maxDiffSteps)} | ${pc(m?.withinOneStep)} |` : '';
      return `| ${p.label} | ${p.status}${p.note ? `: ${cell(p.note)}` : ''} | ${pc(m?.top1Agreement)} | ${sig(m?.maxAbsDiff)} | ${pc(m?.maxRelDiff)} |${steps} ${pc(p.accuracy)} |`;
    }),
    '',
  ];
  if (quantized) out.push("Output steps are the output's own quantization step (its dequantize scale).", '');
  const detail = parity.rows.filter((p) => p.vsTorchInt8?.maxDiffSteps !== undefined);
  if (parity.outputKind === 'accumulator' && detail.length)
    out.push(
      `Detail, in steps of the last layer's int32 accumulator (input scale × weight scale, far finer than one rounding step of the activations before it, so a few hundred is a small difference in the logits): ${detail.map((p) => `${p.label} ${num(p.vsTorchInt8?.maxDiffSteps)}`).join(', ')}.`,
      '',
    );
  return out;
}

const cell = (t: string) => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const ms = (v?: number) => (v === undefined ? '' : `${v.toFixed(3)} ms`);
const x = (v?: number) => (v === undefined ? '' : `${v.toFixed(2)}x`);
const sig = (v?: number) => (v === undefined ? '' : v.toPrecision(3));
const num = (v?: number) => (v === undefined ? '' : v < 10 ? v.toFixed(2) : v.toFixed(0));
const pc = (v?: number) => (v === undefined ? '' : `${(v * 100).toFixed(1)} %`);
const noisy = (l: LatencyRow, k: 'b1' | 'b16') => (l.latency[k]?.noisy ? ' (noisy)' : '');
const spread = (l: LatencyRow, k: 'b1' | 'b16') => {
  const s = l.latency[k];
  return s ? `${s.p10Ms.toFixed(3)}–${s.p90Ms.toFixed(3)}` : '';
};
const bar = (v: number, top: number) => '█'.repeat(Math.max(1, Math.round((v / (top || 1)) * 20)));

/** How the table was timed (rounds, threads), where its rows come from, and what its figures do not say. */
function timingLines(r: BuildTvmResult, ort: BuildOrtResult | undefined, latency: LatencyRow[]): string[] {
  const lines: string[] = [];
  const b = r.bench ?? ort?.bench;
  if (b) {
    const t = b.threads;
    const threads = t
      ? `; threads: PyTorch ${t.torch ?? '?'}, ONNX Runtime ${t.onnxruntime ?? '?'}, TVM ${t.tvm ?? 'default'} of ${t.cpus} CPUs`
      : '';
    lines.push(
      `Timed in ${b.rounds ?? 1} interleaved rounds (every row, then again), ${b.runs} calls a figure after ${b.warmup} warm-up calls${threads}.`,
    );
  }
  const fromOrt = latency.filter((l) => r.bench && !r.bench.rows.some((t) => t.name === l.name));
  if (fromOrt.length)
    lines.push(
      `${fromOrt.map((l) => l.label).join(', ')}: from build/ort's table, timed in its own rounds against its own PyTorch FP32 run.`,
    );
  const notes = new Set([...(r.bench?.notes ?? []), ...(fromOrt.length || !r.bench ? (ort?.bench?.notes ?? []) : [])]);
  return [...lines, ...[...notes].map((n) => `Note: ${n}`)];
}

/** TVM's rows, then ONNX Runtime's rows the TVM bench did not time (quantize_static). */
function latencyRows(r: BuildTvmResult, ort?: BuildOrtResult): LatencyRow[] {
  const tvm = (r.bench?.rows ?? []) as LatencyRow[];
  const seen = new Set(tvm.map((l) => l.name));
  return [...tvm, ...(ort?.bench?.rows ?? []).filter((l) => !seen.has(l.name))];
}

/** The fastest INT8 row with PyTorch INT8's top-1, among figures that are not noisy (any, with `evenNoisy`). */
function fastestCorrect(latency: LatencyRow[], parity?: VerifyParityResult, evenNoisy = false): LatencyRow | undefined {
  const correct = new Set<string>(
    (parity?.rows ?? [])
      .filter((p) => p.status === 'ok' && (p.vsTorchInt8?.top1Agreement ?? 0) >= 0.99)
      .map((p) => p.name),
  );
  return latency
    .filter((l) => l.name.includes('int8') && correct.has(l.name))
    .filter((l) => evenNoisy || (!l.latency.b1?.noisy && !latency[0]?.latency.b1?.noisy))
    .sort((a, b) => (a.latency.b1?.medianMs ?? Infinity) - (b.latency.b1?.medianMs ?? Infinity))[0];
}
