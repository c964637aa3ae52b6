// Find Where INT8 Diverges in the graph view, without the DOM (the layout worker draws the canvas scene with it
// too): how far two stages part at a layer (a level and its colour), which drawn node carries which layer (by the
// layer's ONNX node names, else its module), each node's stage lane (one badge per stage), its fill (the layer's
// worst bisected pair), and the node where each bisected pair first diverges. Stage ids come from the result:
// a stage the kernel adds later is drawn like the others.
import type { StageDivergence, StageLayer, StageMetrics, StagePair } from '../../protocol/kernel';
import type { StageResults } from '../../protocol/webview';
import { isQdq, type Graph, type GraphNode } from '../importers/types';

/** How one stage compares at a layer: a badge's look. Their index is what the canvas scene stores (Uint8). */
export const LEVELS = ['agrees', 'slight', 'diverges', 'reference', 'absent', 'fused'] as const;
export type Level = (typeof LEVELS)[number];
/** The levels an error has, best first. */
export type ErrorLevel = 'agrees' | 'slight' | 'diverges';

/** Each level's colour (CSS, theme variables, so the worker can name it), what it means (tooltips) and its
 * legend entry. */
export const LEVEL_LOOK: Record<Level, { colour: string; text: string; short: string }> = {
  agrees: { colour: 'var(--vscode-charts-green, #388a34)', text: 'agrees to rounding', short: 'agrees' },
  slight: {
    colour: 'var(--vscode-charts-yellow, #bf8803)',
    text: 'diverges by a few steps (up to twice rounding) or a few dB',
    short: 'a few steps off',
  },
  diverges: { colour: 'var(--vscode-charts-red, #e51400)', text: 'diverges', short: 'diverges' },
  reference: {
    colour: 'var(--vscode-charts-blue, #1a85ff)',
    text: 'no stage before it that should agree',
    short: 'reference',
  },
  absent: {
    colour: 'var(--vscode-disabledForeground, #8b8b8b)',
    text: 'not measured: no such layer there',
    short: 'not measured',
  },
  fused: {
    colour: 'var(--vscode-descriptionForeground, #717171)',
    text: 'fused away by the runtime',
    short: 'fused by the runtime',
  },
};

/** The stages that run the PyTorch model, where every node of a layer is computed as it is drawn. Any other
 * stage runs the ONNX file in a runtime (ONNX Runtime, the C runner, TVM, ...), which fuses a layer's nodes and
 * is measured at the layer's output only. */
export const PYTORCH_STAGES: ReadonlySet<string> = new Set(['fp32', 'fakeQuant', 'int8']);
export const isRuntime = (stage: string) => !PYTORCH_STAGES.has(stage);

/** A float output (no steps) this many dB under the floor is a clear divergence rather than a slight one. */
const SLIGHT_DB = 10;

/** Where a pair's figures come from, and the thresholds the kernel judged them by. */
type Thresholds = Pick<StageResults, 'roundingSteps' | 'floatSqnrDb'>;

/** How far a comparison is from rounding: in output quantization steps where the output is quantized, else by
 * SQNR against the float floor (the kernel's rule, analysis/divergence.py `diverged`). */
export function errorLevel(
  metrics: Pick<StageMetrics, 'sqnr'> | undefined,
  steps: number | undefined,
  t: Thresholds,
): ErrorLevel | undefined {
  if (!metrics) return undefined;
  if (steps !== undefined)
    return steps <= t.roundingSteps ? 'agrees' : steps <= 2 * t.roundingSteps ? 'slight' : 'diverges';
  if (metrics.sqnr >= t.floatSqnrDb) return 'agrees';
  return metrics.sqnr >= t.floatSqnrDb - SLIGHT_DB ? 'slight' : 'diverges';
}

const RANK: Record<ErrorLevel, number> = { agrees: 0, slight: 1, diverges: 2 };

/** A sort key, larger is worse: steps, else dB under the float floor at about one bit (one step) per 6 dB. */
export function severity(pair: StagePair | undefined, which: 'local' | 'propagated', t: Thresholds): number {
  const metrics = pair?.[which];
  if (!metrics) return -Infinity;
  const steps = which === 'local' ? pair?.localSteps : pair?.propagatedSteps;
  return steps ?? (t.floatSqnrDb - metrics.sqnr) / 6.02;
}

/** A pair's figure as the view writes it: steps where the output is quantized, else SQNR. */
export function figure(pair: StagePair | undefined, which: 'local' | 'propagated'): string | undefined {
  const metrics = pair?.[which];
  if (!metrics) return undefined;
  const steps = which === 'local' ? pair?.localSteps : pair?.propagatedSteps;
  if (steps !== undefined) return `${steps.toFixed(1)} steps`;
  return metrics.sqnr > 1e300 ? 'identical' : `${metrics.sqnr.toFixed(1)} dB`;
}

/** A pair key's stages: "int8:ort" -> ["int8", "ort"]. */
export const pairStages = (key: string): [string, string] => {
  const at = key.indexOf(':');
  return [key.slice(0, at), key.slice(at + 1)];
};

/** "PyTorch INT8 → ONNX Runtime" (an unknown id as it is). */
export function pairLabel(results: Pick<StageResults, 'stages'>, key: string): string {
  const label = (id: string) => results.stages.find((s) => s.id === id)?.label ?? id;
  const [a, b] = pairStages(key);
  return `${label(a)} → ${label(b)}`;
}

/** Per stage: the bisected pair that ends at it (its predecessor that should compute the same numbers). */
export function predecessors(results: Pick<StageResults, 'bisected'>): Map<string, string> {
  const out = new Map<string, string>();
  for (const key of results.bisected) {
    const later = pairStages(key)[1];
    if (!out.has(later)) out.set(later, key);
  }
  return out;
}

/** Each stage's level at a layer, in `results.stages` order, at the node its output is measured at. */
export function layerLevels(results: StageResults, layer: StageLayer, before = predecessors(results)): Level[] {
  return results.stages.map(({ id }) => {
    if (layer.stages[id] === false) return 'absent';
    const key = before.get(id);
    if (!key) return 'reference';
    const pair = layer.pairs[key];
    return errorLevel(pair?.local, pair?.localSteps, results) ?? 'absent';
  });
}

/** The layer's worst level over the bisected pairs (local errors), undefined where none was measured. */
export function worstLevel(results: StageResults, layer: StageLayer): ErrorLevel | undefined {
  let worst: ErrorLevel | undefined;
  for (const key of results.bisected) {
    const pair = layer.pairs[key];
    const level = errorLevel(pair?.local, pair?.localSteps, results);
    if (level && (!worst || RANK[level] > RANK[worst])) worst = level;
  }
  return worst;
}

/** The bisected pairs' first divergences, in bisected order (only the pairs that diverge). */
export function divergences(results: StageResults): StageDivergence[] {
  return results.bisected.map((k) => results.divergence[k]).filter((d): d is StageDivergence => d !== undefined);
}

/** What a drawn node carries: a layer's badges, one per stage. */
export interface Lane {
  /** Index into `results.layers`. */
  layer: number;
  /** Per stage, in `results.stages` order. */
  levels: Level[];
  /** The node the layer's output is measured at; the others are inside the layer (a runtime fuses them away). */
  output: boolean;
}

export interface StageLanes {
  results: StageResults;
  /** The lane a drawn node carries (one map lookup). */
  laneOf(node: GraphNode): Lane | undefined;
  /** A drawn node's fill: its layer's worst bisected pair (a group: the worst layer inside); undefined keeps the
   * usual fill (Q/DQ keep theirs). */
  fillOf(node: GraphNode): string | undefined;
  /** The bisected pairs (keys) that first diverge at this drawn node. */
  firstAt(node: GraphNode): readonly string[] | undefined;
  /** The drawn node that stands for layer `index` (a row click selects it, a divergence marks it). */
  nodeOf(index: number): string | undefined;
  /** The earliest first divergence in graph order (the one the view opens on). */
  first?: StageDivergence;
}

/**
 * The lanes of `graph` (the graph as drawn: Q/DQ may be collapsed, modules grouped). A layer's lane with its
 * figures goes on the node that writes its output tensor (`onnx.output`), or the last of its nodes still drawn;
 * its other nodes carry the same lane with each runtime's badge marked fused. A node that ends one layer and
 * starts the next (a shared Q) carries the layer it ends. Layers without ONNX nodes go on their module's ops.
 * Work is linear in the graph and the layers' node lists; each lookup after is one map access.
 */
export function stageLanes(results: StageResults, graph: Graph): StageLanes {
  const before = predecessors(results);
  const byName = new Map<string, GraphNode>();
  const wanted = new Set<string>();
  for (const l of results.layers) if (l.onnx) wanted.add(l.onnx.output);
  const producer = new Map<string, GraphNode>();
  const moduleOp = new Map<string, GraphNode>();
  const groupByModule = new Map<string, GraphNode>();
  for (const n of graph.nodes) {
    if (n.kind === 'group') {
      if (n.module) groupByModule.set(n.module, n);
      continue;
    }
    if (!byName.has(n.name)) byName.set(n.name, n);
    for (const t of n.outputs) if (wanted.has(t) && !producer.has(t)) producer.set(t, n);
    if (n.kind === 'op' && n.module && !isQdq(n.op) && !moduleOp.has(n.module)) moduleOp.set(n.module, n);
  }
  const lanes = new Map<string, Lane>();
  const byModule = new Map<string, Lane>();
  const fill = new Map<number, string>();
  const groupWorst = new Map<string, ErrorLevel>();
  const nodes: Array<string | undefined> = [];
  results.layers.forEach((layer, i) => {
    const levels = layerLevels(results, layer, before);
    const fused = levels.map((lv, k) => (lv !== 'absent' && isRuntime(results.stages[k].id) ? 'fused' : lv));
    const worst = worstLevel(results, layer);
    if (worst) {
      fill.set(i, LEVEL_LOOK[worst].colour);
      for (let m = layer.module; m; m = m.includes('.') ? m.slice(0, m.lastIndexOf('.')) : '') {
        const had = groupWorst.get(m);
        if (!had || RANK[worst] > RANK[had]) groupWorst.set(m, worst);
      }
    }
    const drawn = (layer.onnx?.nodes ?? []).map((name) => byName.get(name)).filter((n) => n !== undefined);
    const written = layer.onnx && producer.get(layer.onnx.output);
    const out = written ?? drawn.at(-1);
    for (const n of drawn)
      if (n !== out && !lanes.has(n.id)) lanes.set(n.id, { layer: i, levels: fused, output: false });
    if (out) lanes.set(out.id, { layer: i, levels, output: true });
    if (!layer.onnx) byModule.set(layer.module, { layer: i, levels, output: true });
    const main = drawn.find((n) => n.module === layer.module && !isQdq(n.op)) ?? drawn.find((n) => !isQdq(n.op)) ?? out;
    nodes.push(main?.id ?? moduleOp.get(layer.module)?.id ?? enclosingGroup(layer.module, groupByModule)?.id);
  });
  const firsts = new Map<string, string[]>();
  let first: StageDivergence | undefined;
  for (const d of divergences(results)) {
    const id = nodes[d.index];
    if (id) (firsts.get(id) ?? firsts.set(id, []).get(id)!).push(d.pair);
    if (!first || d.index < first.index) first = d;
  }
  const laneOf = (n: GraphNode) =>
    lanes.get(n.id) ?? (n.kind === 'op' && n.module && !isQdq(n.op) ? byModule.get(n.module) : undefined);
  return {
    results,
    laneOf,
    fillOf: (n) => {
      if (n.kind === 'group') {
        const worst = n.module ? groupWorst.get(n.module) : undefined;
        return worst && LEVEL_LOOK[worst].colour;
      }
      if (n.kind !== 'op' || isQdq(n.op)) return undefined;
      const lane = laneOf(n);
      return lane && fill.get(lane.layer);
    },
    firstAt: (n) => firsts.get(n.id),
    nodeOf: (index) => nodes[index],
    ...(first ? { first } : {}),
  };
}

/** The collapsed group that holds `module` (itself or an enclosing module), if one is drawn. */
function enclosingGroup(module: string, groups: Map<string, GraphNode>): GraphNode | undefined {
  for (let m = module; m; m = m.includes('.') ? m.slice(0, m.lastIndexOf('.')) : '') {
    const g = groups.get(m);
    if (g) return g;
  }
  return undefined;
}

/** Size of a lane's badges and the gap between them (graph units). */
export const LANE = { width: 8, height: 7, gap: 2 } as const;

/** Where a node's lane of `count` badges goes: centred on the node's bottom edge, half over it. Returns the
 * first badge's top-left corner; the k-th is `k * (LANE.width + LANE.gap)` to its right. */
export function laneOrigin(cx: number, bottom: number, count: number): { x: number; y: number } {
  const width = count * LANE.width + (count - 1) * LANE.gap;
  return { x: cx - width / 2, y: bottom - LANE.height / 2 };
}

/** What a badge says when pointed at: the stage, what it is compared with, its figures and its level. */
export function badgeTitle(results: StageResults, layer: StageLayer, stage: number, level: Level): string {
  const { id, label } = results.stages[stage];
  const key = predecessors(results).get(id);
  if (level === 'absent' && layer.stages[id] === false)
    return `${label}: ${layer.module} not found there${results.missing?.[id] ? ` (${results.missing[id]})` : ''}`;
  if (level === 'reference' || !key) return `${label}: ${LEVEL_LOOK.reference.text}`;
  const pair = layer.pairs[key];
  const local = figure(pair, 'local');
  const propagated = figure(pair, 'propagated');
  const against = pairLabel(results, key);
  const figures = [local && `local ${local}`, propagated && `propagated ${propagated}`].filter(Boolean).join(', ');
  const fused = level === 'fused' ? `fused into the layer by ${label}; measured at ${layer.module}'s output: ` : '';
  const judged = level === 'fused' ? errorLevel(pair?.local, pair?.localSteps, results) : level;
  return `${against}: ${fused}${figures || 'not measured'}${judged && judged !== 'absent' ? ` (${LEVEL_LOOK[judged].text})` : ''}`;
}
