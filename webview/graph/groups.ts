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

/** The graph as seen with only `expanded` modules open. */
export function groupGraph(graph: Graph, expanded: ReadonlySet<string>): Graph {
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
    const id = groupId(scope);
    rep.set(n.id, id);
    let g = groups.get(id);
    if (!g) {
      const depth = n.scopes!.indexOf(scope);
      g = {
        id,
        name: scope,
        op: scope,
        module: scope,
        scopes: n.scopes!.slice(0, depth + 1),
        kind: 'group',
        inputs: [],
        outputs: [],
        size: 0,
      };
      groups.set(id, g);
      nodes.push(g);
    }
    g.size!++;
  }
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
    const inside = layers.filter((l) => l.module === g.module || l.module.startsWith(g.module + '.'));
    if (!inside.length) continue;
    const worst = inside.reduce((a, b) => (a.cosine <= b.cosine ? a : b));
    out.push({ ...worst, module: g.module, group: [`worst of ${inside.length}: ${worst.module}`] });
  }
  return out;
}
