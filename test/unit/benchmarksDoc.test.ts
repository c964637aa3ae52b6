// docs/benchmarks.md as `npm run bench` writes it (test/bench/results.ts), on sample results: one table per
// section with the model, CPU, date, ratio and spread of each figure; a run of some areas keeps the others'
// figures; a ratio chart per section that has ratios; and the checked-in file is what its JSON renders to.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  type BenchSection,
  chartName,
  mergeBenches,
  ratioChartSvg,
  renderBenchmarks,
  writeBenchmarks,
} from '../bench/results';
import { repoRoot } from './helpers/builder';

const AREAS = ['graph', 'compare', 'build'];
const build: BenchSection = {
  area: 'build',
  title: 'bench/run latency: ResNet-18, input 3x112x112',
  ratio: "PyTorch FP32 eager's median over the row's (above 1: faster)",
  cpu: 'AMD EPYC 9B14, 2 cores (avx512_vnni, avx512f, avx2)',
  date: '2026-01-02',
  figures: [
    {
      model: 'ResNet-18 3x112x112',
      measure: 'ONNX Runtime INT8, batch 1',
      value: '2.400 ms',
      baseline: 'PyTorch FP32 eager',
      ratio: 5.34,
      spread: 'p10–p90 2.300–2.600 ms, 5 rounds',
    },
    {
      model: 'ResNet-18 3x112x112',
      measure: 'TVM INT8 | folded, batch 16',
      value: '93.900 ms',
      ratio: 1.04,
      spread: 'p10–p90 80–140 ms',
      noisy: true,
    },
  ],
  notes: ['threads: PyTorch 2'],
};
const compare: BenchSection = {
  area: 'compare',
  title: 'compare/layers cost: digits CNN',
  cpu: 'Intel Xeon, 2 cores (avx2)',
  date: '2026-01-01',
  figures: [{ model: 'digits CNN, 64 samples', measure: 'ours, propagated vs FP32', value: '12.0 ms', ratio: 1.11 }],
};
const reliability: BenchSection = {
  area: 'reliability',
  title: 'hostile inputs',
  cpu: 'Intel Xeon, 2 cores (avx2)',
  date: '2026-01-01',
  figures: [{ model: 'ONNX files', measure: 'outcome', value: '0 crashes, 0 hangs' }],
};

test('each section is a table of model, measure, value, baseline, ratio, spread, CPU and date', () => {
  const md = renderBenchmarks([build]);
  assert.match(md, /^# Benchmarks\n/);
  assert.ok(md.includes(`## ${build.title}\n`));
  assert.ok(md.includes('| model | measure | value | baseline | ratio | spread | CPU | date |'));
  assert.ok(
    md.includes(
      '| ResNet-18 3x112x112 | ONNX Runtime INT8, batch 1 | 2.400 ms | PyTorch FP32 eager | 5.34× | p10–p90 2.300–2.600 ms, 5 rounds | AMD EPYC 9B14, 2 cores (avx512_vnni, avx512f, avx2) | 2026-01-02 |',
    ),
    md,
  );
  // A `|` in a cell is escaped, and a noisy figure says so in its spread.
  assert.ok(md.includes('| TVM INT8 \\| folded, batch 16 | 93.900 ms |  | 1.04× | p10–p90 80–140 ms, *noisy* |'), md);
  assert.ok(md.includes('- threads: PyTorch 2'));
  assert.ok(md.includes(`![${build.title}: ratios](${chartName(build)})`));
  // A section without ratios gets no chart and an empty ratio cell.
  const plain = renderBenchmarks([reliability]);
  assert.equal(chartName(reliability), undefined);
  assert.doesNotMatch(plain, /!\[/);
  assert.ok(
    plain.includes('| ONNX files | outcome | 0 crashes, 0 hangs |  |  |  | Intel Xeon, 2 cores (avx2) | 2026-01-01 |'),
  );
});

test('a run of some areas replaces those and keeps the others, in the bench order', () => {
  const newer = { ...compare, date: '2026-02-01', figures: [{ ...compare.figures[0], ratio: 1.2 }] };
  const merged = mergeBenches([reliability, build, compare], [newer], AREAS);
  assert.deepEqual(
    merged.map((s) => `${s.area} ${s.date}`),
    ['compare 2026-02-01', 'build 2026-01-02', 'reliability 2026-01-01'],
  );
});

test('the ratio chart is a plain SVG with one bar per ratio', () => {
  const svg = ratioChartSvg(build);
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.doesNotMatch(svg, /<script|<style|on\w+=/);
  assert.equal(svg.match(/<rect x=/g)?.length, 2);
  assert.ok(svg.includes('5.34×') && svg.includes('1.04× noisy'));
  assert.ok(svg.includes('TVM INT8 | folded'), 'labels are text, not markup');
});

test('writeBenchmarks writes the markdown, its JSON and the charts, and a later partial run keeps the rest', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'bench-doc-'));
  try {
    writeBenchmarks(root, [build, reliability], AREAS);
    const md = path.join(root, 'docs', 'benchmarks.md');
    assert.ok(existsSync(path.join(root, 'docs', chartName(build)!)));
    writeBenchmarks(root, [compare], AREAS);
    const text = readFileSync(md, 'utf8');
    for (const s of [build, reliability, compare]) assert.ok(text.includes(`## ${s.title}\n`), s.title);
    const json = JSON.parse(readFileSync(path.join(root, 'docs', 'benchmarks.json'), 'utf8')) as {
      sections: BenchSection[];
    };
    assert.deepEqual(
      json.sections.map((s) => s.area),
      ['compare', 'build', 'reliability'],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('docs/benchmarks.md is what docs/benchmarks.json renders to', () => {
  const json = JSON.parse(readFileSync(path.join(repoRoot, 'docs', 'benchmarks.json'), 'utf8')) as {
    sections: BenchSection[];
  };
  assert.equal(readFileSync(path.join(repoRoot, 'docs', 'benchmarks.md'), 'utf8'), renderBenchmarks(json.sections));
  for (const s of json.sections) {
    const chart = chartName(s);
    if (chart) assert.equal(readFileSync(path.join(repoRoot, 'docs', chart), 'utf8'), ratioChartSvg(s));
  }
});
