// Per-kernel roofline of the TVM INT8 build (benchmarks/tvm_kernels.py): each fused conv/dense kernel's time,
// MACs, int8 GMAC/s and share of this CPU's int8 peak (measured by the microbenchmark in the same process,
// before and after the kernels), for ResNet-18 and MobileNetV2 at QAT_BENCH_KERNELS_SIDE (224 by default).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from '../support/paths';

const SIDE = process.env.QAT_BENCH_KERNELS_SIDE ?? '224';
const MODELS = ['resnet18', 'mobilenet_v2'];

export async function benchTvmKernels(): Promise<void> {
  for (const model of MODELS) {
    console.log(`\n## TVM INT8 per kernel: ${model} at 3x${SIDE}x${SIDE} (median of 10 runs, batch 1 and 16)`);
    const run = spawnSync(venvPython, ['-m', 'benchmarks.tvm_kernels', SIDE, model, '10'], {
      cwd: path.join(repoRoot, 'python-helpers'),
      encoding: 'utf8',
      timeout: 1_200_000,
      maxBuffer: 16 << 20,
    });
    if (run.status !== 0)
      throw new Error(`tvm_kernels ${model} failed (${run.status ?? run.signal}):\n${run.stderr.slice(-4000)}`);
    console.log(run.stdout.trimEnd());
  }
}
