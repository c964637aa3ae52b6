// The properties panel of the selected node: op, module, metrics, attributes, tensors and, for Q/DQ,
// the quantization parameters with the formula that maps stored integers back to real values.
import type { LayerResult } from '../../protocol/kernel';
import { isQdq, type Graph, type GraphNode, type TensorInfo } from '../importers/types';
import { quantParams } from './qdq';

export { quantParams };

const MAX_VALUES = 64;

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
  // A negative dim is one the exporter left dynamic (the batch, usually).
  const shape = `${t.dtype}[${t.dims.map((d) => (d < 0 ? '?' : d)).join('×') || 'scalar'}]`;
  if (!t.values) return shape;
  const shown = t.values.slice(0, MAX_VALUES).map(fmt).join(', ');
  return `${shape} ${t.values.length > 1 ? `[${shown}${t.values.length > MAX_VALUES ? ', …' : ''}]` : shown}`;
}

export function showProperties(host: HTMLElement, node: GraphNode, graph: Graph, layer: LayerResult | undefined): void {
  const type = node.module ? graph.modules?.[node.module]?.type : undefined;
  const parts: HTMLElement[] = [section(node.op, [
    ['name', node.name],
    ...(node.module ? [['module', node.module] as [string, string]] : []),
    ...(type ? [['type', type] as [string, string]] : []),
    ...(node.precision ? [['precision', node.precision] as [string, string]] : []),
    ...(node.source ? [['source', `${node.source.file}:${node.source.line}`] as [string, string]] : []),
  ])];
  if (layer) {
    parts.push(section(`FP32 vs INT8 (${layer.group.join('+')})`, [
      ['cosine', layer.cosine.toFixed(5)], ['SQNR', `${layer.sqnr.toFixed(2)} dB`], ['MSE', layer.mse.toExponential(3)], ['max |Δ|', fmt(layer.maxAbs)],
      ...(layer.source ? [['source', `${layer.source.file}:${layer.source.line}`] as [string, string]] : []),
    ]));
  }
  if (isQdq(node.op) || node.qparams) {
    const q = quantParams(node, graph);
    const perChannel = (q.scale?.values?.length ?? 1) > 1;
    const rows: Array<[string, string]> = [['scale', tensorText(q.scale)], ['zero_point', tensorText(q.zeroPoint)]];
    if (perChannel) rows.push(['axis', q.axis ?? '1']);
    if (q.range) rows.push(['range', `${q.range[0]} … ${q.range[1]}`]);
    const sec = section(perChannel ? 'Quantization (per channel)' : 'Quantization (per tensor)', rows);
    const formula = document.createElement('div');
    formula.className = 'formula';
    formula.textContent = 'real = scale * (q - zero_point)';
    sec.insertBefore(formula, sec.querySelector('dl'));
    parts.push(sec);
  }
  const attrs = Object.entries(node.attributes ?? {});
  if (attrs.length) parts.push(section('Attributes', attrs));
  parts.push(section('Inputs', node.inputs.map((t, i) => [String(i), `${t} ${tensorText(graph.tensors.get(t))}`])));
  parts.push(section('Outputs', node.outputs.map((t, i) => [String(i), t])));
  host.replaceChildren(...parts);
  host.hidden = false;
}
