// Which node of this graph stands for a node selected in another graph of the same model (FP32, fake-quant,
// INT8): the same node name and op, else the module's main op (the same op first, Q/DQ and fake-quant last),
// else the collapsed group that holds the module.
import { isQdq, type Graph, type GraphNode } from '../importers/types';

export interface Selected {
  name: string;
  op: string;
  module?: string;
}

/** What another view needs to find a node's counterpart: Q/DQ nodes have no module, only the one they sit in. */
export function selectedOf(node: GraphNode): Selected {
  const module = node.module ?? node.scopes?.at(-1);
  return { name: node.name, op: node.op, ...(module ? { module } : {}) };
}

export function counterpart(graph: Graph, sel: Selected): string | undefined {
  const drawn = graph.nodes.filter((n) => n.kind !== 'group');
  const same = drawn.find((n) => n.name === sel.name && n.op === sel.op);
  if (same) return same.id;
  if (!sel.module) return undefined;
  const inModule = drawn.filter((n) => n.module === sel.module);
  const pick = inModule.find((n) => n.op === sel.op) ?? inModule.find((n) => !isQdq(n.op)) ?? inModule[0];
  if (pick) return pick.id;
  const m = sel.module;
  return graph.nodes.find((n) => n.kind === 'group' && n.module && (m === n.module || m.startsWith(n.module + '.')))
    ?.id;
}
