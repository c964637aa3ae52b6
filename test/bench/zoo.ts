// `npm run bench zoo`: the model-zoo table, each public architecture (benchmarks/zoo_models.py) through every kernel
// stage with each stage's time, measured in the zoo environment, one process per model. The table is printed and
// written to docs/zoo.md with the machine it was measured on.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot, zooPython } from '../support/paths';
import { runBenchModule } from './realSize';
import { cpuLine, recordBench } from './results';

interface Stage {
  ok: boolean;
  seconds: number;
  kind?: string;
  message?: string;
}
interface Row {
  model: string;
  title: string;
  stages: Record<string, Stage>;
  torch: string;
  threads: number;
}

const models = (): string[] =>
  execFileSync(zooPython, ['-c', 'from benchmarks.zoo_models import MODELS; print(" ".join(MODELS))'], {
    cwd: path.join(repoRoot, 'python-helpers'),
    encoding: 'utf8',
  })
    .trim()
    .split(' ');

export async function benchZoo(): Promise<void> {
  console.log('\n## the model zoo: public architectures through every stage (random weights, small inputs)');
  const rows: Row[] = [];
  for (const model of models()) {
    const folder = mkdtempSync(path.join(tmpdir(), `qat-zoo-${model}-`));
    rows.push(...runBenchModule<Row>('zoo', [model, folder], 3_600_000, zooPython));
    console.log(`${model}: ${Object.values(rows[rows.length - 1].stages).filter((s) => s.ok).length} stages ok`);
  }
  const stages = Object.keys(rows[0]?.stages ?? {});
  const cell = (s: Stage | undefined) =>
    !s ? '' : s.ok ? `${s.seconds.toFixed(1)} s` : `✗ ${s.kind ?? 'error'} (${s.seconds.toFixed(1)} s)`;
  const table = [
    `| model | ${stages.join(' | ')} | total |`,
    `|---|${stages.map(() => '---:').join('|')}|---:|`,
    ...rows.map((r) => {
      const total = Object.values(r.stages).reduce((t, s) => t + s.seconds, 0);
      return `| ${r.title} | ${stages.map((s) => cell(r.stages[s])).join(' | ')} | ${total.toFixed(0)} s |`;
    }),
  ].join('\n');
  const failures = rows.flatMap((r) =>
    Object.entries(r.stages)
      .filter(([, s]) => !s.ok)
      .map(([stage, s]) => `- ${r.title}, ${stage}: ${s.kind}: ${s.message}`),
  );
  const machine = `${cpuLine()}; torch ${rows[0]?.torch ?? '?'}, ${rows[0]?.threads ?? '?'} threads`;
  console.log(table);
  if (failures.length) console.log(failures.join('\n'));
  recordBench({
    area: 'zoo',
    title: 'The model zoo: every stage, wall time',
    figures: rows.map((r) => {
      const stagesRun = Object.values(r.stages);
      return {
        model: r.title,
        measure: `all ${stagesRun.length} stages (${stagesRun.filter((s) => s.ok).length} ok)`,
        value: `${stagesRun.reduce((t, s) => t + s.seconds, 0).toFixed(0)} s`,
        spread: 'one run',
      };
    }),
    notes: ['Each stage with its time, and what the user sees where one stopped: [zoo.md](zoo.md).'],
  });
  mkdirSync(path.join(repoRoot, 'docs'), { recursive: true });
  writeFileSync(
    path.join(repoRoot, 'docs', 'zoo.md'),
    [
      '# The model zoo',
      '',
      'Written by `npm run bench zoo` (test/bench/zoo.ts): each public architecture of',
      '`python-helpers/benchmarks/zoo_models.py` (random weights, num_classes 10, small inputs, synthetic data) as a',
      "user's workspace, through every kernel stage in order, one process per model; each cell is the stage's wall",
      'time (the first stage that needs the trained model pays for training it). The zoo suite (`test/zoo`, part of',
      '`npm test`) asserts the same runs: parity with PyTorch INT8 and no internal error.',
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}.`,
      '',
      table,
      '',
      ...(failures.length ? ['Stages that stopped, with what the user sees:', '', ...failures, ''] : []),
    ].join('\n'),
  );
}
