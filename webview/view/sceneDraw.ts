// Draws a scene (graph/scene.ts) on a canvas: only what is on screen, labels only when readable, one pass per kind
// of drawing (a font or alignment change per node costs more than the text itself on a canvas with thousands of
// labels). The canvas renderer draws every frame with it; the page draws the layout worker's scene with it
// before the graph's nodes have arrived.
import { fitView } from '../graph/layout';
import { nodeText } from './render';
import { PRECISIONS, type Scene } from '../graph/scene';
import { LANE, LEVEL_LOOK, LEVELS, laneOrigin } from '../graph/stageLanes';

/** A scene's colours resolved for this theme, and the font. */
export interface Paint {
  fill: string[];
  ink: string[];
  /** Per fill, per precision (PRECISIONS order): the badge's colour. */
  badge: string[][];
  edge: string;
  int8: string;
  border: string;
  focus: string;
  font: string;
  /** Stage lanes: each level's colour (LEVELS order) and the page's background (a fused badge is hollow). */
  levels: string[];
  background: string;
}

export function paintFor(scene: Scene, host: HTMLElement): Paint {
  const text = nodeText();
  const fill = scene.fills.map(text.colour);
  return {
    fill,
    ink: fill.map(text.label),
    badge: fill.map((f) => PRECISIONS.map((p) => text.badge(f, p))),
    edge: text.colour('var(--vscode-descriptionForeground, #888)'),
    int8: text.colour('var(--vscode-charts-purple, #b180d7)'),
    border: text.colour('var(--vscode-panel-border, #999)'),
    focus: text.colour('var(--vscode-focusBorder, #0078d4)'),
    font: getComputedStyle(host).fontFamily || 'sans-serif',
    levels: LEVELS.map((l) => text.colour(LEVEL_LOOK[l].colour)),
    background: text.colour('var(--vscode-editor-background, #fff)'),
  };
}

/** The part of the graph on screen: its top-left corner and the scale. */
export interface View {
  x: number;
  y: number;
  scale: number;
}

/** The first drawn node whose y is at least `v`. */
export function lowerBound(scene: Scene, v: number): number {
  let lo = 0,
    hi = scene.node.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (scene.box[4 * m + 1] < v) lo = m + 1;
    else hi = m;
  }
  return lo;
}

export interface DrawOptions {
  /** Drawn node (scene order) to outline. */
  selected?: number;
  /** Drawn nodes outlined with it (the other modules a fused kernel covers). */
  also?: number[];
  /** Per edge, its shape text and where it goes (the Shapes toggle), made when first needed. */
  shapes?: () => { text: Array<string | undefined>; at: Array<{ x: number; y: number; anchor: 'start' | 'end' }> };
}

/** Sizes the canvas to its box and draws the scene at `view`; returns how many shape labels it drew. */
export function drawScene(canvas: HTMLCanvasElement, scene: Scene, paint: Paint, view: View, opts: DrawOptions = {}) {
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
  const { box, edgeBox, int8Edge, points, pointStart } = scene;
  const edgeCount = scene.int8Edge.length;
  const offScreen = (k: number) =>
    edgeBox[4 * k + 3] < y0 || edgeBox[4 * k + 1] > y1 || edgeBox[4 * k + 2] < x0 || edgeBox[4 * k] > x1;
  ctx.lineWidth = 1 / view.scale;
  // Two passes: plain edges, then edges that stand for a collapsed Q/DQ pair (int8 on the wire).
  for (const want of [0, 1]) {
    ctx.strokeStyle = want ? paint.int8 : paint.edge;
    ctx.beginPath();
    for (let k = 0; k < edgeCount; k++) {
      if (int8Edge[k] !== want || offScreen(k)) continue;
      const a = pointStart[k],
        b = pointStart[k + 1];
      if (a === b) continue;
      ctx.moveTo(points[2 * a], points[2 * a + 1]);
      for (let q = a + 1; q < b; q++) ctx.lineTo(points[2 * q], points[2 * q + 1]);
    }
    ctx.stroke();
  }
  const showText = view.scale * 11 >= 6;
  let shapesDrawn = 0;
  if (opts.shapes && showText) {
    ctx.font = `11px ${paint.font}`;
    ctx.textBaseline = 'middle';
    ctx.fillStyle = paint.edge;
    const { text, at } = opts.shapes();
    for (let k = 0; k < edgeCount; k++) {
      const label = text[k];
      if (!label || offScreen(k)) continue;
      ctx.textAlign = at[k].anchor === 'end' ? 'right' : 'left';
      ctx.fillText(label, at[k].x, at[k].y);
      shapesDrawn++;
    }
  }
  const visible: number[] = [];
  for (let i = lowerBound(scene, y0 - 40); i < scene.node.length && box[4 * i + 1] <= y1 + 40; i++) {
    const x = box[4 * i],
      w = box[4 * i + 2];
    if (x + w / 2 >= x0 && x - w / 2 <= x1) visible.push(i);
  }
  const left = (i: number) => box[4 * i] - box[4 * i + 2] / 2;
  const top = (i: number) => box[4 * i + 1] - box[4 * i + 3] / 2;
  for (const i of visible) {
    ctx.fillStyle = paint.fill[scene.fill[i]];
    ctx.fillRect(left(i), top(i), box[4 * i + 2], box[4 * i + 3]);
  }
  if (showText) {
    ctx.strokeStyle = paint.border;
    ctx.lineWidth = 1 / view.scale;
    ctx.beginPath();
    for (const i of visible) ctx.rect(left(i), top(i), box[4 * i + 2], box[4 * i + 3]);
    ctx.stroke();
    ctx.font = `11px ${paint.font}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (const i of visible) {
      const x = box[4 * i],
        y = box[4 * i + 1],
        w = box[4 * i + 2];
      const sub = scene.sub[i];
      ctx.fillStyle = paint.ink[scene.fill[i]];
      ctx.fillText(scene.texts[scene.label[i]], x, sub >= 0 ? y - 6 : y, w - 4);
      if (sub >= 0) ctx.fillText(scene.texts[sub], x, y + 8, w - 4);
    }
    ctx.font = `9px ${paint.font}`;
    ctx.textAlign = 'right';
    for (const i of visible) {
      const p = scene.precision[i];
      if (!p) continue;
      ctx.fillStyle = paint.badge[scene.fill[i]][p - 1];
      ctx.fillText(PRECISIONS[p - 1], box[4 * i] + box[4 * i + 2] / 2 - 3, top(i) + 7);
    }
  }
  if (showText) drawLanes(ctx, scene, paint, visible, view.scale);
  drawFirstDivergences(ctx, scene, paint, visible, view.scale);
  ctx.strokeStyle = paint.focus;
  ctx.lineWidth = 3 / view.scale;
  for (const sel of [...(opts.also ?? []), ...(opts.selected === undefined ? [] : [opts.selected])]) {
    if (visible.includes(sel)) ctx.strokeRect(left(sel), top(sel), box[4 * sel + 2], box[4 * sel + 3]);
  }
  return shapesDrawn;
}

const FUSED = LEVELS.indexOf('fused');

/** Each visible node's stage lane: a badge per stage on its bottom edge, one path per level (a fused badge is
 * hollow and struck through). */
function drawLanes(ctx: CanvasRenderingContext2D, scene: Scene, paint: Paint, visible: number[], scale: number) {
  const lanes = scene.lanes;
  if (!lanes) return;
  const { box } = scene;
  const step = LANE.width + LANE.gap;
  const badges = (each: (x: number, y: number, level: number) => void) => {
    for (const i of visible) {
      const at = lanes.at[i];
      if (at < 0) continue;
      const o = laneOrigin(box[4 * i], box[4 * i + 1] + box[4 * i + 3] / 2, lanes.stages);
      for (let k = 0; k < lanes.stages; k++) each(o.x + k * step, o.y, lanes.levels[at + k]);
    }
  };
  ctx.lineWidth = 1 / scale;
  for (let level = 0; level < LEVELS.length; level++) {
    ctx.fillStyle = level === FUSED ? paint.background : paint.levels[level];
    ctx.beginPath();
    badges((x, y, l) => {
      if (l === level) ctx.rect(x, y, LANE.width, LANE.height);
    });
    ctx.fill();
  }
  ctx.strokeStyle = paint.border;
  ctx.beginPath();
  badges((x, y, l) => {
    if (l !== FUSED) ctx.rect(x, y, LANE.width, LANE.height);
  });
  ctx.stroke();
  ctx.strokeStyle = paint.levels[FUSED];
  ctx.beginPath();
  badges((x, y, l) => {
    if (l !== FUSED) return;
    ctx.rect(x, y, LANE.width, LANE.height);
    ctx.moveTo(x, y + LANE.height);
    ctx.lineTo(x + LANE.width, y);
  });
  ctx.stroke();
}

/** A node where a bisected pair first diverges: outlined, with a mark at its top-left corner that stays visible
 * zoomed out. */
function drawFirstDivergences(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  paint: Paint,
  visible: number[],
  scale: number,
) {
  const first = scene.lanes?.first;
  if (!first) return;
  const { box } = scene;
  const colour = paint.levels[LEVELS.indexOf('diverges')];
  const r = Math.max(6, 5 / scale);
  for (const i of visible) {
    if (!first[i]) continue;
    const x = box[4 * i] - box[4 * i + 2] / 2,
      y = box[4 * i + 1] - box[4 * i + 3] / 2;
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2 / scale;
    ctx.strokeRect(x, y, box[4 * i + 2], box[4 * i + 3]);
    ctx.fillStyle = colour;
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fill();
  }
}

/** The view that fits the scene in the canvas: the renderer's opening view, or the whole scene (Fit). */
export const fitScene = (canvas: HTMLCanvasElement, scene: Scene, whole = false): View => {
  // Nodes are sorted by y: the first is where a graph wider than the view opens.
  const topX = scene.node.length ? scene.box[0] : undefined;
  const { scale, x, y } = fitView(canvas.getBoundingClientRect(), scene, whole, topX);
  return { scale, x, y };
};

/** A canvas showing the scene at its fitting view, until the renderer with the graph's nodes replaces it. */
export function drawPreview(host: HTMLElement, scene: Scene): HTMLCanvasElement {
  const canvas = document.createElement('canvas');
  canvas.style.width = '100%';
  canvas.style.height = '100%';
  canvas.style.display = 'block';
  canvas.dataset.preview = '';
  host.replaceChildren(canvas);
  drawScene(canvas, scene, paintFor(scene, host), fitScene(canvas, scene));
  return canvas;
}
