// Canvas renderer for large graphs: only what is on screen is drawn, labels only when readable, and
// pan/zoom redraws on the next animation frame. Same result shape as the SVG renderer.
import type { LayerResult } from '../../protocol/kernel';
import { qdqRole, type Graph } from '../importers/types';
import { fitView, type Layout } from './layout';
import { layerFor } from './metrics';
import { nodeFill, nodeText, QDQ_TAG, type Rendered, type RenderOptions, type RenderStats } from './render';
import { edgeShapes, labelPlace } from './shapes';

export function renderCanvas(
  host: HTMLElement,
  graph: Graph,
  layout: Layout,
  layers: LayerResult[],
  threshold: number,
  opts: RenderOptions = {},
): Rendered {
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `Graph ${graph.name} (${graph.nodes.length} nodes)`);
  canvas.style.width = '100%';
  canvas.style.height = '100%';
  canvas.style.display = 'block';
  host.replaceChildren(canvas);
  const text = nodeText();
  const colour = text.colour;
  const byModule = new Map(layers.map((l) => [l.module, l]));
  const stats: RenderStats = { nodes: 0, qdq: 0, coloured: 0 };
  // A badge's colour depends only on the box's fill and the precision: a few pairs for any number of nodes.
  const badges = new Map<string, string>();
  const badge = (fill: string, precision: NonNullable<Graph['nodes'][number]['precision']>) => {
    const key = `${fill}|${precision}`;
    let b = badges.get(key);
    if (b === undefined) badges.set(key, (b = text.badge(fill, precision)));
    return b;
  };

  // Flat arrays sorted by y, so the visible rows are found by binary search.
  const placed = graph.nodes
    .flatMap((n) => {
      const p = layout.nodes.get(n.id);
      if (!p) return [];
      const role = qdqRole(n.op);
      const qdq = role !== undefined;
      const layer = n.kind === 'op' && !qdq ? layerFor(n, byModule) : undefined;
      stats.nodes++;
      if (qdq) stats.qdq++;
      if (layer) stats.coloured++;
      const fill = nodeFill(n, layer, threshold);
      const label = role ? QDQ_TAG[role] : n.kind === 'group' ? `+ ${n.op} (${n.size} nodes)` : n.op;
      const resolved = colour(fill);
      return [
        {
          id: n.id,
          p,
          fill: resolved,
          ink: text.label(resolved),
          badge: n.precision ? badge(resolved, n.precision) : '',
          label,
          sub:
            n.kind === 'group'
              ? layer
                ? `worst cos ${layer.cosine.toFixed(4)}`
                : undefined
              : layer
                ? `${n.module} ${layer.cosine.toFixed(4)}`
                : n.module,
          precision: n.precision,
          node: n,
          layer,
        },
      ];
    })
    .sort((a, b) => a.p.y - b.p.y);
  const ys = Float64Array.from(placed, (o) => o.p.y);
  const edgeColour = colour('var(--vscode-descriptionForeground, #888)');
  const int8Colour = colour('var(--vscode-charts-purple, #b180d7)');
  const quantized = new Set(graph.edges.filter((e) => e.label).map((e) => `${e.from}>${e.to}`));
  // Per edge, computed once: its bounding box (culling) and whether it stands for a collapsed Q/DQ pair.
  const edgeCount = layout.edges.length;
  const box = new Float64Array(edgeCount * 4);
  const int8Edge = new Uint8Array(edgeCount);
  layout.edges.forEach((e, i) => {
    let minX = Infinity,
      minY = Infinity,
      maxX = -Infinity,
      maxY = -Infinity;
    for (const q of e.points) {
      minX = Math.min(minX, q.x);
      maxX = Math.max(maxX, q.x);
      minY = Math.min(minY, q.y);
      maxY = Math.max(maxY, q.y);
    }
    box[i * 4] = minX;
    box[i * 4 + 1] = minY;
    box[i * 4 + 2] = maxX;
    box[i * 4 + 3] = maxY;
    int8Edge[i] = quantized.has(`${e.from}>${e.to}`) ? 1 : 0;
  });
  // Per edge, its shape text and where it goes: drawn only while the Shapes toggle is on and text is readable,
  // so worked out the first time a frame draws them (a large graph opens zoomed out, with no text).
  let edgeLabels: { text: Array<string | undefined>; at: Array<ReturnType<typeof labelPlace>> } | undefined;
  const shapeLabels = () => {
    if (edgeLabels) return edgeLabels;
    const shapeOf = edgeShapes(graph);
    edgeLabels = {
      text: layout.edges.map((e) => shapeOf.get(`${e.from}>${e.to}`)?.text),
      at: layout.edges.map((e) => labelPlace(e.points)),
    };
    return edgeLabels;
  };
  let shapes = opts.shapes ?? false;
  const borderColour = colour('var(--vscode-panel-border, #999)');
  const focusColour = colour('var(--vscode-focusBorder, #0078d4)');
  const font = getComputedStyle(host).fontFamily || 'sans-serif';

  let view = { x: 0, y: 0, scale: 1 };
  let selected: string | undefined;
  let pending = 0;
  const lowerBound = (v: number) => {
    let lo = 0,
      hi = ys.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (ys[m] < v) lo = m + 1;
      else hi = m;
    }
    return lo;
  };

  function draw(): void {
    pending = 0;
    const dpr = window.devicePixelRatio || 1;
    const r = canvas.getBoundingClientRect();
    if (canvas.width !== Math.round(r.width * dpr) || canvas.height !== Math.round(r.height * dpr)) {
      canvas.width = Math.round(r.width * dpr);
      canvas.height = Math.round(r.height * dpr);
    }
    const ctx = canvas.getContext('2d')!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, r.width, r.height);
    ctx.setTransform(dpr * view.scale, 0, 0, dpr * view.scale, -view.x * view.scale * dpr, -view.y * view.scale * dpr);
    const x0 = view.x,
      y0 = view.y,
      x1 = view.x + r.width / view.scale,
      y1 = view.y + r.height / view.scale;
    canvas.dataset.view = `${view.x.toFixed(1)} ${view.y.toFixed(1)} ${view.scale.toFixed(5)}`;
    opts.onView?.({ x: x0, y: y0, w: x1 - x0, h: y1 - y0 });
    ctx.lineWidth = 1 / view.scale;
    // Two passes: plain edges, then edges that stand for a collapsed Q/DQ pair (int8 on the wire).
    for (const int8 of [false, true]) {
      ctx.strokeStyle = int8 ? int8Colour : edgeColour;
      ctx.beginPath();
      const want = int8 ? 1 : 0;
      for (let k = 0; k < edgeCount; k++) {
        if (int8Edge[k] !== want) continue;
        const j = k * 4;
        if (box[j + 3] < y0 || box[j + 1] > y1 || box[j + 2] < x0 || box[j] > x1) continue;
        const e = layout.edges[k];
        if (!e.points.length) continue;
        ctx.moveTo(e.points[0].x, e.points[0].y);
        for (let i = 1; i < e.points.length; i++) ctx.lineTo(e.points[i].x, e.points[i].y);
      }
      ctx.stroke();
    }
    const showText = view.scale * 11 >= 6;
    let shapesDrawn = 0;
    if (shapes && showText) {
      ctx.font = `11px ${font}`;
      ctx.textBaseline = 'middle';
      ctx.fillStyle = edgeColour;
      const { text: shapeText, at: shapeAt } = shapeLabels();
      for (let k = 0; k < edgeCount; k++) {
        const label = shapeText[k];
        const j = k * 4;
        if (!label || box[j + 3] < y0 || box[j + 1] > y1 || box[j + 2] < x0 || box[j] > x1) continue;
        ctx.textAlign = shapeAt[k].anchor === 'end' ? 'right' : 'left';
        ctx.fillText(label, shapeAt[k].x, shapeAt[k].y);
        shapesDrawn++;
      }
    }
    // What the last frame drew, for tests and the benchmark (a canvas has no elements to count).
    canvas.dataset.shapes = String(shapesDrawn);
    // The visible nodes, then one pass per kind of drawing: a font or alignment change per node costs more
    // than the text itself on a canvas with thousands of labels.
    const visible: number[] = [];
    for (let i = lowerBound(y0 - 40); i < placed.length && placed[i].p.y <= y1 + 40; i++) {
      const p = placed[i].p;
      if (p.x + p.width / 2 >= x0 && p.x - p.width / 2 <= x1) visible.push(i);
    }
    let sel: (typeof placed)[number] | undefined;
    for (const i of visible) {
      const { p, fill, id } = placed[i];
      ctx.fillStyle = fill;
      ctx.fillRect(p.x - p.width / 2, p.y - p.height / 2, p.width, p.height);
      if (id === selected) sel = placed[i];
    }
    if (showText) {
      ctx.strokeStyle = borderColour;
      ctx.lineWidth = 1 / view.scale;
      ctx.beginPath();
      for (const i of visible) {
        const p = placed[i].p;
        ctx.rect(p.x - p.width / 2, p.y - p.height / 2, p.width, p.height);
      }
      ctx.stroke();
      ctx.font = `11px ${font}`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      for (const i of visible) {
        const { p, label, sub, ink } = placed[i];
        ctx.fillStyle = ink;
        ctx.fillText(label, p.x, sub ? p.y - 6 : p.y, p.width - 4);
        if (sub) ctx.fillText(sub, p.x, p.y + 8, p.width - 4);
      }
      ctx.font = `9px ${font}`;
      ctx.textAlign = 'right';
      for (const i of visible) {
        const { p, precision, badge } = placed[i];
        if (!precision) continue;
        ctx.fillStyle = badge;
        ctx.fillText(precision, p.x + p.width / 2 - 3, p.y - p.height / 2 + 7);
      }
    }
    if (sel) {
      ctx.strokeStyle = focusColour;
      ctx.lineWidth = 3 / view.scale;
      ctx.strokeRect(sel.p.x - sel.p.width / 2, sel.p.y - sel.p.height / 2, sel.p.width, sel.p.height);
    }
  }
  const redraw = () => {
    if (!pending) pending = requestAnimationFrame(draw);
  };

  const fit = () => {
    const { scale, x, y } = fitView(canvas.getBoundingClientRect(), layout);
    view = { scale, x, y };
    redraw();
  };

  canvas.addEventListener(
    'wheel',
    (ev) => {
      ev.preventDefault();
      const k = ev.deltaY > 0 ? 1 / 1.15 : 1.15;
      const r = canvas.getBoundingClientRect();
      const gx = view.x + (ev.clientX - r.left) / view.scale,
        gy = view.y + (ev.clientY - r.top) / view.scale;
      view.scale *= k;
      view.x = gx - (ev.clientX - r.left) / view.scale;
      view.y = gy - (ev.clientY - r.top) / view.scale;
      redraw();
    },
    { passive: false },
  );
  let drag: { x: number; y: number; moved: number } | undefined;
  canvas.addEventListener('pointerdown', (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, moved: 0 };
  });
  canvas.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    view.x -= (ev.clientX - drag.x) / view.scale;
    view.y -= (ev.clientY - drag.y) / view.scale;
    drag = {
      x: ev.clientX,
      y: ev.clientY,
      moved: drag.moved + Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y),
    };
    redraw();
  });
  const hit = (ev: MouseEvent) => {
    const r = canvas.getBoundingClientRect();
    const gx = view.x + (ev.clientX - r.left) / view.scale,
      gy = view.y + (ev.clientY - r.top) / view.scale;
    for (let i = lowerBound(gy - 40); i < placed.length && placed[i].p.y <= gy + 40; i++) {
      const { p } = placed[i];
      if (Math.abs(gx - p.x) <= p.width / 2 && Math.abs(gy - p.y) <= p.height / 2) return placed[i];
    }
    return undefined;
  };
  canvas.addEventListener('pointerup', (ev) => {
    const click = drag && drag.moved < 4 && ev.button === 0;
    drag = undefined;
    const node = click ? hit(ev) : undefined;
    if (!node) return;
    selected = node.id;
    redraw();
    opts.onSelect?.(node.id);
  });
  // VS Code reads the context-menu data from the event target, so set it for the node under the pointer.
  canvas.addEventListener(
    'contextmenu',
    (ev) => {
      const under = hit(ev);
      const context = under && opts.contextFor?.(under.node, under.layer);
      if (context) canvas.setAttribute('data-vscode-context', JSON.stringify(context));
      else canvas.removeAttribute('data-vscode-context');
    },
    { capture: true },
  );
  new ResizeObserver(redraw).observe(canvas);
  fit();
  const select = (id: string) => {
    const hit = placed.find((o) => o.id === id);
    if (!hit) return;
    selected = id;
    const r = canvas.getBoundingClientRect();
    view = { ...view, x: hit.p.x - r.width / view.scale / 2, y: hit.p.y - r.height / view.scale / 2 };
    redraw();
    opts.onSelect?.(id);
  };
  const centreOn = (x: number, y: number) => {
    const r = canvas.getBoundingClientRect();
    view = { ...view, x: x - r.width / view.scale / 2, y: y - r.height / view.scale / 2 };
    redraw();
  };
  const showShapes = (on: boolean) => {
    shapes = on;
    redraw();
  };
  return { stats, fit, select, centreOn, showShapes };
}
