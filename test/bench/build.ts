// bench/run's latency table (every runtime the kernel builds for, Inductor INT8 included) for the digits
// example and a ResNet-18 with random weights, each row's median as a ratio to PyTorch FP32 eager
// measured in the same process. `node out/test/bench/index.js build` runs it alone.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from '../support/paths';

interface Row {
  name: string;
  label: string;
  bytes: number;
  medianMs: Record<string, number>;
  p10Ms: Record<string, number>;
  p90Ms: Record<string, number>;
  ratio: Record<string, number>;
}
interface Table {
  model: string;
  input: string;
  runs: number;
  seconds: number;
  summary: string[];
  notes: string[];
  rows: Row[];
}

const RESNET_SIDE = process.env.QAT_BENCH_RESNET_SIDE ?? '112';
const DIGITS_RUNS = process.env.QAT_BENCH_DIGITS_RUNS ?? '100';
const RESNET_RUNS = process.env.QAT_BENCH_RESNET_RUNS ?? '20';

export async function benchBuild(): Promise<void> {
  console.log('\n## bench/run: latency per runtime (median ms, ratio to PyTorch FP32 eager; CPU, batch 1 and 16)');
  const config = path.join(repoRoot, 'examples', 'digits', 'digits.qat.yaml');
  const started = Date.now();
  const run = spawnSync(venvPython, ['-m', 'benchmarks.build_bench', config, RESNET_SIDE, DIGITS_RUNS, RESNET_RUNS], {
    cwd: path.join(repoRoot, 'python-helpers'),
    encoding: 'utf8',
    timeout: 1_200_000,
    maxBuffer: 16 << 20,
  });
  if (run.status !== 0)
    throw new Error(`build benchmark failed (${run.status ?? run.signal}):\n${run.stderr.slice(-4000)}`);
  const tables = run.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Table);
  for (const t of tables) {
    console.log(
      `\n### ${t.model}, input ${t.input}, ${t.runs} timed runs per row and batch (${t.seconds.toFixed(0)} s with QAT, export and builds)`,
    );
    const width = Math.max(...t.rows.map((r) => r.label.length));
    console.log(`${'runtime'.padEnd(width)} | ${'batch 1'.padStart(20)} | ${'batch 16'.padStart(20)} | size`);
    for (const r of t.rows) {
      const cell = (k: string) => `${r.medianMs[k].toFixed(3)} ms (${r.ratio[k].toFixed(2)}x)`.padStart(20);
      console.log(`${r.label.padEnd(width)} | ${cell('b1')} | ${cell('b16')} | ${(r.bytes / 2 ** 20).toFixed(2)} MiB`);
    }
    for (const line of t.summary.filter((l) => l.startsWith('Fastest'))) console.log(line);
    for (const note of t.notes) console.log(`note: ${note}`);
  }
  if (RESNET_SIDE !== '224')
    console.log(
      `note: ResNet-18 runs at ${RESNET_SIDE}x${RESNET_SIDE} input (not 224x224) to keep the run short; batch 16 is kept`,
    );
  console.log(`build suite: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
