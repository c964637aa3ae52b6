// `npm run bench reliability`: the hostile-input figure for the parts that parse a user's files or frames.
// - ONNX: 10,000 mutated ONNX files plus the hostile shapes through slimming, decoding and layout
//   (test/reliability/onnxRun.ts).
// - Language server: one server process fed mutated QAT configs and edited Python scripts (the driver the
//   `reliability` suite uses, with more inputs). Sizes from QAT_BENCH_RELIABILITY_YAML /
//   QAT_BENCH_RELIABILITY_PYTHON (default 2,500 each).
// - Kernel: one kernel process fed the named hostile frames and mutated ones, kernel/info after each (the
//   driver the `reliability` suite uses). Mutations from QAT_BENCH_RELIABILITY_FRAMES (default 1,000).
// - Workspace: the planted and oversized workspace cases of the reliability suite's workspace part
//   (test/support/workspaceReliability.ts) at bench scale (a graph of 1M modules, a 20 MB config), each case in
//   its own server process, with the canary hover's latency and the peak RSS.
// Each prints inputs tried, crashes, hangs, the slowest input and the memory growth.
import { describe, runOnnxReliability } from '../reliability/onnxRun';
import { runKernelFrames } from '../support/kernelFrames';
import { runLanguageServerReliability } from '../support/lspReliability';
import { BENCH_SCALE, CANARY_MS, runWorkspaceReliability } from '../support/workspaceReliability';
import { type BenchFigure, recordBench } from './results';

const figures: BenchFigure[] = [];
const outcome = (inputs: number, crashes: number, hangs: number, maxMs: number, slowest: string): BenchFigure => ({
  model: '',
  measure: `${inputs} inputs`,
  value: `${crashes} crashes, ${hangs} hangs, max ${maxMs.toFixed(0)} ms (${slowest})`,
});

async function benchOnnx(): Promise<void> {
  const stats = await runOnnxReliability(10_000, 20261204, true);
  console.log(`\n## reliability (onnx)\n${describe(stats)}`);
  for (const c of stats.crashes.slice(0, 5)) console.log(`  crash: ${c}`);
  for (const h of stats.hangs.slice(0, 5)) console.log(`  hang: ${h}`);
  for (const u of stats.unexpected) console.log(`  unexpected: ${u}`);
  figures.push({ model: 'ONNX files (slimming, decoding, layout)', measure: 'outcome', value: describe(stats) });
  if (stats.crashes.length || stats.hangs.length || stats.unexpected.length) process.exitCode = 1;
}

async function benchLanguageServer(): Promise<void> {
  const yaml = Number(process.env.QAT_BENCH_RELIABILITY_YAML ?? 2500);
  const python = Number(process.env.QAT_BENCH_RELIABILITY_PYTHON ?? 2500);
  console.log(`\n## reliability: language server (${yaml} mutated configs, ${python} Python edits, one process)`);
  const r = await runLanguageServerReliability({ yaml, python });
  const mb = (kb: number) => (kb / 1024).toFixed(0);
  console.log('| inputs | crashes | hangs | logged errors | max latency | RSS start → end | growth | time |');
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(
    `| ${r.inputs} | ${r.crashes} | ${r.hangs} | ${r.errors.length} | ${r.maxLatencyMs.toFixed(0)} ms (${r.slowest}) | ` +
      `${mb(r.rssStartKb)} → ${mb(r.rssEndKb)} MB | ${(r.rssEndKb / Math.max(1, r.rssStartKb)).toFixed(2)}× | ` +
      `${r.seconds.toFixed(0)} s |`,
  );
  figures.push({
    ...outcome(r.inputs, r.crashes, r.hangs, r.maxLatencyMs, r.slowest),
    model: 'language server (configs, Python edits)',
    baseline: `RSS at start ${mb(r.rssStartKb)} MB`,
    ratio: r.rssEndKb / Math.max(1, r.rssStartKb),
    spread: `${r.seconds.toFixed(0)} s`,
  });
  for (const e of r.errors.slice(0, 5)) console.log(`  - ${e}`);
  if (r.crashes || r.hangs) process.exitCode = 1;
}

async function benchKernel(): Promise<void> {
  const mutated = Number(process.env.QAT_BENCH_RELIABILITY_FRAMES ?? 1000);
  console.log(`\n## reliability: kernel (named hostile frames + ${mutated} mutated ones, one process)`);
  const r = await runKernelFrames({ mutated });
  const mb = (kb: number) => (kb / 1024).toFixed(0);
  console.log('| inputs | crashes | hangs | wrong answers | max latency | RSS start → end | growth | time |');
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(
    `| ${r.inputs} | ${r.crashes} | ${r.hangs} | ${r.failures.length} | ${r.maxLatencyMs.toFixed(0)} ms (${r.slowest}) | ` +
      `${mb(r.rssStartKb)} → ${mb(r.rssEndKb)} MB | ${(r.rssEndKb / Math.max(1, r.rssStartKb)).toFixed(2)}× | ` +
      `${r.seconds.toFixed(0)} s |`,
  );
  figures.push({
    ...outcome(r.inputs, r.crashes, r.hangs, r.maxLatencyMs, r.slowest),
    model: 'kernel (hostile and mutated frames)',
    baseline: `RSS at start ${mb(r.rssStartKb)} MB`,
    ratio: r.rssEndKb / Math.max(1, r.rssStartKb),
    spread: `${r.seconds.toFixed(0)} s, ${r.failures.length} wrong answers`,
  });
  for (const f of r.failures.slice(0, 5)) console.log(`  - ${f}`);
  if (r.exitAfterTruncated !== 0) console.log(`  - exit after a truncated frame: ${r.exitAfterTruncated}`);
  if (r.crashes || r.hangs || r.failures.length || r.exitAfterTruncated !== 0) process.exitCode = 1;
}

async function benchWorkspace(): Promise<void> {
  console.log(
    `\n## reliability: workspace (planted and oversized files, ${BENCH_SCALE.graphModules} modules, ` +
      `${BENCH_SCALE.bigConfigBytes >> 20} MB config; canary hover bound ${CANARY_MS} ms)`,
  );
  const outcomes = await runWorkspaceReliability(BENCH_SCALE);
  console.log('| part | case | outcome | canary / case ms | peak RSS | detail |');
  console.log('|---|---|---|---|---|---|');
  for (const o of outcomes)
    console.log(
      `| ${o.part} | ${o.name} | ${o.ok ? 'ok' : 'FAIL'} | ${o.ms.toFixed(0)} | ` +
        `${o.peakRssMb === undefined ? '' : `${o.peakRssMb.toFixed(0)} MB`} | ${o.detail} |`,
    );
  const failed = outcomes.filter((o) => !o.ok);
  const slowest = outcomes.reduce((a, b) => (b.ms > a.ms ? b : a));
  figures.push({
    model: 'workspace (planted and oversized files)',
    measure: `${outcomes.length} cases`,
    value: `${failed.length} failed, slowest ${slowest.ms.toFixed(0)} ms (${slowest.name})`,
  });
  if (failed.length) process.exitCode = 1;
}

export async function benchReliability(): Promise<void> {
  await benchOnnx();
  await benchLanguageServer();
  await benchKernel();
  await benchWorkspace();
  recordBench({ area: 'reliability', title: 'hostile inputs', ratio: 'RSS at the end over RSS at the start', figures });
}
