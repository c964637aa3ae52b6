// What `npm run bench` measured, as docs/benchmarks.md: each bench area records its figures here while it prints
// them (recordBench), and index.ts writes them at the end of the run (writeBenchmarks). The areas run this time
// replace theirs in docs/benchmarks.json; the others keep the figures of their last run, with that run's CPU
// and date, so `npm run bench compare` refreshes the compare tables only.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';

/** One measured figure: a value, and where it has a baseline measured in the same run, the ratio to it. */
export interface BenchFigure {
  /** What was measured on: the model or input (e.g. `ResNet-18 3x112x112`). */
  model: string;
  /** Which figure (e.g. `ONNX Runtime INT8, batch 1`). */
  measure: string;
  /** The figure with its unit (e.g. `5.80 ms`). */
  value: string;
  /** What the ratio is to, when there is one (e.g. `PyTorch FP32 eager`). */
  baseline?: string;
  /** value against baseline as the area defines it (a speed-up or a cost: the section's `ratio` says which). */
  ratio?: number | null;
  /** The spread behind the value (e.g. `p10–p90 5.1–6.4 ms`, `median of 5 rounds`). */
  spread?: string;
  /** The machine was busy while this was measured: read it as an order of magnitude. */
  noisy?: boolean;
}

export interface BenchSection {
  /** The bench area (`npm run bench <area>`). */
  area: string;
  title: string;
  /** What the ratio column means in this section (e.g. `PyTorch FP32 eager's median over the row's`). */
  ratio?: string;
  cpu: string;
  /** YYYY-MM-DD */
  date: string;
  figures: BenchFigure[];
  notes?: string[];
}

/** The CPU's name, its core count and the int8 instruction sets the kernel picks kernels by. */
export function cpuLine(): string {
  const info = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const flags = new Set((/^flags\s*:\s*(.*)$/m.exec(info)?.[1] ?? '').split(' '));
  const isa = ['amx_int8', 'avx512_vnni', 'avx_vnni', 'avx512f', 'avx2'].filter((f) => flags.has(f));
  return `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores (${isa.join(', ') || 'no AVX2'})`;
}

const recorded: BenchSection[] = [];

/** Records a section of this run's figures (the CPU and today's date filled in unless given). */
export function recordBench(section: Omit<BenchSection, 'cpu' | 'date'> & Partial<BenchSection>): void {
  recorded.push({ cpu: cpuLine(), date: new Date().toISOString().slice(0, 10), ...section });
}

export function recordedBenches(): BenchSection[] {
  return recorded;
}

/** The sections of `previous` whose area did not run this time, then this run's, in the order of `areas`. */
export function mergeBenches(previous: BenchSection[], fresh: BenchSection[], areas: string[]): BenchSection[] {
  const ran = new Set(fresh.map((s) => s.area));
  const all = [...previous.filter((s) => !ran.has(s.area)), ...fresh];
  const rank = (s: BenchSection) => (areas.includes(s.area) ? areas.indexOf(s.area) : areas.length);
  return all
    .map((s, i) => ({ s, i }))
    .sort((a, b) => rank(a.s) - rank(b.s) || a.i - b.i)
    .map(({ s }) => s);
}

const cell = (v: string | undefined) => (v ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
const ratioText = (r: number | null | undefined) => (r === undefined || r === null ? '' : `${r.toFixed(2)}×`);
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** A section's ratio chart (docs/bench-<area>-<title>.svg), or undefined when it has no ratios. */
export function chartName(section: BenchSection): string | undefined {
  return section.figures.some((f) => typeof f.ratio === 'number')
    ? `bench-${slug(section.area)}-${slug(section.title)}.svg`
    : undefined;
}

/** A horizontal bar chart of a section's ratios (noisy bars hatched grey), a plain SVG with no script or style. */
export function ratioChartSvg(section: BenchSection): string {
  const bars = section.figures.filter((f): f is BenchFigure & { ratio: number } => typeof f.ratio === 'number');
  const row = 18;
  const labelW = 360;
  const barW = 300;
  const max = Math.max(1, ...bars.map((b) => b.ratio));
  const x1 = labelW + barW / max; // where 1× is
  const height = bars.length * row + 30;
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const parts = bars.map((b, i) => {
    const y = 20 + i * row;
    const w = Math.max(1, (b.ratio / max) * barW);
    const fill = b.noisy ? '#9e9e9e' : b.ratio >= 1 ? '#3b78c4' : '#c4693b';
    return (
      `<text x="${labelW - 6}" y="${y + 12}" text-anchor="end">${esc(`${b.model}: ${b.measure}`)}</text>` +
      `<rect x="${labelW}" y="${y + 2}" width="${w.toFixed(1)}" height="${row - 5}" fill="${fill}"/>` +
      `<text x="${(labelW + w + 4).toFixed(1)}" y="${y + 12}">${ratioText(b.ratio)}${b.noisy ? ' noisy' : ''}</text>`
    );
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelW + barW + 90}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="4" y="12" font-weight="bold">${esc(section.title)}: ratio${section.ratio ? ` (${esc(section.ratio)})` : ''}</text>`,
    ...parts,
    `<line x1="${x1.toFixed(1)}" y1="16" x2="${x1.toFixed(1)}" y2="${height - 6}" stroke="#000000" stroke-dasharray="3,3"/>`,
    '</svg>',
    '',
  ].join('\n');
}

/** docs/benchmarks.md from the sections: per section a table of model, measure, value, ratio, spread, CPU, date. */
export function renderBenchmarks(sections: BenchSection[]): string {
  const out = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (test/bench/results.ts) from what each bench area measured: each figure with the',
    'CPU and the date it was measured on, and where it has a baseline measured in the same run, the ratio to it and',
    'the spread behind it. A run of some areas (`npm run bench compare`) replaces those areas and keeps the others;',
    'the raw results are in `benchmarks.json`. *noisy* marks a figure taken while the machine was busy (calls',
    'spread wide or rounds drifted apart): read it as an order of magnitude. Older figures measured by hand, with',
    'their machines, are in [measurements.md](measurements.md); `npm run bench zoo` writes the model zoo to zoo.md.',
    '',
  ];
  if (!sections.length) out.push('No bench area has run yet.', '');
  for (const s of sections) {
    out.push(`## ${s.title}`, '', `\`npm run bench ${s.area}\`, measured ${s.date} on ${s.cpu}.`);
    if (s.ratio) out.push(`Ratio: ${s.ratio}.`);
    out.push('');
    out.push(
      '| model | measure | value | baseline | ratio | spread | CPU | date |',
      '|---|---|---:|---|---:|---|---|---|',
    );
    for (const f of s.figures)
      out.push(
        `| ${[
          f.model,
          f.measure,
          f.value,
          f.baseline,
          ratioText(f.ratio),
          [f.spread, f.noisy ? '*noisy*' : ''].filter(Boolean).join(', '),
          s.cpu,
          s.date,
        ]
          .map(cell)
          .join(' | ')} |`,
      );
    out.push('');
    for (const n of s.notes ?? []) out.push(`- ${n}`);
    if (s.notes?.length) out.push('');
    const chart = chartName(s);
    if (chart) out.push(`![${cell(s.title)}: ratios](${chart})`, '');
  }
  return out.join('\n');
}

/** Merges this run's sections into docs/benchmarks.json and writes docs/benchmarks.md and its charts. */
export function writeBenchmarks(root: string, fresh: BenchSection[], areas: string[]): string {
  const docs = path.join(root, 'docs');
  mkdirSync(docs, { recursive: true });
  const jsonPath = path.join(docs, 'benchmarks.json');
  const previous = existsSync(jsonPath)
    ? (JSON.parse(readFileSync(jsonPath, 'utf8')) as { sections: BenchSection[] }).sections
    : [];
  const sections = mergeBenches(previous, fresh, areas);
  writeFileSync(jsonPath, `${JSON.stringify({ sections }, null, 2)}\n`);
  for (const s of sections) {
    const chart = chartName(s);
    if (chart) writeFileSync(path.join(docs, chart), ratioChartSvg(s));
  }
  const md = path.join(docs, 'benchmarks.md');
  writeFileSync(md, renderBenchmarks(sections));
  return md;
}
