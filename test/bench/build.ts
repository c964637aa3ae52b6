// bench/run's latency table (every runtime the kernel builds for, Inductor INT8 included) for the digits
// example and a ResNet-18 with random weights, each row's median as a ratio to PyTorch FP32 eager
// measured in the same process. `node out/test/bench/index.js build` runs it alone.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from '../support/paths';
import { recordBench } from './results';

interface Row {
  name: string;
  label: string;
  bytes: number;
  medianMs: Record<string, number>;
  p10Ms: Record<string, number>;
  p90Ms: Record<string, number>;
  ratio: Record<string, number>;
  noisy: Record<string, boolean>;
}
interface Table {
  model: string;
  input: string;
  runs: number;
  seconds: number;
  summary: string[];
  notes: string[];
  threads: { cpus: number; torch: number | null; onnxruntime: number | null; tvm: number | null };
  rounds: number;
  rows: Row[];
  macs: Record<string, number>;
  gmacs: Record<string, Record<string, number>>;
}
interface Peak {
  cpu: { model: string; int8DotProducts: string[] };
  note?: string;
  rows: { name: string; label: string; gmacs: number | null; threads: number | null; noisy?: boolean; note?: string }[];
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
  const lines = run.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Table | { peak: Peak });
  const peak = lines.find((l): l is { peak: Peak } => 'peak' in l)?.peak;
  const tables = lines.filter((l): l is Table => !('peak' in l));
  // Shares are of the highest peak measured here: AMX-INT8 or VNNI where the CPU has them (ONNX Runtime's and
  // oneDNN's kernels use them, so a share of the AVX2 peak would read over 100 %), else AVX2.
  const ceiling = (peak?.rows ?? [])
    .filter((r): r is typeof r & { gmacs: number } => r.gmacs !== null)
    .reduce<{ gmacs: number; name: string } | undefined>((a, r) => (a && a.gmacs >= r.gmacs ? a : r), undefined);
  const ceilingName =
    ({ vnni: 'AVX512-VNNI', amx: 'AMX-INT8' } as Record<string, string>)[ceiling?.name ?? ''] ?? 'AVX2';
  if (peak) {
    console.log(`\n### int8 peak of this CPU (${peak.cpu.model}; microbenchmark on every usable CPU)`);
    for (const r of peak.rows)
      console.log(
        `${r.label}: ${r.gmacs === null ? r.note : `${r.gmacs.toFixed(1)} GMAC/s on ${r.threads} threads (best of 3 rounds)${r.noisy ? ' noisy: the rounds differ, the machine was busy' : ''}`}`,
      );
    if (peak.note) console.log(`note: ${peak.note}`);
  }
  for (const t of tables) {
    console.log(
      `\n### ${t.model}, input ${t.input}, ${t.runs} timed runs per row and batch (${t.seconds.toFixed(0)} s with QAT, export and builds)`,
    );
    const width = Math.max(...t.rows.map((r) => r.label.length));
    const noisy = (r: Row, k: string) => r.noisy[k] || t.rows[0].noisy[k];
    const cell = (r: Row, k: string) =>
      `${r.medianMs[k].toFixed(3)} [${r.p10Ms[k].toFixed(3)}-${r.p90Ms[k].toFixed(3)}] (${r.ratio[k].toFixed(2)}x)${noisy(r, k) ? ' noisy' : ''}`;
    const cw = Math.max(...t.rows.flatMap((r) => [cell(r, 'b1').length, cell(r, 'b16').length]));
    console.log("median ms [p10-p90] (ratio to PyTorch FP32 eager: its median over the row's)");
    console.log(`${'runtime'.padEnd(width)} | ${'batch 1'.padStart(cw)} | ${'batch 16'.padStart(cw)} | size`);
    for (const r of t.rows)
      console.log(
        `${r.label.padEnd(width)} | ${cell(r, 'b1').padStart(cw)} | ${cell(r, 'b16').padStart(cw)} | ${(r.bytes / 2 ** 20).toFixed(2)} MiB`,
      );
    const th = t.threads;
    console.log(
      `threads: PyTorch ${th.torch}, ONNX Runtime ${th.onnxruntime}, TVM ${th.tvm ?? 'default'} of ${th.cpus} CPUs; ${t.rounds} interleaved rounds after warm-up`,
    );
    for (const line of t.summary.filter((l) => l.startsWith('Fastest'))) console.log(line);
    const macs = (k: string) => `${(t.macs[k] / 1e6).toFixed(1)} M`;
    console.log(`int8 GMAC/s at the median, whole model (${macs('b1')} / ${macs('b16')} MACs at batch 1 / 16):`);
    for (const [name, g] of Object.entries(t.gmacs)) {
      const label = t.rows.find((r) => r.name === name)?.label ?? name;
      const share = (k: string) =>
        ceiling ? ` (${((g[k] / ceiling.gmacs) * 100).toFixed(0)} % of the ${ceilingName} peak)` : '';
      console.log(`  ${label}: ${g.b1.toFixed(2)}${share('b1')} / ${g.b16.toFixed(2)}${share('b16')}`);
    }
    for (const note of t.notes) console.log(`note: ${note}`);
    recordBench({
      area: 'build',
      title: `bench/run latency: ${t.model}, input ${t.input}`,
      ratio: "PyTorch FP32 eager's median over the row's (above 1: faster)",
      figures: t.rows.flatMap((r) =>
        (['b1', 'b16'] as const).map((k) => ({
          model: `${t.model} ${t.input}`,
          measure: `${r.label}, batch ${k.slice(1)}`,
          value: `${r.medianMs[k].toFixed(3)} ms`,
          baseline: 'PyTorch FP32 eager',
          ratio: r.ratio[k],
          spread: `p10–p90 ${r.p10Ms[k].toFixed(3)}–${r.p90Ms[k].toFixed(3)} ms, ${t.rounds} rounds`,
          noisy: noisy(r, k),
        })),
      ),
      notes: [
        `threads: PyTorch ${t.threads.torch}, ONNX Runtime ${t.threads.onnxruntime}, TVM ${t.threads.tvm ?? 'default'} of ${t.threads.cpus} CPUs; ${t.runs} timed runs per row and batch`,
        ...t.summary.filter((l) => l.startsWith('Fastest')),
        ...t.notes,
      ],
    });
  }
  if (RESNET_SIDE !== '224')
    console.log(
      `note: ResNet-18 runs at ${RESNET_SIDE}x${RESNET_SIDE} input (not 224x224) to keep the run short; batch 16 is kept`,
    );
  console.log(`build suite: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
