// The kernel jobs a `qat` task can run: which method, its params from the config path, and a summary.
import type { CompareLayersResult, KernelInfoResult, KernelMethod } from '../../protocol/kernel';
import type { Ctx } from '../ctx';

export interface Job<R> {
  method: KernelMethod;
  /** False for methods whose params take no progressToken (they report no progress). */
  progress?: boolean;
  params(config: string): object;
  summary(result: R): string[];
  after?(ctx: Ctx, result: R, config: string): Promise<void>;
}

const pct = (v: number) => `${(v * 100).toFixed(2)} %`;

export const JOBS: Record<'compare' | 'info', Job<never>> = {
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
};

export type JobName = keyof typeof JOBS;
