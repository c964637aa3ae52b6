// SVG rendering with pan (drag) and zoom (wheel) through the viewBox.
import type { LayerResult } from '../../protocol/kernel';
import { qdqRole, type Graph, type GraphNode } from '../importers/types';
import { fitView, type Layout } from '../graph/layout';
import { colourResolver } from './colours';
import { opCategory } from '../graph/opCategory';
import { CHAR_PX, nodeFill, QDQ_TAG, subLabel } from '../graph/nodeLook';
import { readableOn, textColours } from './contrast';
import { layerShown } from '../graph/metrics';
import type { RenderStats } from '../graph/scene';
import type { Viewport } from './minimap';
import { edgeShapes, type EdgeShape } from './shapes';
import { Occupancy, placeLabels, type LabelRequest, type Rect } from './labelPlace';
import type { StageLanes } from '../graph/stageLanes';
import { drawStage } from './stageDraw';

const SVG = 'http://www.w3.org/2000/svg';
const el = <K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};

export interface RenderOptions {
  onSelect?: (nodeId: string) => void;
  /** VS Code's webview context-menu data for a node (`data-vscode-context`). */
  contextFor?: (node: GraphNode, layer: LayerResult | undefined) => object | undefined;
  /** A click on an open module's frame label: collapse that module into one group node. */
  onCollapse?: (module: string) => void;
  /** The visible part of the graph changed (pan, zoom, fit, resize). */
  onView?: (v: Viewport) => void;
  /** Draw each edge's tensor shape beside it (the toolbar's Shapes toggle; showShapes changes it later). */
  shapes?: boolean;
  /** Open at this scale (CSS pixels per graph unit), centred on x with this top, instead of the opening fit: the
   * view of the same model before a re-layout (Q/DQ collapse, a group opened or closed). */
  initial?: { scale: number; x: number; top: number };
  /** Find Where INT8 Diverges: the stage results, which colour the nodes and give them their lanes. */
  lanes?: StageLanes;
}

const BADGE_COLOUR = {
  int8: 'var(--vscode-charts-purple, #8a4fbf)',
  fp16: 'var(--vscode-charts-blue, #1a85ff)',
  bf16: 'var(--vscode-charts-blue, #1a85ff)',
  fp32: 'var(--vscode-descriptionForeground, #555)',
} as const;

/**
 * Text colours for one render: label text readable on each node's fill, and a precision badge in its own colour
 * where that reads on the fill, else in the label's.
 */
export function nodeText(): {
  colour: (css: string) => string;
  label: (fill: string) => string;
  badge: (fill: string, precision: keyof typeof BADGE_COLOUR) => string;
} {
  const colour = colourResolver();
  const background = colour('var(--vscode-editor-background, #fff)');
  const label = textColours([colour('var(--vscode-editor-foreground, #333)'), background], background);
  return {
    colour,
    label,
    badge: (fill, precision) => readableOn(fill, [colour(BADGE_COLOUR[precision]), label(fill)], background),
  };
}

const estimateWidth = (text: string) => text.length * CHAR_PX;

const FRAME_PAD = 5;
/** Frame labels and edge labels (Q/DQ parameters) are 9px text, shapes 11px: their line heights, and the space
 * between an edge's Q/DQ label and its shape. */
const FRAME_LINE = 10;
const FRAME_DESCENT = 2;
const LABEL_SPACE = 6;
const SHAPE_LINE = 13;
/** Below this drawn size of 11px text, the SVG view leaves text out. */
export const FAR_TEXT_PX = 6;

/** Widths of text in the view's font, for placing labels (one canvas, its font set per size). */
function textMeasure(host: HTMLElement): (text: string, px: number) => number {
  const ctx = document.createElement('canvas').getContext('2d');
  const family = getComputedStyle(host).fontFamily || 'sans-serif';
  let size = 0;
  return (text, px) => {
    if (!ctx) return text.length * px * 0.6;
    if (px !== size) {
      ctx.font = `${px}px ${family}`;
      size = px;
    }
    return ctx.measureText(text).width;
  };
}

/**
 * Where a frame's label goes: above its top-left corner; else moved right past what is there (the label of an
 * outer frame whose top is a few pixels above); else outside the frame's left edge, below labels already there;
 * where all of these overlap something, the one that overlaps least.
 */
function frameLabelRect(f: { x: number; y: number }, width: number, taken: Occupancy): Rect {
  const at = (x0: number, y0: number) => ({ x0, y0, x1: x0 + width, y1: y0 + FRAME_LINE });
  const candidates: Rect[] = [];
  let r = at(f.x + 2, f.y - FRAME_LINE);
  candidates.push(r);
  for (let tries = 0; tries < 3 && taken.overlap(r); tries++)
    candidates.push((r = at(taken.rightmostOver(r) + 6, r.y0)));
  for (let k = 0; k < 4; k++) candidates.push(at(f.x - 3 - width, f.y + k * FRAME_LINE));
  let best = candidates[0];
  let least = Infinity;
  for (const c of candidates) {
    const o = taken.overlap(c);
    if (o < least) {
      best = c;
      least = o;
      if (!o) break;
    }
  }
  return best;
}

/**
 * Boxes around the nodes of each open module (dagre's compound layout would keep them apart, at five times the
 * layout time): a module's box holds its own nodes and its submodules' boxes, each padded, so nesting shows.
 */
export function moduleFrames(
  graph: Graph,
  layout: Layout,
): Array<{ module: string; depth: number; x: number; y: number; width: number; height: number }> {
  const parent = new Map<string, string | undefined>();
  const own = new Map<string, Array<{ x0: number; y0: number; x1: number; y1: number }>>();
  const collapsed = new Set(graph.nodes.filter((n) => n.kind === 'group').map((n) => n.module));
  for (const n of graph.nodes) {
    const scopes = (n.scopes ?? []).filter((s) => !collapsed.has(s));
    scopes.forEach((s, i) => {
      if (!parent.has(s)) parent.set(s, scopes[i - 1]);
    });
    const p = layout.nodes.get(n.id);
    const inner = scopes.at(-1);
    if (!p || !inner) continue;
    (own.get(inner) ?? own.set(inner, []).get(inner)!).push({
      x0: p.x - p.width / 2,
      y0: p.y - p.height / 2,
      x1: p.x + p.width / 2,
      y1: p.y + p.height / 2,
    });
  }
  const depth = (s: string) => {
    let d = 0;
    for (let p = parent.get(s); p; p = parent.get(p)) d++;
    return d;
  };
  const boxes = new Map<string, { x0: number; y0: number; x1: number; y1: number }>();
  // Deepest first, so each module's box can take in its submodules' boxes.
  for (const s of [...parent.keys()].sort((a, b) => depth(b) - depth(a))) {
    const parts = own.get(s) ?? [];
    const b = { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
    for (const p of parts) {
      b.x0 = Math.min(b.x0, p.x0);
      b.y0 = Math.min(b.y0, p.y0);
      b.x1 = Math.max(b.x1, p.x1);
      b.y1 = Math.max(b.y1, p.y1);
    }
    if (!Number.isFinite(b.x0)) continue;
    const padded = { x0: b.x0 - FRAME_PAD, y0: b.y0 - FRAME_PAD, x1: b.x1 + FRAME_PAD, y1: b.y1 + FRAME_PAD };
    boxes.set(s, padded);
    const up = parent.get(s);
    if (up) (own.get(up) ?? own.set(up, []).get(up)!).push(padded);
  }
  return [...boxes]
    .map(([module, b]) => ({ module, depth: depth(module), x: b.x0, y: b.y0, width: b.x1 - b.x0, height: b.y1 - b.y0 }))
    .sort((a, b) => a.depth - b.depth);
}

/** What a renderer hands back: counts, fit-to-view, programmatic selection (search, keyboard) and panning (minimap). */
export interface Rendered {
  stats: RenderStats;
  /** Shows the whole graph, both dimensions (the Fit button, F). */
  fit: () => void;
  /** Selects a node and shows it; `also`: nodes outlined with it (the other modules a fused kernel covers). */
  select: (nodeId: string, also?: string[]) => void;
  centreOn: (x: number, y: number) => void;
  /** Shows or hides the tensor shapes on edges, without drawing the graph again. */
  showShapes: (on: boolean) => void;
}

export function renderGraph(
  host: HTMLElement,
  graph: Graph,
  layout: Layout,
  layers: LayerResult[],
  threshold: number,
  opts: RenderOptions = {},
): Rendered {
  const byModule = new Map(layers.map((l) => [l.module, l]));
  const text = nodeText();
  const svg = el('svg', { role: 'img', 'aria-label': `Graph ${graph.name}` });
  const root = el('g');
  svg.append(root);
  // What edge labels must keep clear of: every node's box, and the module frames' labels (placed first).
  const taken = new Occupancy();
  for (const p of layout.nodes.values())
    taken.add({ x0: p.x - p.width / 2, y0: p.y - p.height / 2, x1: p.x + p.width / 2, y1: p.y + p.height / 2 });
  const measure = textMeasure(host);
  // Frame labels keep off nodes, each other and the edges that run straight down through the gap they sit in.
  const frameLabels = new Occupancy();
  for (const p of layout.nodes.values())
    frameLabels.add({ x0: p.x - p.width / 2, y0: p.y - p.height / 2, x1: p.x + p.width / 2, y1: p.y + p.height / 2 });
  for (const e of layout.edges)
    for (let i = 1; i < e.points.length; i++) {
      const a = e.points[i - 1],
        b = e.points[i];
      if (Math.abs(a.x - b.x) <= 2)
        frameLabels.add({ x0: a.x - 2, y0: Math.min(a.y, b.y), x1: a.x + 2, y1: Math.max(a.y, b.y) });
    }
  for (const f of moduleFrames(graph, layout)) {
    const type = graph.modules?.[f.module]?.type;
    const g = el('g', { class: 'frame', 'data-module': f.module });
    const text = type ? `${f.module} · ${type}` : f.module;
    // Nested frames' tops are a few pixels apart: their labels cannot all sit above them (frameLabelRect).
    const at = frameLabelRect(f, measure(text, 9), frameLabels);
    frameLabels.add(at);
    taken.add(at);
    const label = el('text', { class: 'frame-label', x: at.x0, y: at.y1 - FRAME_DESCENT });
    label.textContent = text;
    const title = el('title');
    title.textContent = `Collapse ${f.module}`;
    g.append(title, el('rect', { x: f.x, y: f.y, width: f.width, height: f.height, rx: 4 }), label);
    root.append(g);
  }
  const labels = new Map(graph.edges.filter((e) => e.label).map((e) => [`${e.from}>${e.to}`, e.label!]));
  const shapes = edgeShapes(graph);
  // One group of shape labels over the edges, shown or hidden as a whole by the toggle.
  const shapeLayer = el('g', { class: 'edge-shapes' });
  const blocks: Array<{ label?: string; shape?: EdgeShape; labelWidth: number; request: LabelRequest }> = [];
  for (const e of layout.edges) {
    if (!e.points.length) continue;
    const label = labels.get(`${e.from}>${e.to}`);
    root.append(
      el('path', { class: label ? 'edge int8' : 'edge', d: 'M' + e.points.map((p) => `${p.x},${p.y}`).join(' L') }),
    );
    const shape = shapes.get(`${e.from}>${e.to}`);
    if (!label && !shape) continue;
    // One line per edge: the Q/DQ parameters, then the shape (a gap between ranks has room for one line).
    const labelWidth = label ? measure(label, 9) + (shape ? LABEL_SPACE : 0) : 0;
    const width = labelWidth + (shape ? measure(shape.text, 11) : 0);
    blocks.push({ label, shape, labelWidth, request: { points: e.points, width, height: SHAPE_LINE } });
  }
  const places = placeLabels(
    blocks.map((b) => b.request),
    taken,
  );
  blocks.forEach(({ label, shape, labelWidth }, i) => {
    const r = places[i];
    if (label) {
      const t = el('text', { class: 'edge-label', x: r.x0, y: r.y1 - 3 });
      t.textContent = label;
      root.append(t);
    }
    if (shape) {
      const t = el('text', { class: 'edge-shape', x: r.x0 + labelWidth, y: r.y1 - 3 });
      t.setAttribute('data-tensor', shape.tensors.join(' '));
      t.textContent = shape.text;
      shapeLayer.append(t);
    }
  });
  const showShapes = (on: boolean) => {
    if (on) shapeLayer.removeAttribute('display');
    else shapeLayer.setAttribute('display', 'none');
  };
  showShapes(opts.shapes ?? false);
  const stats: RenderStats = { nodes: 0, qdq: 0, coloured: 0 };
  for (const n of graph.nodes) {
    const p = layout.nodes.get(n.id);
    if (!p) continue;
    const role = qdqRole(n.op);
    const qdq = role !== undefined;
    const layer = layerShown(n, byModule);
    const g = el('g', {
      class: `node ${n.kind}${qdq ? ' qdq' : ''}${layer && n.kind === 'op' ? ' layer' : ''}`,
      'data-id': n.id,
      transform: `translate(${p.x - p.width / 2},${p.y - p.height / 2})`,
      'data-op': n.op,
      'data-name': n.name,
    });
    const rect = el('rect', { width: p.width, height: p.height, rx: qdq ? 10 : 3 });
    const stageFill = opts.lanes?.fillOf(n);
    rect.style.fill = stageFill ?? nodeFill(n, layer, threshold);
    const fill = text.colour(rect.style.fill);
    const ink = text.label(fill);
    if (layer) {
      g.setAttribute('data-cosine', layer.cosine.toFixed(5));
      g.setAttribute('data-module', layer.module);
    }
    if (n.precision) g.setAttribute('data-precision', n.precision);
    const category = n.kind === 'op' && !qdq ? opCategory(n.op) : undefined;
    if (category) g.setAttribute('data-category', category);
    const context = opts.contextFor?.(n, layer);
    if (context) g.setAttribute('data-vscode-context', JSON.stringify(context));
    const label = el('text', { x: p.width / 2, y: n.module ? 15 : p.height / 2 + 4, 'text-anchor': 'middle' });
    label.textContent = role ? `${QDQ_TAG[role]}  ${n.op}` : n.kind === 'group' ? `+ ${n.op} (${n.size} nodes)` : n.op;
    label.style.fill = ink;
    g.append(rect, label);
    if (n.precision) {
      const badge = el('text', { class: `badge p-${n.precision}`, x: p.width - 3, y: 9, 'text-anchor': 'end' });
      badge.textContent = n.precision;
      badge.style.fill = text.badge(fill, n.precision);
      g.append(badge);
    }
    if (n.module) {
      const sub = el('text', { x: p.width / 2, y: 30, 'text-anchor': 'middle' });
      sub.textContent = subLabel(n, layer, p.width) ?? '';
      // Boxes are sized for the op and module names; text beyond the box would sit on the background in the fill's ink.
      if (estimateWidth(sub.textContent) > p.width - 6) {
        sub.setAttribute('textLength', String(p.width - 6));
        sub.setAttribute('lengthAdjust', 'spacingAndGlyphs');
      }
      sub.style.fill = ink;
      g.append(sub);
    }
    const title = el('title');
    title.textContent =
      n.kind === 'group'
        ? `${n.module} (${n.size} nodes)${layer ? `\n${layer.group.join('+')}: cosine ${layer.cosine.toFixed(5)}, SQNR ${layer.sqnr.toFixed(1)} dB` : ''}`
        : `${n.name} (${n.op})${n.module ? `\nmodule ${n.module}` : ''}${layer ? `\n${layer.module}: cosine ${layer.cosine.toFixed(5)}, SQNR ${layer.sqnr.toFixed(1)} dB` : ''}`;
    g.append(title);
    if (opts.lanes) drawStage(g, n, p, opts.lanes);
    root.append(g);
    stats.nodes++;
    if (qdq) stats.qdq++;
    if (layer || stageFill) stats.coloured++;
  }
  root.append(shapeLayer);
  // The view's size, read while the page's layout is clean: read after the new SVG is in, it would lay out all
  // of its text before the frame does (tens of ms at a few hundred nodes).
  const size = host.getBoundingClientRect();
  host.replaceChildren(svg);
  let view = { x: 0, y: 0, w: layout.width || 1, h: layout.height || 1 };
  /**
   * A drag moves the drawn graph as it is (a CSS transform of the SVG, made its own composited layer while the
   * pointer is down: no repaint, where a new viewBox repaints every text of the graph) and writes the viewBox,
   * repainting once, on release or when the graph has moved a quarter of the view: so panning keeps the
   * display's rate. The layer is given back on release (as one, the SVG's first paint took longer).
   */
  let shift = { x: 0, y: 0 };
  /** Graph units per CSS pixel: the viewBox is letterboxed into the element (preserveAspectRatio meet). */
  const unitsPerPx = (r: { width: number; height: number }) =>
    r.width && r.height ? 1 / Math.min(r.width / view.w, r.height / view.h) : 1;
  const report = (r: { width: number; height: number }) => {
    if (!opts.onView) return;
    // The visible part is wider or taller than the viewBox, and moved by the pending drag.
    const u = unitsPerPx(r);
    const w = r.width ? r.width * u : view.w,
      h = r.height ? r.height * u : view.h;
    opts.onView({ x: view.x - shift.x * u - (w - view.w) / 2, y: view.y - shift.y * u - (h - view.h) / 2, w, h });
  };
  const apply = (r: { width: number; height: number } = svg.getBoundingClientRect()) => {
    // The size is read before the viewBox is written, so no layout is forced mid-frame.
    svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
    // Zoomed out until 11px text is under 6 pixels (a whole tall graph): boxes and edges only, as on the canvas,
    // instead of labels run together.
    svg.classList.toggle('far', 11 / unitsPerPx(r) < FAR_TEXT_PX);
    report(r);
  };
  /** Writes a pending drag into the viewBox. */
  const settle = () => {
    if (!shift.x && !shift.y) return;
    const u = unitsPerPx(svg.getBoundingClientRect());
    view = { ...view, x: view.x - shift.x * u, y: view.y - shift.y * u };
    shift = { x: 0, y: 0 };
    svg.style.transform = '';
    apply();
  };
  const fit = (r: { width: number; height: number } = host.getBoundingClientRect(), whole = false) => {
    const { x, y, w, h } = fitView(r, layout, whole, topX);
    view = { x, y, w, h };
    shift = { x: 0, y: 0 };
    svg.style.transform = '';
    apply(r);
  };
  // The first node (the graph's input): where a graph wider than the view opens.
  let topX: number | undefined;
  let topY = Infinity;
  for (const p of layout.nodes.values())
    if (p.y < topY) {
      topY = p.y;
      topX = p.x;
    }
  const start = opts.initial;
  if (start && size.width && size.height) {
    const w = size.width / start.scale,
      h = size.height / start.scale;
    view = { x: start.x - w / 2, y: start.top, w, h };
    apply(size);
  } else fit(size);
  svg.addEventListener(
    'wheel',
    (ev) => {
      ev.preventDefault();
      settle();
      const k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
      const r = svg.getBoundingClientRect();
      const cx = view.x + ((ev.clientX - r.left) / r.width) * view.w;
      const cy = view.y + ((ev.clientY - r.top) / r.height) * view.h;
      view = { x: cx - (cx - view.x) * k, y: cy - (cy - view.y) * k, w: view.w * k, h: view.h * k };
      apply();
    },
    { passive: false },
  );
  let drag: { x: number; y: number; moved: number; width: number; height: number } | undefined;
  svg.addEventListener('pointerdown', (ev) => {
    const r = svg.getBoundingClientRect();
    drag = { x: ev.clientX, y: ev.clientY, moved: 0, width: r.width, height: r.height };
    svg.style.willChange = 'transform';
  });
  svg.addEventListener('pointerup', (ev) => {
    settle();
    svg.style.willChange = '';
    // A press that did not pan is a click: select the node under it, or collapse the module whose label it hit.
    const click = drag && drag.moved < 4;
    const node = click ? (ev.target as Element).closest('g.node') : null;
    const frame = click && !node ? (ev.target as Element).closest('.frame-label')?.parentElement : null;
    drag = undefined;
    if (frame) {
      opts.onCollapse?.(frame.getAttribute('data-module')!);
      return;
    }
    if (!node) return;
    root.querySelectorAll('g.node.selected').forEach((e) => e.classList.remove('selected'));
    node.classList.add('selected');
    opts.onSelect?.(node.getAttribute('data-id')!);
  });
  svg.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x,
      dy = ev.clientY - drag.y;
    drag = { ...drag, x: ev.clientX, y: ev.clientY, moved: drag.moved + Math.abs(dx) + Math.abs(dy) };
    shift = { x: shift.x + dx, y: shift.y + dy };
    if (Math.abs(shift.x) > drag.width / 4 || Math.abs(shift.y) > drag.height / 4) settle();
    else {
      svg.style.transform = `translate(${shift.x}px, ${shift.y}px)`;
      report(drag);
    }
  });
  const select = (id: string, also: string[] = []) => {
    const node = root.querySelector(`g.node[data-id="${CSS.escape(id)}"]`);
    const p = layout.nodes.get(id);
    if (!node || !p) return;
    root.querySelectorAll('g.node.selected').forEach((e) => e.classList.remove('selected'));
    node.classList.add('selected');
    for (const other of also) root.querySelector(`g.node[data-id="${CSS.escape(other)}"]`)?.classList.add('selected');
    settle();
    view = { ...view, x: p.x - view.w / 2, y: p.y - view.h / 2 };
    apply();
    opts.onSelect?.(id);
  };
  const centreOn = (x: number, y: number) => {
    settle();
    view = { ...view, x: x - view.w / 2, y: y - view.h / 2 };
    apply();
  };
  // The room the view gets changes after it is drawn (the layer table's elements load, the panel is resized): the
  // scale stays, the view takes the new room (same top and horizontal centre), instead of the old view being
  // letterboxed into it, smaller.
  let drawnAt = { width: size.width, height: size.height };
  new ResizeObserver(() => {
    const r = svg.getBoundingClientRect();
    if (
      r.width &&
      r.height &&
      drawnAt.width &&
      drawnAt.height &&
      (r.width !== drawnAt.width || r.height !== drawnAt.height)
    ) {
      const u = unitsPerPx(drawnAt);
      const w = r.width * u;
      view = { x: view.x + (view.w - w) / 2, y: view.y, w, h: r.height * u };
    }
    if (r.width && r.height) drawnAt = { width: r.width, height: r.height };
    apply(r);
  }).observe(svg);
  return { stats, fit: () => fit(undefined, true), select, centreOn, showShapes };
}
