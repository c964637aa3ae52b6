// The properties panel of the selected node: op, module, metrics, attributes, tensors and, for Q/DQ,
// the quantization parameters with the formula that maps stored integers back to real values.
import type { GroupWeightError, Histogram, LayerHistograms, LayerResult } from '../../protocol/kernel';
import { driftSection, type LayerDrift } from './drift';
import { histogramSvg } from './histogram';
import { weightHeatSvg } from './weightHeat';
import { executedRows } from '../graph/executed';
import { dimsText, isQdq, type Graph, type GraphNode, type TensorInfo } from '../importers/types';
import type { WeightStats } from '../../protocol/webview';
import { quantParams } from '../graph/qdq';
import { inputRoles } from './inputRoles';

export { quantParams };

/** Up to this many values are written inline after a tensor's type; more: the first PREVIEW_VALUES, and all of
 * them behind an expander (a 336-channel bias printed inline filled the panel). */
export const INLINE_VALUES = 8;
export const PREVIEW_VALUES = 6;

function section(title: string, rows: Array<[string, string]>): HTMLElement {
  const wrap = document.createElement('section');
  const h = document.createElement('h3');
  h.textContent = title;
  const dl = document.createElement('dl');
  for (const [k, v] of rows) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    dl.append(dt, dd);
  }
  wrap.append(h, dl);
  return wrap;
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toPrecision(6));

function tensorText(t: TensorInfo | undefined): string {
  if (!t) return '';
  // A negative dim is one the exporter left dynamic (the batch, usually): its name where the file gives one.
  const shape = `${t.dtype}[${dimsText(t) || 'scalar'}]`;
  if (t.problem) return `${shape} (invalid: ${t.problem})`;
  if (!t.values) return shape;
  if (t.values.length === 1) return `${shape} ${fmt(t.values[0])}`;
  const n = t.values.length > INLINE_VALUES ? PREVIEW_VALUES : t.values.length;
  return `${shape} [${Array.from(t.values.slice(0, n), fmt).join(', ')}${t.values.length > n ? ', …' : ''}]`;
}

/** Every value of a tensor, folded away until asked for. */
function allValues(label: string, t: TensorInfo | undefined): HTMLElement | undefined {
  if (!t?.values || t.values.length <= INLINE_VALUES) return undefined;
  const all = document.createElement('details');
  all.className = 'all-values';
  const summary = document.createElement('summary');
  summary.textContent = `All ${t.values.length} ${label}`;
  const pre = document.createElement('pre');
  pre.textContent = Array.from(t.values, fmt).join(', ');
  all.append(summary, pre);
  return all;
}

/** The host's summary of a large weight, or one computed here from the values of a small constant. */
export function statsOf(t: TensorInfo | undefined): WeightStats | undefined {
  if (t?.stats) return t.stats;
  const v = t?.values;
  if (!v || v.length < 2) return undefined;
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let sumSq = 0;
  for (const x of v) {
    min = Math.min(min, x);
    max = Math.max(max, x);
    sum += x;
    sumSq += x * x;
  }
  const mean = sum / v.length;
  const histogram = new Array<number>(HISTOGRAM_BINS).fill(0);
  const scale = max > min ? HISTOGRAM_BINS / (max - min) : 0;
  for (const x of v) histogram[Math.min(HISTOGRAM_BINS - 1, Math.floor((x - min) * scale))]++;
  return { count: v.length, min, max, mean, std: Math.sqrt(Math.max(0, sumSq / v.length - mean * mean)), histogram };
}

const HISTOGRAM_BINS = 32;

function weightSection(name: string, s: WeightStats, t: TensorInfo | undefined, role?: string): HTMLElement {
  const rows: Array<[string, string]> = [];
  if (role) rows.push(['input', role]);
  if (t) rows.push(['type', `${t.dtype}[${dimsText(t) || 'scalar'}]`]);
  if (t?.problem) rows.push(['invalid', t.problem]);
  if (s.count !== undefined) rows.push(['values', String(s.count)]);
  if (s.min !== undefined && s.max !== undefined) rows.push(['range', `${fmt(s.min)} … ${fmt(s.max)}`]);
  if (s.mean !== undefined) rows.push(['mean ± std', `${fmt(s.mean)} ± ${fmt(s.std ?? 0)}`]);
  if (s.bytes !== undefined) rows.push(['kept in the extension host', `${(s.bytes / 1024).toFixed(1)} KB`]);
  const sec = section(`Values of ${name}`, rows);
  sec.classList.add('weights');
  if (s.histogram?.length) sec.append(histogramSvg(s.histogram, s.min ?? 0, s.max ?? 0));
  // Every value, on demand (the file's small tensors; larger ones stayed in the extension host).
  const all = allValues('values', t);
  if (all) sec.append(all);
  return sec;
}

function layerHistogramSection(title: string, h: Histogram): HTMLElement {
  const sec = section(title, [
    ['values', String(h.count)],
    ['data range', `${fmt(h.min)} … ${fmt(h.max)}`],
    [
      'representable',
      `${fmt(h.representable[0])} … ${fmt(h.representable[1])}${h.perChannel ? ' (widest channel)' : ''}`,
    ],
    ...(h.observed ? [['observed', `${fmt(h.observed[0])} … ${fmt(h.observed[1])}`] as [string, string]] : []),
    ['clipped', `${(h.clippedFraction * 100).toFixed(2)} %`],
  ]);
  sec.classList.add('layer-histogram');
  sec.append(histogramSvg(h.counts, h.range[0], h.range[1]));
  return sec;
}

const db = (v: number | null) => (v === null ? 'exact' : `${v.toFixed(1)} dB`);

/** A torchao layer's weight as stored against its QAT-float weight, per quantization group, with the heat map. */
function weightErrorSection(w: GroupWeightError, scheme: string | undefined): HTMLElement {
  const sec = section('Weight error per group', [
    ...(scheme ? [['scheme', scheme] as [string, string]] : []),
    ['groups', `${w.rows} rows × ${w.groups} of ${w.groupSize}`],
    ['weight SQNR', db(w.sqnr)],
    ['median group', db(w.median)],
    ['worst group', `${db(w.worst.sqnr)} at row ${w.worst.row}, group ${w.worst.group}`],
  ]);
  sec.classList.add('weight-error');
  sec.append(weightHeatSvg(w));
  return sec;
}

export function showProperties(
  host: HTMLElement,
  node: GraphNode,
  graph: Graph,
  layer: LayerResult | undefined,
  histograms?: LayerHistograms,
  drift?: LayerDrift,
): void {
  const type = node.module ? graph.modules?.[node.module]?.type : undefined;
  const parts: HTMLElement[] = [
    section(node.op, [
      ['name', node.name],
      ...(node.module ? [['module', node.module] as [string, string]] : []),
      ...(type ? [['type', type] as [string, string]] : []),
      ...(node.precision ? [['precision', node.precision] as [string, string]] : []),
      ...(node.source ? [['source', `${node.source.file}:${node.source.line}`] as [string, string]] : []),
    ]),
  ];
  if (node.executed) {
    const sec = section('As executed', executedRows(node.executed));
    sec.classList.add('executed');
    parts.push(sec);
  }
  if (layer) {
    parts.push(
      section(`FP32 vs INT8 (${layer.group.join('+')})`, [
        ['cosine', layer.cosine.toFixed(5)],
        ['SQNR', `${layer.sqnr.toFixed(2)} dB`],
        ['MSE', layer.mse.toExponential(3)],
        ['max |Δ|', fmt(layer.maxAbs)],
        ...(layer.source ? [['source', `${layer.source.file}:${layer.source.line}`] as [string, string]] : []),
      ]),
    );
  }
  if (layer?.weightError) parts.push(weightErrorSection(layer.weightError, layer.scheme));
  if (histograms?.weight) parts.push(layerHistogramSection('Weight (QAT)', histograms.weight));
  if (histograms?.activation) parts.push(layerHistogramSection('Input activation', histograms.activation));
  if (drift) parts.push(driftSection(drift));
  if (isQdq(node.op) || node.qparams) {
    const q = quantParams(node, graph);
    const perChannel = (q.scale?.values?.length ?? 1) > 1;
    const rows: Array<[string, string]> = [
      ['scale', tensorText(q.scale)],
      ['zero_point', tensorText(q.zeroPoint)],
    ];
    if (perChannel) rows.push(['axis', q.axis ?? '1']);
    if (q.range) rows.push(['range', `${q.range[0]} … ${q.range[1]}`]);
    const sec = section(perChannel ? 'Quantization (per channel)' : 'Quantization (per tensor)', rows);
    const formula = document.createElement('div');
    formula.className = 'formula';
    formula.textContent = 'real = scale * (q - zero_point)';
    sec.insertBefore(formula, sec.querySelector('dl'));
    for (const all of [allValues('scales', q.scale), allValues('zero points', q.zeroPoint)]) if (all) sec.append(all);
    parts.push(sec);
  }
  const attrs = Object.entries(node.attributes ?? {});
  if (attrs.length) parts.push(section('Attributes', attrs));
  // Named by role where the op's schema names them (QLinearConv: x, x_scale, ..., B), else numbered.
  const roles = inputRoles(node, graph.opsets, node.inputs.length);
  const inputs = section(
    'Inputs',
    node.inputs.map((t, i) => [roles?.[i] ?? String(i), t ? `${t} ${tensorText(graph.tensors.get(t))}` : '(none)']),
  );
  inputs.classList.add('inputs');
  parts.push(inputs);
  node.inputs.forEach((name, i) => {
    const t = graph.tensors.get(name);
    const stats = statsOf(t);
    if (stats) parts.push(weightSection(name, stats, t, roles?.[i]));
  });
  parts.push(
    section(
      'Outputs',
      node.outputs.map((t, i) => [String(i), `${t} ${tensorText(graph.tensors.get(t))}`.trimEnd()]),
    ),
  );
  host.replaceChildren(...parts);
  host.hidden = false;
}
