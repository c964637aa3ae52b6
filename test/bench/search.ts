// analyze/sensitivity and search/mixed-precision against one fake-quant validation pass of the same trained
// model, measured in the same process and run (benchmarks/search_cost.py): on the digits example, and at real
// size on examples/cifar's MobileNetV2 (its FP32 checkpoint cached, so the process pays for 10 QAT steps only).
import path from 'node:path';
import { repoRoot } from '../support/paths';
import { cifarWorkspace, mb, runBenchModule } from './realSize';
import { recordBench } from './results';

interface Row {
  layers: number;
  samples: number;
  candidates: number;
  front: number;
  seconds: { onePass: number; sensitivity: number; search: number };
  ratios: { sensitivity: number; search: number };
  searchPerCandidate: number;
  threads: number;
  peakRssMb: number;
}

function record(model: string, r: Row): void {
  recordBench({
    area: 'search',
    title: `sensitivity and mixed-precision search cost: ${model}`,
    ratio: 'the analysis over one fake-quant validation pass of the same model',
    figures: (['sensitivity', 'search'] as const).map((k) => ({
      model: `${model}, ${r.layers} layers, ${r.samples} samples`,
      measure: k === 'sensitivity' ? 'analyze/sensitivity' : `search/mixed-precision, ${r.candidates} candidates`,
      value: `${r.seconds[k].toFixed(2)} s`,
      baseline: `one pass ${r.seconds.onePass.toFixed(2)} s`,
      ratio: r.ratios[k],
      spread: `one run, ${r.threads} threads, peak RSS ${mb(r.peakRssMb)}`,
    })),
  });
}

function report(r: Row): void {
  const s = (v: number) => `${v.toFixed(2)} s`;
  console.log(`layers ${r.layers}, ${r.samples} validation samples, threads ${r.threads}`);
  console.log(`one fake-quant validation pass: ${s(r.seconds.onePass)} (the baseline)`);
  console.log(`analyze/sensitivity:            ${s(r.seconds.sensitivity)} (${r.ratios.sensitivity.toFixed(1)}x)`);
  console.log(
    `search/mixed-precision:         ${s(r.seconds.search)} (${r.ratios.search.toFixed(1)}x): ${r.candidates} candidates (${s(r.searchPerCandidate)} each, ONNX Runtime build and timing included), ${r.front} on the front`,
  );
  console.log(`peak RSS of the process (QAT, both analyses, every candidate's build): ${mb(r.peakRssMb)}`);
}

export async function benchSearch(): Promise<void> {
  console.log(
    '\n## sensitivity and mixed-precision search cost (digits CNN, PT2E x86, ONNX Runtime CPU; model trained once)',
  );
  const digits = runBenchModule<Row>('search_cost', [
    path.join(repoRoot, 'examples', 'digits', 'digits.qat.yaml'),
    '24',
  ])[0];
  report(digits);
  record('digits CNN', digits);
  console.log('\n## sensitivity and mixed-precision search cost at real size (examples/cifar MobileNetV2, 3x32x32)');
  const mobilenet = runBenchModule<Row>('search_cost', [cifarWorkspace().mobilenetv2, '8', '128'])[0];
  report(mobilenet);
  record('examples/cifar MobileNetV2 3x32x32', mobilenet);
}
