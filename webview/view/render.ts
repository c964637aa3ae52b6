// SVG rendering with pan (drag) and zoom (wheel) through the viewBox.
import type { LayerResult } from '../../protocol/kernel';
import { isQdq, type Graph, type GraphNode } from '../importers/types';
import { fitView, type Layout } from './layout';
import { bandOf, layerFor } from './metrics';

const SVG = 'http://www.w3.org/2000/svg';
const el = <K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};

export interface RenderStats { nodes: number; qdq: number; coloured: number }

export interface RenderOptions {
  onSelect?: (nodeId: string) => void;
  /** VS Code's webview context-menu data for a node (`data-vscode-context`). */
  contextFor?: (node: GraphNode, layer: LayerResult | undefined) => object | undefined;
}

/** What a renderer hands back: counts, fit-to-view and programmatic selection (search, keyboard). */
export interface Rendered { stats: RenderStats; fit: () => void; select: (nodeId: string) => void }

export function renderGraph(host: HTMLElement, graph: Graph, layout: Layout, layers: LayerResult[], threshold: number, opts: RenderOptions = {}): Rendered {
  const byModule = new Map(layers.map((l) => [l.module, l]));
  const svg = el('svg', { role: 'img', 'aria-label': `Graph ${graph.name}` });
  const root = el('g');
  svg.append(root);
  const labels = new Map(graph.edges.filter((e) => e.label).map((e) => [`${e.from}>${e.to}`, e.label!]));
  for (const e of layout.edges) {
    if (!e.points.length) continue;
    const label = labels.get(`${e.from}>${e.to}`);
    root.append(el('path', { class: label ? 'edge int8' : 'edge', d: 'M' + e.points.map((p) => `${p.x},${p.y}`).join(' L') }));
    if (label) {
      const mid = e.points[Math.floor(e.points.length / 2)];
      const t = el('text', { class: 'edge-label', x: mid.x + 4, y: mid.y });
      t.textContent = label;
      root.append(t);
    }
  }
  const stats: RenderStats = { nodes: 0, qdq: 0, coloured: 0 };
  for (const n of graph.nodes) {
    const p = layout.nodes.get(n.id);
    if (!p) continue;
    const qdq = isQdq(n.op);
    const layer = n.kind === 'op' && !qdq ? layerFor(n, byModule) : undefined;
    const g = el('g', { class: `node ${n.kind}${qdq ? ' qdq' : ''}${layer ? ' layer' : ''}`, 'data-id': n.id, transform: `translate(${p.x - p.width / 2},${p.y - p.height / 2})`, 'data-op': n.op, 'data-name': n.name });
    const rect = el('rect', { width: p.width, height: p.height, rx: qdq ? 10 : 3 });
    if (qdq) rect.style.fill = 'var(--vscode-charts-purple, #b180d7)';
    else if (layer) {
      rect.style.fill = bandOf(layer.cosine, threshold).colour;
      g.setAttribute('data-cosine', layer.cosine.toFixed(5));
      g.setAttribute('data-module', layer.module);
      const context = opts.contextFor?.(n, layer);
      if (context) g.setAttribute('data-vscode-context', JSON.stringify(context));
    } else if (n.kind === 'op') rect.style.fill = 'var(--vscode-editorWidget-background, #eee)';
    const label = el('text', { x: p.width / 2, y: n.module ? 15 : p.height / 2 + 4, 'text-anchor': 'middle' });
    label.textContent = qdq ? (n.op === 'QuantizeLinear' ? 'Q  QuantizeLinear' : 'DQ  DequantizeLinear') : n.kind === 'group' ? `+ ${n.op} (${n.size} nodes)` : n.op;
    g.append(rect, label);
    if (n.precision) {
      const badge = el('text', { class: `badge p-${n.precision}`, x: p.width - 3, y: 9, 'text-anchor': 'end' });
      badge.textContent = n.precision;
      g.append(badge);
    }
    if (n.module) {
      const sub = el('text', { x: p.width / 2, y: 30, 'text-anchor': 'middle' });
      sub.textContent = n.kind === 'group' ? (layer ? `worst cos ${layer.cosine.toFixed(4)}` : '') : layer ? `${n.module}  cos ${layer.cosine.toFixed(4)}` : n.module;
      g.append(sub);
    }
    const title = el('title');
    title.textContent = `${n.name} (${n.op})${layer ? `\n${layer.module}: cosine ${layer.cosine.toFixed(5)}, SQNR ${layer.sqnr.toFixed(1)} dB` : ''}`;
    g.append(title);
    root.append(g);
    stats.nodes++;
    if (qdq) stats.qdq++;
    if (layer) stats.coloured++;
  }
  host.replaceChildren(svg);
  let view = { x: 0, y: 0, w: layout.width || 1, h: layout.height || 1 };
  const apply = () => svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
  const fit = () => {
    const { x, y, w, h } = fitView(host.getBoundingClientRect(), layout);
    view = { x, y, w, h };
    apply();
  };
  fit();
  svg.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
    const r = svg.getBoundingClientRect();
    const cx = view.x + ((ev.clientX - r.left) / r.width) * view.w;
    const cy = view.y + ((ev.clientY - r.top) / r.height) * view.h;
    view = { x: cx - (cx - view.x) * k, y: cy - (cy - view.y) * k, w: view.w * k, h: view.h * k };
    apply();
  }, { passive: false });
  let drag: { x: number; y: number; moved: number } | undefined;
  svg.addEventListener('pointerdown', (ev) => { drag = { x: ev.clientX, y: ev.clientY, moved: 0 }; });
  svg.addEventListener('pointerup', (ev) => {
    // A press that did not pan is a click: select the node under it.
    const node = drag && drag.moved < 4 ? (ev.target as Element).closest('g.node') : null;
    drag = undefined;
    if (!node) return;
    root.querySelectorAll('g.node.selected').forEach((e) => e.classList.remove('selected'));
    node.classList.add('selected');
    opts.onSelect?.(node.getAttribute('data-id')!);
  });
  svg.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    const r = svg.getBoundingClientRect();
    view.x -= ((ev.clientX - drag.x) / r.width) * view.w;
    view.y -= ((ev.clientY - drag.y) / r.height) * view.h;
    drag = { x: ev.clientX, y: ev.clientY, moved: drag.moved + Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) };
    apply();
  });
  const select = (id: string) => {
    const node = root.querySelector(`g.node[data-id="${CSS.escape(id)}"]`);
    const p = layout.nodes.get(id);
    if (!node || !p) return;
    root.querySelectorAll('g.node.selected').forEach((e) => e.classList.remove('selected'));
    node.classList.add('selected');
    view = { ...view, x: p.x - view.w / 2, y: p.y - view.h / 2 };
    apply();
    opts.onSelect?.(id);
  };
  return { stats, fit, select };
}
