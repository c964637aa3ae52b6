// Module hierarchy as collapsible groups: every node whose enclosing module is collapsed is drawn as one
// group node for that module, so a 100k-node model opens as a few dozen boxes and expands on demand.
import type { LayerResult } from '../../protocol/kernel';
import { isQdq, type Graph, type GraphNode } from '../importers/types';
import { producerMap } from './qdq';

export const groupId = (scope: string) => `group:${scope}`;

/** Q/DQ nodes carry no module: they belong with the op they feed (else the one that feeds them). */
export function inheritScopes(graph: Graph, producers: Map<string, GraphNode> = producerMap(graph)): void {
  const orphans = graph.nodes.filter((n) => !n.scopes?.length && isQdq(n.op));
  if (!orphans.length) return;
  // Consumers only of the tensors an orphan Q/DQ writes first (the only ones looked up).
  const consumers = new Map<string, GraphNode[]>();
  for (const n of orphans) if (n.outputs.length) consumers.set(n.outputs[0], []);
  for (const n of graph.nodes) for (const t of n.inputs) consumers.get(t)?.push(n);
  // Twice, so Q -> DQ -> Conv chains pick up the Conv's scopes.
  for (let pass = 0; pass < 2; pass++) {
    for (const n of orphans) {
      if (n.scopes?.length) continue;
      let scopes: string[] | undefined;
      for (const c of consumers.get(n.outputs[0]) ?? NONE)
        if (c.scopes?.length) {
          scopes = c.scopes;
          break;
        }
      scopes ??= producers.get(n.inputs[0])?.scopes;
      if (scopes?.length) n.scopes = scopes.length > 1 ? scopes.slice(0, -1) : scopes;
    }
  }
}

const NONE: readonly GraphNode[] = [];

/** Top-level scopes, the ones collapsed when a large graph opens. */
export function topScopes(graph: Graph): string[] {
  return [...new Set(graph.nodes.map((n) => n.scopes?.[0]).filter((s): s is string => !!s))];
}

/** The key that opens a family of repeated blocks (`model.layers.*`): a fold stays folded until it is expanded. */
export const foldKey = (base: string) => `${base}.*`;

const NUMBERED = /^(.+)\.(\d+)$/;

const shapeOf = (graph: Graph, tensor: string) => graph.tensors.get(tensor)?.dims.join('x') ?? '?';

/** A family of repeated blocks is folded when its blocks hold at least this share of the graph's nodes: the stack
 * of a transformer (nearly all of it), not a CNN stage's few blocks whose op sequence happens to repeat. */
export const FOLD_SHARE = 0.5;

/**
 * Repeated blocks: numbered sibling scopes (a ModuleList's or Sequential's `layers.0`, `layers.1`, ...) under one
 * parent whose nodes run the same ops on inputs of the same shapes in the same sub-modules, in the same order (a
 * CNN's blocks repeat op sequences at other widths). Of each family, the largest set
 * of blocks that agree (T5's first block, which alone computes the position bias, stays out), when it has at least
 * two blocks holding FOLD_SHARE of the graph's nodes. Member scope -> the family's base (`model.layers`).
 */
export function repeatedBlocks(graph: Graph): Map<string, string> {
  const signature = new Map<string, string[]>();
  const families = new Map<string, { base: string; members: string[] }>();
  for (const n of graph.nodes) {
    const scopes = n.scopes;
    if (!scopes?.length) continue;
    const inner = scopes[scopes.length - 1];
    scopes.forEach((scope, depth) => {
      const m = NUMBERED.exec(scope);
      if (!m) return;
      const key = `${scopes[depth - 1] ?? ''}|${m[1]}`;
      let family = families.get(key);
      if (!family) families.set(key, (family = { base: m[1], members: [] }));
      let parts = signature.get(scope);
      if (!parts) {
        signature.set(scope, (parts = []));
        family.members.push(scope);
      }
      parts.push(`${inner.slice(scope.length)}:${n.op}:${n.inputs.map((t) => shapeOf(graph, t)).join(',')}`);
    });
  }
  const folds = new Map<string, string>();
  for (const { base, members } of families.values()) {
    const alike = new Map<string, string[]>();
    for (const m of members) {
      const key = signature.get(m)!.join('\n');
      alike.set(key, [...(alike.get(key) ?? []), m]);
    }
    const largest = [...alike.values()].reduce((a, b) => (b.length > a.length ? b : a), []);
    const nodes = largest.reduce((sum, m) => sum + signature.get(m)!.length, 0);
    if (largest.length >= 2 && nodes >= FOLD_SHARE * graph.nodes.length) for (const m of largest) folds.set(m, base);
  }
  return folds;
}

/** What opens first on a graph with repeated blocks: every module, the first block of each family included, with the
 * other blocks folded into one box, so a 32-layer model reads like a 1-layer one. null: the graph has none. */
export function firstBlockOpen(graph: Graph, folds: Map<string, string> = repeatedBlocks(graph)): string[] | null {
  if (!folds.size) return null;
  const firsts = new Map<string, number>();
  for (const [member, base] of folds) {
    const index = Number(NUMBERED.exec(member)![2]);
    firsts.set(base, Math.min(firsts.get(base) ?? index, index));
  }
  const open = new Set<string>();
  for (const n of graph.nodes)
    for (const scope of n.scopes ?? []) {
      const base = folds.get(scope);
      if (base !== undefined && Number(NUMBERED.exec(scope)![2]) !== firsts.get(base)) break;
      open.add(scope);
    }
  return [...open];
}

const foldName = (base: string, members: string[]) => {
  const indices = members.map((m) => Number(NUMBERED.exec(m)![2])).sort((a, b) => a - b);
  if (indices.length === 1) return `${base}.${indices[0]}`;
  const run = indices[indices.length - 1] - indices[0] + 1 === indices.length;
  return run ? `${base}.${indices[0]}–${indices[indices.length - 1]} ×${indices.length}` : `${base} ×${indices.length}`;
};

/** The graph as seen with only `expanded` modules open; the collapsed blocks of a family of repeated blocks are
 * one box (its module the family's foldKey) until that key is expanded. */
export function groupGraph(
  graph: Graph,
  expanded: ReadonlySet<string>,
  folds: Map<string, string> = repeatedBlocks(graph),
): Graph {
  const rep = new Map<string, string>();
  const groups = new Map<string, GraphNode>();
  const nodes: GraphNode[] = [];
  for (const n of graph.nodes) {
    const scope = n.scopes?.find((s) => !expanded.has(s));
    if (!scope) {
      rep.set(n.id, n.id);
      nodes.push(n);
      continue;
    }
    const base = folds.get(scope);
    const key = base !== undefined && !expanded.has(foldKey(base)) ? foldKey(base) : scope;
    const id = groupId(key);
    rep.set(n.id, id);
    let g = groups.get(id);
    if (!g) {
      const depth = n.scopes!.indexOf(scope);
      g = {
        id,
        name: key,
        op: key,
        module: key,
        scopes: [...n.scopes!.slice(0, depth), key],
        kind: 'group',
        inputs: [],
        outputs: [],
        size: 0,
        ...(key !== scope ? { folded: [] } : {}),
      };
      groups.set(id, g);
      nodes.push(g);
    }
    if (g.folded && !g.folded.includes(scope)) g.folded.push(scope);
    g.size!++;
  }
  for (const g of groups.values()) if (g.folded) g.name = g.op = foldName(g.module!.slice(0, -2), g.folded);
  const seen = new Set<string>();
  const edges: Graph['edges'] = [];
  for (const e of graph.edges) {
    const from = rep.get(e.from),
      to = rep.get(e.to);
    if (!from || !to || from === to || seen.has(`${from}>${to}`)) continue;
    seen.add(`${from}>${to}`);
    edges.push({ ...e, from, to });
  }
  return { ...graph, nodes, edges };
}

/** The worst compared layer inside each collapsed group, so the group is coloured by it. */
export function groupMetrics(graph: Graph, layers: LayerResult[]): LayerResult[] {
  const out: LayerResult[] = [];
  for (const g of graph.nodes) {
    if (g.kind !== 'group' || !g.module) continue;
    const within = (scope: string) => (l: LayerResult) => l.module === scope || l.module.startsWith(scope + '.');
    const inside = g.folded
      ? layers.filter((l) => g.folded!.some((member) => within(member)(l)))
      : layers.filter(within(g.module));
    if (!inside.length) continue;
    const worst = inside.reduce((a, b) => (a.cosine <= b.cosine ? a : b));
    out.push({ ...worst, module: g.module!, group: [`worst of ${inside.length}: ${worst.module}`] });
  }
  return out;
}
