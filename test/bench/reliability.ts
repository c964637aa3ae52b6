// `npm run bench reliability`: the language server's share of the hostile-input figure. One server process,
// mutated QAT configs and edited Python scripts (the driver the `reliability` suite uses, with more inputs);
// prints inputs tried, crashes, hangs, the slowest request and the memory growth. Sizes from
// QAT_BENCH_RELIABILITY_YAML / QAT_BENCH_RELIABILITY_PYTHON (default 2,500 each).
import { runLanguageServerReliability } from '../support/lspReliability';

export async function benchReliability(): Promise<void> {
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
  for (const e of r.errors.slice(0, 5)) console.log(`  - ${e}`);
  if (r.crashes || r.hangs) process.exitCode = 1;
}
