// Canvas renderer for large graphs: only what is on screen is drawn, labels only when readable, and
// pan/zoom redraws on the next animation frame. Same result shape as the SVG renderer. What it draws is a scene
// (graph/scene.ts): the layout worker's, when the page drew it already as the first frame, else made here.
import type { LayerResult } from '../../protocol/kernel';
import { isQdq, type Graph } from '../importers/types';
import type { Layout } from '../graph/layout';
import { layerFor } from '../graph/metrics';
import type { Rendered, RenderOptions } from './render';
import { sceneOf, type Scene } from '../graph/scene';
import { drawScene, fitScene, lowerBound, paintFor, type View } from './sceneDraw';
import { edgeShapes, labelPlace } from './shapes';

export function renderCanvas(
  host: HTMLElement,
  graph: Graph,
  layout: Layout,
  layers: LayerResult[],
  threshold: number,
  opts: RenderOptions = {},
  scene: Scene = sceneOf(graph, layout, layers, threshold, undefined, opts.lanes),
): Rendered {
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `Graph ${graph.name} (${graph.nodes.length} nodes)`);
  canvas.style.width = '100%';
  canvas.style.height = '100%';
  canvas.style.display = 'block';
  host.replaceChildren(canvas);
  const byModule = new Map(layers.map((l) => [l.module, l]));
  const paint = paintFor(scene, host);
  const { box } = scene;
  const count = scene.node.length;
  const nodeAt = (i: number) => graph.nodes[scene.node[i]];
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

  let view: View = { x: 0, y: 0, scale: 1 };
  let selected: number | undefined;
  let also: number[] = [];
  let pending = 0;

  function draw(): void {
    pending = 0;
    const r = canvas.getBoundingClientRect();
    canvas.dataset.view = `${view.x.toFixed(1)} ${view.y.toFixed(1)} ${view.scale.toFixed(5)}`;
    opts.onView?.({ x: view.x, y: view.y, w: r.width / view.scale, h: r.height / view.scale });
    const shapesDrawn = drawScene(canvas, scene, paint, view, {
      selected,
      also,
      ...(shapes ? { shapes: shapeLabels } : {}),
    });
    // What the last frame drew, for tests and the benchmark (a canvas has no elements to count).
    canvas.dataset.shapes = String(shapesDrawn);
  }
  const redraw = () => {
    if (!pending) pending = requestAnimationFrame(draw);
  };

  const fit = (whole = false) => {
    view = fitScene(canvas, scene, whole);
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
    for (let i = lowerBound(scene, gy - 40); i < count && box[4 * i + 1] <= gy + 40; i++)
      if (Math.abs(gx - box[4 * i]) <= box[4 * i + 2] / 2 && Math.abs(gy - box[4 * i + 1]) <= box[4 * i + 3] / 2)
        return i;
    return undefined;
  };
  canvas.addEventListener('pointerup', (ev) => {
    const click = drag && drag.moved < 4 && ev.button === 0;
    drag = undefined;
    const i = click ? hit(ev) : undefined;
    if (i === undefined) return;
    selected = i;
    also = [];
    redraw();
    opts.onSelect?.(nodeAt(i).id);
  });
  // VS Code reads the context-menu data from the event target, so set it for the node under the pointer.
  canvas.addEventListener(
    'contextmenu',
    (ev) => {
      const i = hit(ev);
      const under = i === undefined ? undefined : nodeAt(i);
      const layer = under?.kind === 'op' && !isQdq(under.op) ? layerFor(under, byModule) : undefined;
      const context = under && opts.contextFor?.(under, layer);
      if (context) canvas.setAttribute('data-vscode-context', JSON.stringify(context));
      else canvas.removeAttribute('data-vscode-context');
    },
    { capture: true },
  );
  new ResizeObserver(redraw).observe(canvas);
  const start = opts.initial;
  if (start) {
    const r = canvas.getBoundingClientRect();
    view = { x: start.x - r.width / (2 * start.scale), y: start.top, scale: start.scale };
    redraw();
  } else fit();
  const indexOf = (id: string) => {
    let i = 0;
    while (i < count && nodeAt(i).id !== id) i++;
    return i;
  };
  const select = (id: string, others: string[] = []) => {
    const i = indexOf(id);
    if (i === count) return;
    selected = i;
    also = others.map(indexOf).filter((k) => k < count);
    const r = canvas.getBoundingClientRect();
    view = { ...view, x: box[4 * i] - r.width / view.scale / 2, y: box[4 * i + 1] - r.height / view.scale / 2 };
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
  return { stats: scene.stats, fit: () => fit(true), select, centreOn, showShapes };
}
