// One training epoch, FP32 and QAT, on the real-size models: examples/cifar's ResNet-18 and MobileNetV2 at
// 32x32 (its 1,257 training images) and torchvision's ResNet-18 at 224x224. Each (model, mode) runs in its own
// process (benchmarks/train_cost.py) so its peak RSS is its own; QAT's rate is given as a ratio to FP32's.
import { cifarWorkspace, mb, resnet18Workspace, runBenchModule } from './realSize';
import { type BenchFigure, recordBench } from './results';

interface Row {
  mode: 'fp32' | 'qat';
  steps: number;
  batch: number;
  samples: number;
  seconds: number;
  samplesPerSecond: number;
  epochSamples: number;
  epochSeconds: number;
  threads: number;
  rssMb: { loaded: number; peak: number };
}

export async function benchTrain(): Promise<void> {
  console.log('\n## one QAT epoch at real size (PT2E x86 fake quant, CPU; timed steps after one warm-up step)');
  const cifar = cifarWorkspace();
  const cases: Array<{ name: string; config: string; steps: number }> = [
    { name: 'ResNet-18 (CIFAR layout) 3x32x32', config: cifar.resnet18, steps: 10 },
    { name: 'MobileNetV2 (reduced width) 3x32x32', config: cifar.mobilenetv2, steps: 10 },
    { name: 'ResNet-18 (torchvision) 3x224x224', config: resnet18Workspace(224), steps: 3 },
  ];
  console.log(
    'model | batch | FP32 samples/s | QAT samples/s (ratio to FP32) | epoch FP32 / QAT | peak RSS FP32 / QAT | threads',
  );
  const figures: BenchFigure[] = [];
  for (const c of cases) {
    const [fp32] = runBenchModule<Row>('train_cost', [c.config, 'fp32', String(c.steps)]);
    const [qat] = runBenchModule<Row>('train_cost', [c.config, 'qat', String(c.steps)]);
    const rate = (r: Row) => r.samplesPerSecond.toFixed(2);
    const epoch = (r: Row) => `${r.epochSeconds.toFixed(1)} s`;
    console.log(
      `${c.name} | ${qat.batch} | ${rate(fp32)} | ${rate(qat)} (${(qat.samplesPerSecond / fp32.samplesPerSecond).toFixed(2)}x) | ` +
        `${epoch(fp32)} / ${epoch(qat)} (${qat.epochSamples} samples) | ${mb(fp32.rssMb.peak)} / ${mb(qat.rssMb.peak)} | ${qat.threads}`,
    );
    figures.push({
      model: `${c.name}, batch ${qat.batch}`,
      measure: 'QAT training, samples/s',
      value: rate(qat),
      baseline: `FP32 ${rate(fp32)} samples/s`,
      ratio: qat.samplesPerSecond / fp32.samplesPerSecond,
      spread: `${qat.steps} timed steps after one warm-up, ${qat.threads} threads, peak RSS ${mb(qat.rssMb.peak)}`,
    });
  }
  recordBench({
    area: 'train',
    title: 'one QAT epoch',
    ratio: "QAT's samples/s over FP32's (below 1: QAT is slower)",
    figures,
  });
}
