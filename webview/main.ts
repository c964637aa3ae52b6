// Webview entry: receives the model and layer results by postMessage and draws the graph.
// First, so the layout worker starts while the rest of the page loads.
import './worker/start';
import type { Graph } from './importers/types';
import { searchNodes } from './view/search';
import { groupMetrics } from './graph/groups';
import { barChart, htmlReport, pngBase64, standaloneSvg } from './view/export';
import type { LayerResult } from '../protocol/kernel';
import type { Boxes, FromWebview, LayerContext, ToWebview } from '../protocol/webview';
import { BANDS } from '../common/bands';
import { layerFor, layerShown } from './graph/metrics';
import { showProperties } from './view/properties';
import { layerDrift } from './view/drift';
import { applyExecuted, executedSummary } from './graph/executed';
import { renderCanvas } from './view/canvasRender';
import { renderGraph, type RenderOptions } from './view/render';
import type { Scene } from './graph/scene';
import { drawPreview } from './view/sceneDraw';
import { nodeFill } from './graph/nodeLook';
import { colourResolver } from './view/colours';
import { createMinimap } from './view/minimap';
import { sourceOf } from './view/source';
import { counterparts, selectedOf } from './view/sync';
import { isQdq, type GraphNode } from './importers/types';
import { attachStats } from './importers/onnxTensor';
import { layoutInWorker } from './worker/client';
import { renderLayerTable } from './view/layerTable';
import { boxesOf, type BaseLayout } from './graph/layoutReuse';
import type { Layout } from './graph/layout';
import { stageLanes, type StageLanes } from './graph/stageLanes';
import { renderStageTable, stageProperties } from './view/stageTable';
import { stageLegend, stageSummary } from './view/stageView';

/** What the webview keeps across reloads (VS Code's webview state): view choices, not the model. */
interface ViewState {
  /** The Shapes toggle as the user last set it; unset: on for graphs drawn as SVG, off on canvas (large ones). */
  shapes?: boolean;
}
declare function acquireVsCodeApi(): {
  postMessage(message: FromWebview): void;
  getState(): ViewState | undefined;
  setState(state: ViewState): void;
};
const vscode = acquireVsCodeApi();
let state: ViewState = { ...(vscode.getState() ?? {}) };
const $ = (id: string) => document.getElementById(id)!;
let fit: (() => void) | undefined;

function showError(message: string): void {
  const status = document.createElement('p');
  status.id = 'status';
  status.className = 'error';
  status.textContent = message;
  $('canvas').replaceChildren(status);
  $('minimap').hidden = true;
  vscode.postMessage({ type: 'error', message });
}

function legend(threshold: number): void {
  const items: Array<[string, string]> = [
    // Each layer's own cosine against the threshold (propagated: the whole INT8 model against FP32).
    ...BANDS.map(
      (b, i) => [b.colour, `cosine ${b.range(threshold)}${i === 0 ? ' (threshold)' : ''}`] as [string, string],
    ),
    [
      'var(--vscode-charts-purple, #b180d7)',
      'Q / DQ (quantize / dequantize), FQ (fake-quant); badge int8 / fp16 / bf16 / fp32: precision the op runs in',
    ],
  ];
  $('legend').replaceChildren(
    ...items.map(([colour, text]) => {
      const span = document.createElement('span');
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = colour;
      span.append(sw, text);
      return span;
    }),
  );
}

/** Worst-first, sortable per-layer table; a row click shows the layer in the graph and its source. */
function layerTable(layers: LayerResult[], threshold: number, accuracy: ShowGraph['accuracy']): void {
  renderLayerTable($('layers'), layers, {
    threshold,
    ...(accuracy ? { accuracy } : {}),
    chartSvg: barChart(
      [...layers].sort((a, b) => a.cosine - b.cosine),
      threshold,
    ),
    onSelect: (l) => {
      const id =
        view?.graph.nodes.find((n) => n.module === l.module && n.kind !== 'group')?.id ??
        view?.graph.nodes.find((n) => n.kind === 'group' && l.module.startsWith(n.module + '.'))?.id;
      if (id) view?.select(id);
      if (l.source) vscode.postMessage({ type: 'revealSource', file: l.source.file, line: l.source.line });
    },
  });
}

/** This page's script: ui.js sits beside it and gets its nonce. */
const ownScript = document.currentScript as HTMLScriptElement | null;

/**
 * The toolbar's and the layer table's custom elements (@vscode-elements with lit, a quarter of the page's script, and their
 * main-thread setup) come in a script of their own, asked for once the page said it is ready: they load and
 * define themselves while the extension host answers and the worker decodes, instead of before the page can
 * take the model. The elements already in the page upgrade when defined.
 */
function loadToolkit(): void {
  if (!ownScript?.src) return;
  const script = document.createElement('script');
  script.nonce = ownScript.nonce;
  script.src = new URL('ui.js', ownScript.src).href;
  document.head.append(script);
}

let generation = 0;

type ShowGraph = Extract<ToWebview, { type: 'showGraph' }>;
/** The model shown, without its bytes (the layout client keeps the bytes that re-layouts need). */
let current: ShowGraph | undefined;
/** Names the model shown to the layout client, which re-lays out only the model it last got under this key. */
let modelKey = '';
let collapse = false;
/** Open module groups; undefined until the first layout of a model decides (flat or grouped). */
let expanded: Set<string> | null | undefined;
let view:
  { graph: Graph; layout: Layout; select: (id: string, also?: string[]) => void; lanes?: StageLanes } | undefined;
/** Layouts of the model shown, by view options (viewKey): the extension host's from earlier opens of the same
 * content, and the ones made since. */
let layouts = new Map<string, Boxes>();
let showShapes: ((on: boolean) => void) | undefined;
let selectedId: string | undefined;
/** The part of the graph in view (graph units), as the renderer last reported it. */
let inView: { x: number; y: number; w: number; h: number } | undefined;

/** A new model: decode it (in the worker) and draw. */
function show(msg: ShowGraph): Promise<void> {
  // Decode time counts from the message's arrival: handing the bytes on is part of opening the model.
  const arrived = performance.now();
  modelKey = msg.onnx.length + ':' + msg.title;
  // The bytes go to the layout worker (transferred, not copied, for a large model): nothing here keeps them.
  const bytes = msg.onnx instanceof Uint8Array ? msg.onnx : new Uint8Array(msg.onnx);
  current = { ...msg, onnx: new Uint8Array(0), layouts: undefined };
  layouts = new Map((msg.layouts ?? []).map(({ options, ...boxes }) => [options, boxes]));
  lastQuery = '';
  expanded = msg.groups === 'flat' ? null : undefined;
  $('title').textContent = msg.title;
  return draw(current, bytes, arrived);
}

/** The same model again with other view options (groups, Q/DQ collapse), from the bytes the layout client kept.
 * `opened`: the one change is this module group opening (only its contents are laid out). */
function relayout(opened?: string): void {
  if (current)
    draw(current, undefined, undefined, opened, true).catch((err) =>
      showError(`Cannot show this model: ${(err as Error).message}`),
    );
}

/** Names a view of the model shown by the options that decide its layout. */
function viewKey(renderer: ShowGraph['renderer'], expandedNow: Set<string> | null | undefined): string {
  return JSON.stringify([
    renderer ?? 'auto',
    collapse,
    expandedNow === undefined ? 'auto' : expandedNow && [...expandedNow].sort(),
  ]);
}

function toggleGroup(scope: string, open: boolean): void {
  // A flat view has every module open: naming them all lets closing one leave the others open.
  expanded = new Set(expanded ?? view?.graph.nodes.flatMap((n) => n.scopes ?? []) ?? []);
  if (open) expanded.add(scope);
  else for (const s of [...expanded]) if (s === scope || s.startsWith(scope + '.')) expanded.delete(s);
  relayout(open ? scope : undefined);
}

async function draw(
  msg: ShowGraph,
  bytes: Uint8Array | undefined,
  started?: number,
  openedScope?: string,
  keepView = false,
): Promise<void> {
  const mine = ++generation;
  // A re-layout of the model shown keeps the zoom and the place (see keptView); a new model opens fitted.
  const before = keepView && view && inView ? { graph: view.graph, layout: view.layout, seen: inView } : undefined;
  $('summary').textContent = 'Laying out…';
  const t0 = started ?? performance.now();
  const key = viewKey(msg.renderer, expanded);
  const kept = layouts;
  const reuse = kept.get(key);
  const base = !reuse && openedScope && view ? boxesOf(view.graph, view.layout) : undefined;
  const opened: (BaseLayout & { scope: string }) | undefined =
    base && openedScope ? { ...base, ids: view!.graph.nodes.map((n) => n.id), scope: openedScope } : undefined;
  // A view drawn on canvas: the worker's scene is drawn as soon as it comes, ahead of the graph's nodes.
  let scene: Scene | undefined;
  let firstFrame: number | undefined;
  const laidOut = await layoutInWorker(
    modelKey,
    bytes,
    {
      renderer: msg.renderer,
      collapseQdq: collapse,
      expanded: expanded === undefined ? undefined : expanded && [...expanded],
      ...(reuse ? { reuse } : {}),
      ...(opened ? { opened } : {}),
      colouring: {
        layers: msg.layers,
        threshold: msg.threshold,
        ...(msg.executed ? { executed: msg.executed } : {}),
        ...(msg.stages ? { stages: msg.stages } : {}),
      },
    },
    msg.title,
    (s, total) => {
      if (mine !== generation) return;
      scene = s;
      // The page around the graph first, as it will be: the legend, the summary and the layer table take their
      // height from the canvas, which the first frame should have already.
      pageAround(msg, total, s.groups, s.stats.qdq, s.executedCounts);
      drawPreview($('canvas'), s);
      requestAnimationFrame(() => (firstFrame ??= performance.now() - t0));
    },
  );
  if (mine !== generation) return; // a newer request arrived meanwhile
  const { graph, layout, big, timings, inWorker, total } = laidOut;
  for (const [name, stats] of Object.entries(msg.weights ?? {})) {
    const t = graph.tensors.get(name);
    if (t) attachStats(t, stats);
  }
  if (msg.executed) applyExecuted(graph, msg.executed);
  // The model's counts (the drawn graph's would change as groups open and close).
  const executedCounts = laidOut.executedCounts;
  expanded = laidOut.expanded && new Set(laidOut.expanded);
  const t1 = performance.now();
  // The page around the graph first (done already where the scene was drawn): the renderer fits the graph to
  // the room the legend, summary and layer table leave.
  if (!scene)
    pageAround(
      msg,
      total,
      graph.nodes.filter((n) => n.kind === 'group').length,
      graph.nodes.filter((n) => isQdq(n.op) && layout.nodes.has(n.id)).length,
      executedCounts,
    );
  const shown = [...msg.layers, ...groupMetrics(graph, msg.layers)];
  // Find Where INT8 Diverges: the stage results colour the nodes and give them their lanes (one lookup a node).
  const lanes = msg.stages ? stageLanes(msg.stages, graph) : undefined;
  const byModule = new Map(shown.map((l) => [l.module, l]));
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  $('props').hidden = true;
  const config = msg.config ?? graph.config;
  const colour = colourResolver();
  const mini = createMinimap(
    $('minimap'),
    layout,
    (id) => {
      const n = byId.get(id)!;
      return colour(lanes?.fillOf(n) ?? nodeFill(n, layerShown(n, byModule), msg.threshold));
    },
    $('canvas').getBoundingClientRect(),
  );
  // SVG stays crisp and inspectable for model-sized graphs; past the dagre limit the canvas draws only what is visible.
  const options: RenderOptions = {
    // Compared layers (with the config that made them) and nodes that know their source line get a context menu.
    contextFor: (node, layer) => {
      if (node.kind === 'group' || !(layer || node.source)) return undefined;
      const source = layer?.source ?? sourceOf(node, graph, msg.baseDir);
      const module = layer?.module ?? (isQdq(node.op) ? undefined : node.module);
      if (!(module && config) && !source) return undefined;
      return {
        webviewSection: 'layer',
        preventDefaultContextMenuItems: true,
        ...(module && config ? { module, config } : {}),
        ...(source ? { hasSource: true, sourceFile: source.file, sourceLine: source.line } : {}),
      } satisfies LayerContext;
    },
    onSelect: (id) => {
      const node = byId.get(id);
      if (!node) return;
      selectedId = id;
      // A group shown because another view selected inside it stays closed; a click opens it.
      if (node.kind === 'group') {
        if (!following) toggleGroup(node.module!, true);
        return;
      }
      const shownLayer = layerFor(node, byModule);
      showProperties(
        $('props'),
        node,
        graph,
        shownLayer,
        shownLayer && msg.histograms?.find((h) => h.module === shownLayer.module),
        shownLayer && msg.drift ? layerDrift(msg.drift, shownLayer.module) : undefined,
      );
      const lane = lanes?.laneOf(node);
      // The stage figures right under what the node is: what this view is about.
      if (lane && msg.stages) {
        const figures = stageProperties(msg.stages, lane.layer);
        const identity = $('props').querySelector('dl');
        if (identity) identity.after(figures);
        else $('props').append(figures);
      }
      sourceButton(node, graph, msg.baseDir);
      groupButtons(node.scopes ?? []);
      if (!following) vscode.postMessage({ type: 'selected', ...selectedOf(node) });
    },
    onCollapse: (module) => toggleGroup(module, false),
    onView: (v) => {
      inView = v;
      mini.show(v);
    },
    shapes: state.shapes ?? !big,
    ...(lanes ? { lanes } : {}),
    ...(before ? { initial: keptView(before, layout, $('canvas').getBoundingClientRect().width) } : {}),
  };
  const result = big
    ? renderCanvas($('canvas'), graph, layout, shown, msg.threshold, options, scene)
    : renderGraph($('canvas'), graph, layout, shown, msg.threshold, options);
  ($('shapes') as HTMLInputElement).checked = state.shapes ?? !big;
  showShapes = result.showShapes;
  mini.onPan = result.centreOn;
  fit = result.fit;
  view = { graph, layout, select: result.select, ...(lanes ? { lanes } : {}) };
  // A new stage view opens on the earliest layer where two stages that should agree part: its node selected, or
  // the collapsed group that holds it (selected as for another view, so it stays closed until clicked).
  const opening = !before && lanes?.first && lanes.nodeOf(lanes.first.index);
  if (opening) {
    following = true;
    try {
      result.select(opening);
    } finally {
      following = false;
    }
  }
  $('canvas').dataset.layout = inWorker ? 'worker' : 'main-thread';
  const groups = graph.nodes.filter((n) => n.kind === 'group').length;
  requestAnimationFrame(() => {
    const t2 = performance.now();
    vscode.postMessage({
      type: 'rendered',
      ...result.stats,
      renderer: big ? 'canvas' : 'svg',
      inWorker,
      groups,
      total,
      // Handing the bytes on and the transfer to and from the worker count as decode time.
      timings: {
        decode: t1 - t0 - timings.layout,
        layout: timings.layout,
        render: t2 - t1,
        ...(firstFrame !== undefined ? { firstFrame } : {}),
      },
      layoutBy: laidOut.layoutBy,
      laidOutNodes: laidOut.laidOutNodes,
    });
    // After the first frame: the new layout is kept for this view and handed to the extension host, which
    // gives it back when the same content opens again.
    // It is kept under the options asked for and those they came to (auto: flat or grouped).
    if (laidOut.layoutBy === 'layered' || laidOut.layoutBy === 'group')
      setTimeout(() => keepLayout(kept, key, viewKey(msg.renderer, expanded), graph, layout, msg.contentKey), 0);
  });
}

/**
 * After a re-layout (Q/DQ collapsed, a group opened or closed): the same scale, centred so that the node that
 * was nearest the middle of the view (the selected one, when it is still drawn) stays where it was on screen.
 * Refitting instead zoomed out until the labels ran into each other.
 */
function keptView(
  before: { graph: Graph; layout: Layout; seen: { x: number; y: number; w: number; h: number } },
  layout: Layout,
  widthPx: number,
): { scale: number; x: number; top: number } | undefined {
  const { seen } = before;
  if (!widthPx || !seen.w) return undefined;
  const cx = seen.x + seen.w / 2,
    cy = seen.y + seen.h / 2;
  let anchor = selectedId && layout.nodes.has(selectedId) ? selectedId : undefined;
  if (!anchor) {
    let best = Infinity;
    for (const [id, p] of before.layout.nodes) {
      if (!layout.nodes.has(id)) continue;
      const d = (p.x - cx) ** 2 + (p.y - cy) ** 2;
      if (d < best) {
        best = d;
        anchor = id;
      }
    }
  }
  const was = anchor && before.layout.nodes.get(anchor);
  const now = anchor && layout.nodes.get(anchor);
  const scale = widthPx / seen.w;
  const x = was && now ? now.x + (cx - was.x) : cx,
    y = was && now ? now.y + (cy - was.y) : cy;
  // No empty band where the graph got shorter or narrower: a graph larger than the view stays over its edges,
  // a smaller one is centred. The top is kept, not the middle: the view's height may change as it is drawn.
  const clamp = (c: number, extent: number, size: number) =>
    size <= extent ? size / 2 : Math.min(Math.max(c, extent / 2), size - extent / 2);
  return { scale, x: clamp(x, seen.w, layout.width), top: clamp(y, seen.h, layout.height) - seen.h / 2 };
}

/** The legend, the layer table and the summary line of a view. */
function pageAround(
  msg: ShowGraph,
  total: number,
  groups: number,
  qdq: number,
  executedCounts: Record<string, number> | undefined,
): void {
  if (msg.stages) {
    const results = msg.stages;
    stageLegend($('legend'), results);
    renderStageTable($('layers'), results, {
      onSelect: (index) => {
        const id = view?.lanes?.nodeOf(index);
        if (id) view?.select(id);
        const source = results.layers[index].source;
        if (source) vscode.postMessage({ type: 'revealSource', file: source.file, line: source.line });
      },
      onOpenReport: () => vscode.postMessage({ type: 'openStageReport' }),
    });
    $('summary').textContent = stageSummary(results, total, groups, qdq);
    return;
  }
  legend(msg.threshold);
  layerTable(msg.layers, msg.threshold, msg.accuracy);
  const lowest = msg.layers.length ? msg.layers.reduce((a, b) => (a.cosine <= b.cosine ? a : b)) : undefined;
  $('summary').textContent =
    `${total} nodes${groups ? ` in ${groups} collapsed groups (click one to open)` : ''} · ${qdq} Q/DQ shown · ${msg.layers.length} layers compared` +
    (lowest ? ` · lowest cosine ${lowest.module} (${lowest.cosine.toFixed(4)})` : '') +
    (msg.executed && executedCounts ? ` · ${executedSummary(msg.executed, executedCounts)}` : '');
}

function keepLayout(
  kept: Map<string, Boxes>,
  key: string,
  resolvedKey: string,
  graph: Graph,
  layout: Layout,
  contentKey: string | undefined,
): void {
  const boxes = boxesOf(graph, layout);
  if (!boxes) return;
  kept.set(key, boxes);
  kept.set(resolvedKey, boxes);
  if (contentKey) vscode.postMessage({ type: 'layoutComputed', contentKey, options: key, ...boxes });
}

/** Under a selected node's properties: open the line of the model's code that computes it. */
function sourceButton(node: GraphNode, graph: Graph, baseDir: string | undefined): void {
  const source = sourceOf(node, graph, baseDir);
  if (!source) return;
  const b = document.createElement('vscode-button');
  b.id = 'reveal-source';
  b.setAttribute('secondary', '');
  b.textContent = 'Reveal in Source';
  b.title = `${source.file}:${source.line}`;
  b.addEventListener('click', () => vscode.postMessage({ type: 'revealSource', file: source.file, line: source.line }));
  $('props').append(b);
}

/** Under a selected node's properties: one button per enclosing open module, to collapse it again. */
function groupButtons(scopes: string[]): void {
  const open = scopes.filter((s) => expanded?.has(s));
  if (!open.length) return;
  const wrap = document.createElement('section');
  wrap.className = 'groups';
  for (const scope of open.reverse()) {
    const b = document.createElement('vscode-button');
    b.setAttribute('secondary', '');
    b.textContent = `Collapse ${scope}`;
    b.addEventListener('click', () => toggleGroup(scope, false));
    wrap.append(b);
  }
  $('props').append(wrap);
}

/** True while selecting for another view, so the selection is not sent back. */
let following = false;

function follow(sel: Extract<ToWebview, { type: 'selectCounterpart' }>): void {
  const [id, ...also] = view ? counterparts(view.graph, sel) : [];
  if (!id) {
    const module = typeof sel.module === 'string' ? sel.module : undefined;
    showToast(
      sel.name
        ? `No counterpart of ${sel.name}${module ? ` (${module})` : ''} in this graph`
        : `No layer ${module ?? ''} in this graph`,
    );
    return;
  }
  following = true;
  try {
    view!.select(id, also);
  } finally {
    following = false;
  }
}

window.addEventListener('message', (ev: MessageEvent<ToWebview>) => {
  const msg = ev.data;
  const fail = (err: unknown) => showError(`Cannot show this model: ${(err as Error).message}`);
  try {
    if (msg.type === 'showGraph') show(msg).catch(fail);
    else if (msg.type === 'error') showError(msg.message);
    else if (msg.type === 'selectCounterpart') follow(msg);
  } catch (err) {
    fail(err);
  }
});
$('fit').addEventListener('click', () => fit?.());
vscode.postMessage({ type: 'ready' });
loadToolkit();

$('shapes').addEventListener('change', () => {
  const on = ($('shapes') as HTMLInputElement).checked;
  state = { ...state, shapes: on };
  vscode.setState(state);
  showShapes?.(on);
});

$('collapse').addEventListener('change', () => {
  collapse = ($('collapse') as HTMLInputElement).checked;
  relayout();
});

// Enter jumps to the next match, Shift+Enter to the previous one.
let matches: string[] = [];
let matchIndex = -1;
let lastQuery = '';
$('search').addEventListener('keydown', (ev: KeyboardEvent) => {
  if (ev.key !== 'Enter' || !view) return;
  const query = ($('search') as HTMLInputElement).value;
  if (query !== lastQuery) {
    matches = searchNodes(view.graph, query);
    matchIndex = -1;
    lastQuery = query;
  }
  if (!matches.length) {
    $('matches').textContent = query ? 'no match' : '';
    return;
  }
  matchIndex = (matchIndex + (ev.shiftKey ? -1 : 1) + matches.length) % matches.length;
  $('matches').textContent = `${matchIndex + 1} of ${matches.length}`;
  view.select(matches[matchIndex]);
});

async function exportView(format: 'svg' | 'png' | 'html'): Promise<void> {
  if (!current) return;
  const svg = document.querySelector<SVGSVGElement>('#canvas svg');
  const canvas = document.querySelector<HTMLCanvasElement>('#canvas canvas');
  const base = current.title.replace(/\.[^.]+$/, '');
  const svgText = svg ? standaloneSvg(svg) : undefined;
  let data: string;
  if (format === 'svg') {
    if (!svgText) {
      showToast('SVG export is available up to the size drawn as SVG; use PNG for this graph.');
      return;
    }
    data = svgText;
  } else if (format === 'png') data = await pngBase64(svgText ?? canvas!);
  else
    data = htmlReport(
      current.title,
      svgText,
      svgText ? undefined : await pngBase64(canvas!),
      current.layers,
      current.threshold,
      current.stages,
    );
  vscode.postMessage({
    type: 'export',
    format,
    fileName: `${base}.${format === 'html' ? 'report.html' : format}`,
    data,
  });
}

function showToast(text: string): void {
  $('matches').textContent = text;
}

for (const format of ['svg', 'png', 'html'] as const) {
  $(`export-${format}`).addEventListener(
    'click',
    () => void exportView(format).catch((err) => showToast(`Export failed: ${(err as Error).message}`)),
  );
}

/**
 * Keyboard navigation on the graph: Down/Up follow edges to the next/previous node, Left/Right step among
 * the nodes that share the same predecessor, Enter opens a group, F fits, Escape clears the selection.
 */
$('canvas').addEventListener('keydown', (ev: KeyboardEvent) => {
  if (!view) return;
  const { graph, select } = view;
  const edges = graph.edges;
  const node = selectedId ? graph.nodes.find((n) => n.id === selectedId) : undefined;
  let next: string | undefined;
  if (ev.key === 'f' || ev.key === 'F') {
    fit?.();
    ev.preventDefault();
    return;
  }
  if (ev.key === 'Escape') {
    selectedId = undefined;
    $('props').hidden = true;
    return;
  }
  if (!node) {
    if (ev.key.startsWith('Arrow')) next = graph.nodes[0]?.id;
  } else if (ev.key === 'ArrowDown') next = edges.find((e) => e.from === node.id)?.to;
  else if (ev.key === 'ArrowUp') next = edges.find((e) => e.to === node.id)?.from;
  else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
    const parent = edges.find((e) => e.to === node.id)?.from;
    const siblings = parent ? edges.filter((e) => e.from === parent).map((e) => e.to) : [node.id];
    const i = siblings.indexOf(node.id);
    next = siblings[(i + (ev.key === 'ArrowRight' ? 1 : -1) + siblings.length) % siblings.length];
  } else if (ev.key === 'Enter' && node.kind === 'group') {
    toggleGroup(node.module!, true);
    ev.preventDefault();
    return;
  }
  if (next) {
    select(next);
    ev.preventDefault();
  }
});
