// compare/layers against two plain forward passes (FP32 + INT8) and the Numeric Suite's PT2E flow
// (torchao's numeric debugger), on the digits example in the same process and run.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from '../support/paths';

interface Row {
  samples: number;
  batches: number;
  repeats: number;
  threads: number;
  layers: number;
  seconds: Record<string, number>;
  ratios: Record<string, number>;
}

export async function benchCompare(): Promise<void> {
  console.log('\n## compare/layers cost (digits CNN, PT2E x86, CPU; median of repeats after a warm-up)');
  const config = path.join(repoRoot, 'examples', 'digits', 'digits.qat.yaml');
  const run = spawnSync(venvPython, ['-m', 'benchmarks.compare_cost', config, '64,256', '7'], {
    cwd: path.join(repoRoot, 'python-helpers'),
    encoding: 'utf8',
    timeout: 900_000,
    maxBuffer: 16 << 20,
  });
  if (run.status !== 0)
    throw new Error(`compare benchmark failed (${run.status ?? run.signal}):\n${run.stderr.slice(-4000)}`);
  const rows = run.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Row);
  const ms = (s: number) => `${(s * 1000).toFixed(1)} ms`;
  console.log(
    'samples | layers | two forwards | ours, propagated vs FP32 | ours, full (propagated+local, FP32+QAT float) | torchao numeric debugger',
  );
  for (const r of rows) {
    const cell = (k: string) => `${ms(r.seconds[k])} (${r.ratios[k].toFixed(2)}x)`;
    console.log(
      `${String(r.samples).padStart(7)} | ${String(r.layers).padStart(6)} | ${ms(r.seconds.twoForwards).padStart(12)} | ${cell('oursPropagated')} | ${cell('oursFull')} | ${cell('numericDebugger')}`,
    );
  }
  const worst = Math.max(...rows.map((r) => r.ratios.oursPropagated));
  console.log(
    `goal: the Numeric Suite's propagated comparison within 1.3x two forwards -> ours ${worst.toFixed(2)}x at worst: ${worst <= 1.3 ? 'meets' : 'misses'} the goal`,
  );
}
