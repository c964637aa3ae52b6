// The kernel jobs a `qat` task can run: which method and its params from the config path. The kernel renders
// every report: a task prints the result's `summary` lines as they are and opens the report file it wrote.
import type { BuildTvmResult, CompareLayersResult, CompareStagesResult, KernelMethod } from '../../protocol/kernel';
import type { Ctx } from '../ctx';

export interface Job<R> {
  method: KernelMethod;
  /** False for methods whose params take no progressToken (they report no progress). */
  progress?: boolean;
  params(config: string, def: { target?: string }): object;
  /** The Markdown report the kernel wrote for this result, to open in the preview. */
  report?(result: R): string | undefined;
  after?(ctx: Ctx, result: R, config: string): Promise<void>;
}

/** What a task prints for a result: the kernel's summary lines, as they are. */
export function summaryOf(result: unknown): string[] {
  const lines = (result as { summary?: unknown } | undefined)?.summary;
  return Array.isArray(lines) ? lines.map(String) : [];
}

/** Timed runs per row and batch when Build for Target times every runtime (one bench, interleaved rounds). */
export const BUILD_BENCH_RUNS = 30;

export type JobName =
  | 'train'
  | 'evaluate'
  | 'convert'
  | 'histograms'
  | 'export'
  | 'compare'
  | 'sensitivity'
  | 'stages'
  | 'build'
  | 'deploy'
  | 'info';

export const JOBS: Record<JobName, Job<never>> = {
  train: { method: 'qat/train', params: (config) => ({ config }) },
  evaluate: { method: 'eval/accuracy', params: (config) => ({ config }) },
  convert: { method: 'qat/convert', params: (config) => ({ config }) },
  histograms: { method: 'analyze/histograms', params: (config) => ({ config }) },
  export: { method: 'export/onnx', params: (config) => ({ config }) },
  compare: {
    method: 'compare/layers',
    params: (config) => ({ config }),
    after: async (ctx, r, config) => {
      if (r.onnx.path) ctx.onnxEditor.overlays.set(r.onnx.path, { layers: r.layers, threshold: r.threshold, config });
    },
  } satisfies Job<CompareLayersResult> as Job<never>,
  info: { method: 'kernel/info', progress: false, params: () => ({}) },
  // A torchao language model on the CPU's int4/int8 kernels, timed against FP32, in the trained format.
  deploy: { method: 'deploy/torchao', params: (config) => ({ config }) },
  sensitivity: { method: 'analyze/sensitivity', params: (config) => ({ config }) },
  stages: {
    method: 'compare/stages',
    params: (config) => ({ config }),
    report: (r) => r.markdownPath,
  } satisfies Job<CompareStagesResult> as Job<never>,
  build: {
    method: 'build/tvm',
    // TVM INT8 timed with every other runtime in the same rounds: the report's latency table has its row.
    params: (config, def) => ({
      config,
      target: def.target ?? 'x86-64',
      verify: true,
      bench: true,
      benchRuns: BUILD_BENCH_RUNS,
    }),
    report: (r) => r.markdownPath,
  } satisfies Job<BuildTvmResult> as Job<never>,
};
