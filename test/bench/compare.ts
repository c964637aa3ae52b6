// compare/layers against two plain forward passes (FP32 + INT8) and the Numeric Suite's PT2E flow
// (torchao's numeric debugger), and compare/stages' capture against one forward of each stage it runs (FP32,
// fake-quant, PyTorch INT8, ONNX Runtime, TVM, the C runner: six where TVM and a C compiler are here), its
// stages built once beforehand and their build timed apart: on the digits example, and at real size on
// torchvision's ResNet-18 at 224x224, each in one process and run (benchmarks/compare_cost.py).
import path from 'node:path';
import { repoRoot } from '../support/paths';
import { mb, resnet18Workspace, runBenchModule } from './realSize';
import { recordBench } from './results';

interface Row {
  samples: number;
  batches: number;
  repeats: number;
  threads: number;
  layers: number;
  seconds: Record<string, number>;
  ratios: Record<string, number>;
  /** compare/stages' capture over one forward of each stage it runs */
  stagesRatio: number;
  /** the stages in both the capture and its baseline (TVM and the C runner only where they build here) */
  stages: string[];
  /** their names in words, in the same order (compare/stages' own labels) */
  stageLabels: string[];
  /** building every stage once (TVM's libraries, the C runner, ORT's sessions), before the rounds: in no ratio */
  buildSeconds: number;
  /** TVM's and the C runner's parts of buildSeconds, where built */
  builds: Record<string, number>;
  /** the methods whose calls spread wide (p90/p10 over 1.5): the machine was busy while they ran */
  noisy: string[];
  peakRssMb: number;
}

const GOALS = { oursPropagated: 1.3, oursFull: 2 };
const STAGES_GOAL = 3;

/** The stages a row timed, in words: "FP32, fake-quant, PyTorch INT8, ONNX Runtime, C runner, TVM". */
function stagesText(r: Row): string {
  return r.stageLabels.join(', ');
}

/** The one-time build: "41.2 s (TVM 38.0 s, C runner 3.1 s)". */
function buildText(r: Row): string {
  const label = (s: string) => r.stageLabels[r.stages.indexOf(s)] ?? s;
  const parts = Object.entries(r.builds).map(([s, v]) => `${label(s)} ${v.toFixed(1)} s`);
  return `${r.buildSeconds.toFixed(1)} s${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

const METHODS: Record<string, string> = {
  oursPropagated: 'ours, propagated vs FP32',
  oursFull: 'ours, full (propagated + local, FP32 + QAT float)',
  numericDebugger: "torchao's numeric debugger",
};

function record(model: string, rows: Row[]): void {
  recordBench({
    area: 'compare',
    title: `compare/stages cost: ${model}`,
    ratio: `the capture of every layer in every stage over one forward of each stage, the stages built beforehand (below ${STAGES_GOAL}× is the goal)`,
    figures: rows.map((r) => ({
      model: `${model}, ${r.samples} samples, ${r.layers} layers`,
      measure: `compare/stages capture (${stagesText(r)}; propagated and local)`,
      value: `${(r.seconds.stages * 1000).toFixed(1)} ms`,
      baseline: `one forward of each stage ${(r.seconds.stageForwards * 1000).toFixed(1)} ms`,
      ratio: r.stagesRatio,
      spread: `median of ${r.repeats} rounds, ${r.threads} threads, peak RSS ${mb(r.peakRssMb)}`,
      noisy: r.noisy.includes('stages') || r.noisy.includes('stageForwards'),
    })),
    notes: [
      `the stages timed, in the capture and its baseline alike: ${stagesText(rows[0])}`,
      `built once, before the rounds, in no ratio: ${buildText(rows[0])}`,
    ],
  });
  recordBench({
    area: 'compare',
    title: `compare/layers cost: ${model}`,
    ratio: 'the method over one FP32 + one INT8 forward of the same samples (below 1.3× propagated is the goal)',
    figures: rows.flatMap((r) =>
      Object.entries(METHODS).map(([k, label]) => ({
        model: `${model}, ${r.samples} samples, ${r.layers} layers`,
        measure: label,
        value: `${(r.seconds[k] * 1000).toFixed(1)} ms`,
        baseline: `two forwards ${(r.seconds.twoForwards * 1000).toFixed(1)} ms`,
        ratio: r.ratios[k],
        spread: `median of ${r.repeats} rounds, ${r.threads} threads, peak RSS ${mb(r.peakRssMb)}`,
        noisy: r.noisy.includes(k) || r.noisy.includes('twoForwards'),
      })),
    ),
  });
}

function table(rows: Row[]): void {
  const ms = (s: number) => `${(s * 1000).toFixed(1)} ms`;
  console.log(
    'samples | layers | two forwards | ours, propagated vs FP32 | ours, full (propagated+local, FP32+QAT float) | torchao numeric debugger | peak RSS',
  );
  for (const r of rows) {
    const flag = (k: string) => (r.noisy.includes(k) ? ' noisy' : '');
    const cell = (k: string) => `${ms(r.seconds[k])} (${r.ratios[k].toFixed(2)}x)${flag(k)}`;
    console.log(
      `${String(r.samples).padStart(7)} | ${String(r.layers).padStart(6)} | ${(ms(r.seconds.twoForwards) + flag('twoForwards')).padStart(12)} | ${cell('oursPropagated')} | ${cell('oursFull')} | ${cell('numericDebugger')} | ${mb(r.peakRssMb)}`,
    );
  }
  console.log(`threads ${rows[0].threads}, median of ${rows[0].repeats} interleaved rounds after a warm-up call each`);
  console.log(
    `compare/stages, the stages timed: ${stagesText(rows[0])}; built once, before the rounds, in ${buildText(rows[0])}`,
  );
  console.log('samples | one forward of each stage | compare/stages capture');
  for (const r of rows) {
    const noisy = r.noisy.includes('stages') || r.noisy.includes('stageForwards') ? ' noisy' : '';
    console.log(
      `${String(r.samples).padStart(7)} | ${ms(r.seconds.stageForwards).padStart(25)} | ${ms(r.seconds.stages)} (${r.stagesRatio.toFixed(2)}x)${noisy}`,
    );
  }
  for (const [key, goal] of Object.entries(GOALS)) {
    const worst = Math.max(...rows.map((r) => r.ratios[key]));
    const what = key === 'oursPropagated' ? 'the propagated comparison' : 'everything compare returns';
    const noisy = rows.some((r) => r.noisy.includes(key) || r.noisy.includes('twoForwards'));
    const verdict = noisy ? 'noisy, no verdict' : worst <= goal ? 'meets the goal' : 'misses the goal';
    console.log(`goal: ${what} within ${goal}x two forwards -> ${worst.toFixed(2)}x at worst: ${verdict}`);
  }
  const worstStages = Math.max(...rows.map((r) => r.stagesRatio));
  const stagesNoisy = rows.some((r) => r.noisy.includes('stages') || r.noisy.includes('stageForwards'));
  const stagesVerdict = stagesNoisy
    ? 'noisy, no verdict'
    : worstStages <= STAGES_GOAL
      ? 'meets the goal'
      : 'misses the goal';
  console.log(
    `goal: compare/stages' capture within ${STAGES_GOAL}x one forward of each of its ${rows[0].stages.length} stages -> ${worstStages.toFixed(2)}x at worst: ${stagesVerdict}`,
  );
}

export async function benchCompare(): Promise<void> {
  console.log('\n## compare/layers cost (digits CNN, PT2E x86, CPU)');
  const digits = runBenchModule<Row>('compare_cost', [
    path.join(repoRoot, 'examples', 'digits', 'digits.qat.yaml'),
    '64,256',
    '7',
  ]);
  table(digits);
  record('digits CNN', digits);
  console.log(
    '\n## compare/layers cost at real size (ResNet-18, torchvision layout, 3x224x224, one batch of 16, PT2E x86, CPU)',
  );
  const resnet = runBenchModule<Row>('compare_cost', [resnet18Workspace(224), '16', '5']);
  table(resnet);
  record('ResNet-18 3x224x224', resnet);
}
