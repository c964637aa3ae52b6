// analyze/sensitivity and search/mixed-precision against one fake-quant validation pass of the same trained model
// (digits example, measured in the same process and run).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from '../support/paths';

interface Row {
  layers: number;
  samples: number;
  candidates: number;
  front: number;
  seconds: { onePass: number; sensitivity: number; search: number };
  ratios: { sensitivity: number; search: number };
  searchPerCandidate: number;
}

export async function benchSearch(): Promise<void> {
  console.log(
    '\n## sensitivity and mixed-precision search cost (digits CNN, PT2E x86, ONNX Runtime CPU; model trained once)',
  );
  const config = path.join(repoRoot, 'examples', 'digits', 'digits.qat.yaml');
  const run = spawnSync(venvPython, ['-m', 'benchmarks.search_cost', config, '24'], {
    cwd: path.join(repoRoot, 'python-helpers'),
    encoding: 'utf8',
    timeout: 900_000,
    maxBuffer: 16 << 20,
  });
  if (run.status !== 0)
    throw new Error(`search benchmark failed (${run.status ?? run.signal}):\n${run.stderr.slice(-4000)}`);
  const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
  if (!line) throw new Error(`search benchmark printed no result:\n${run.stdout.slice(-2000)}`);
  const r = JSON.parse(line) as Row;
  const s = (v: number) => `${v.toFixed(2)} s`;
  console.log(`layers ${r.layers}, ${r.samples} validation samples`);
  console.log(`one fake-quant validation pass: ${s(r.seconds.onePass)} (the baseline)`);
  console.log(`analyze/sensitivity:            ${s(r.seconds.sensitivity)} (${r.ratios.sensitivity.toFixed(1)}x)`);
  console.log(
    `search/mixed-precision:         ${s(r.seconds.search)} (${r.ratios.search.toFixed(1)}x): ${r.candidates} candidates (${s(r.searchPerCandidate)} each, ONNX Runtime build and timing included), ${r.front} on the front`,
  );
}
