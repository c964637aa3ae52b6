// The key figures of a run, for the Runs view and the run comparison: one home for what each job's result shows.
import type {
  BuildTvmResult,
  CompareLayersResult,
  EvalAccuracyResult,
  MixedPrecisionSearchResult,
  QatConvertResult,
  QatTrainResult,
  SensitivityResult,
} from '../../protocol/kernel';
import type { RunKind, RunLayer } from './runStore';
import { shortList, suggestion } from '../search/shape';

export interface RunSummary {
  figures: Array<[string, string]>;
  report?: string;
  detail?: string;
  layers?: RunLayer[];
  /** The kernel's id of the trained model the result is about. */
  model?: string;
}

const modelOf = (id: string | undefined) => (id ? { model: id } : {});

const pct = (v: number | undefined) => (v === undefined ? '-' : `${(v * 100).toFixed(2)} %`);

export function compareFigures(r: CompareLayersResult): RunSummary {
  const worst = r.layers.length ? r.layers.reduce((a, b) => (a.cosine <= b.cosine ? a : b)) : undefined;
  return {
    figures: [
      ['FP32', pct(r.accuracy.fp32)],
      ['INT8', pct(r.accuracy.int8)],
      ['layers', String(r.layers.length)],
      ['below threshold', String(r.layers.filter((l) => l.cosine < r.threshold).length)],
      ...(worst ? ([['worst', `${worst.module} (cos ${worst.cosine.toFixed(4)})`]] as Array<[string, string]>) : []),
    ],
    ...(r.onnx.path ? { report: r.onnx.path } : {}),
    ...modelOf(r.model),
    layers: r.layers.map((l) => ({
      module: l.module,
      cosine: l.cosine,
      sqnr: l.sqnr,
      ...(l.local ? { localCosine: l.local.cosine, localSqnr: l.local.sqnr } : {}),
    })),
  };
}

export function trainFigures(r: QatTrainResult): RunSummary {
  return {
    figures: [
      ['FP32', pct(r.accuracy.fp32)],
      ['fake-quant', pct(r.accuracy.fakeQuant)],
      ['epochs', String(r.epochs)],
      ['steps', String(r.steps)],
    ],
    ...(r.checkpoint ? { report: r.checkpoint } : {}),
    ...modelOf(r.model),
  };
}

export function sensitivityFigures(r: SensitivityResult): RunSummary {
  const top = [...r.layers].sort((a, b) => a.rank - b.rank)[0];
  const s = suggestion(r);
  return {
    figures: [
      ['FP32', pct(r.accuracy.fp32)],
      ['fake-quant', pct(r.accuracy.fakeQuant)],
      ['budget', `${r.budget} points`],
      ...(top ? ([['most sensitive', top.module]] as Array<[string, string]>) : []),
      ['suggested', s.modules.length ? `${s.modules.length} ${s.precision}: ${shortList(s.modules, 2).text}` : 'none'],
    ],
  };
}

export function searchFigures(r: MixedPrecisionSearchResult): RunSummary {
  if (r.flow === 'torchao') {
    const chosen = r.candidates.find((c) => c.id === r.chosen);
    return {
      figures: [
        ['candidates', `${r.candidates.length} (budget ${r.budget.candidates})`],
        ['front', `${r.front.length} points`],
        ['perplexity FP32', r.perplexity.fp32.toFixed(3)],
        [
          'chosen',
          chosen
            ? `${chosen.label}: ${chosen.perplexity.toFixed(3)}, ${(chosen.bytes / 1024).toFixed(1)} KiB`
            : `none within ${r.perplexityBudget} %`,
        ],
      ],
      detail: 'torchao perplexity',
      model: r.model,
    };
  }
  const byId = new Map(r.candidates.map((c) => [c.id, c]));
  const front = r.front.map((id) => byId.get(id)!);
  const best = front.reduce((a, b) => (b.ortAccuracy > a.ortAccuracy ? b : a), front[0]);
  const fastest = front.reduce((a, b) => (b.latencyMs < a.latencyMs ? b : a), front[0]);
  const int8 = byId.get(r.ends.int8);
  return {
    figures: [
      ['candidates', `${r.candidates.length} (budget ${r.budget.candidates})`],
      ['front', `${front.length} points`],
      ...(int8
        ? ([['all int8', `${pct(int8.ortAccuracy)}, ${int8.latencyMs.toFixed(3)} ms`]] as Array<[string, string]>)
        : []),
      ...(best ? ([['most accurate', `${best.label}: ${pct(best.ortAccuracy)}`]] as Array<[string, string]>) : []),
      ...(fastest
        ? ([['fastest', `${fastest.label}: ${fastest.latencyMs.toFixed(3)} ms`]] as Array<[string, string]>)
        : []),
    ],
    detail: `${r.backend.runtime} b${r.backend.batch}`,
  };
}

export function buildFigures(r: BuildTvmResult): RunSummary {
  const a = r.anchorsPerPrecision.after;
  const anchors = Object.values(a).reduce<number>((n, v) => n + (v ?? 0), 0);
  return {
    figures: [
      ['target', r.target],
      ['conv/matmul int8', `${a.int8}/${anchors}`],
      ['artifact', `${(r.artifactBytes / 1024).toFixed(1)} KiB`],
      ['build', `${r.buildSeconds.toFixed(1)} s`],
    ],
    report: r.markdownPath,
    detail: r.target,
  };
}

export function evaluateFigures(r: EvalAccuracyResult): RunSummary {
  return {
    figures: [
      ['FP32', pct(r.fp32)],
      ['fake-quant', pct(r.fakeQuant)],
      ['INT8', pct(r.int8)],
    ],
    ...modelOf(r.model),
  };
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** A model measured after training: its accuracy at each stage, then its size as converted to INT8. */
export function verifyFigures(r: { accuracy: EvalAccuracyResult; convert: QatConvertResult }): RunSummary {
  const { accuracy: a, convert: c } = r;
  return {
    figures: [
      ['FP32', pct(a.fp32)],
      ['QAT float', pct(a.qatFloat)],
      ['fake-quant', pct(a.fakeQuant)],
      ['INT8', pct(a.int8)],
      ['FP32 size', kib(c.size.fp32Bytes)],
      ['INT8 size', kib(c.size.int8Bytes)],
      ['INT8 file', kib(c.size.fileBytes)],
    ],
    ...modelOf(a.model ?? c.model),
  };
}

/** The `qat` task jobs recorded as runs, and the kind each is recorded as. */
export const TRACKED_JOBS: Partial<Record<string, RunKind>> = {
  train: 'train',
  compare: 'compare',
  sensitivity: 'sensitivity',
  build: 'build',
  evaluate: 'evaluate',
};

/** Figures of a `qat` task job's result, by job name. */
export function jobFigures(job: string, result: unknown): { kind: RunKind; summary: RunSummary } | undefined {
  switch (job) {
    case 'train':
      return { kind: 'train', summary: trainFigures(result as QatTrainResult) };
    case 'compare':
      return { kind: 'compare', summary: compareFigures(result as CompareLayersResult) };
    case 'sensitivity':
      return { kind: 'sensitivity', summary: sensitivityFigures(result as SensitivityResult) };
    case 'build':
      return { kind: 'build', summary: buildFigures(result as BuildTvmResult) };
    case 'evaluate':
      return { kind: 'evaluate', summary: evaluateFigures(result as EvalAccuracyResult) };
    default:
      return undefined;
  }
}
