// Which nodes of this graph stand for a node selected in another graph of the same model (FP32, fake-quant,
// INT8, what ONNX Runtime and TVM run): the same node name and op, else for each module the selection covers
// (a runtime's fused kernel covers several: conv1 and relu1) its main op (the same op first, Q/DQ and fake-quant
// last) or the fused kernel that covers it, else the collapsed group that holds the module.
import { isQdq, type Graph, type GraphNode } from '../importers/types';

export interface Selected {
  name: string;
  op: string;
  module?: string;
  /** Every module a fused kernel covers, `module` first. */
  modules?: string[];
}

/** What another view needs to find a node's counterpart: Q/DQ nodes have no module, only the one they sit in. */
export function selectedOf(node: GraphNode): Selected {
  const module = node.module ?? node.scopes?.at(-1);
  return {
    name: node.name,
    op: node.op,
    ...(module ? { module } : {}),
    ...(node.modules && node.modules.length > 1 ? { modules: node.modules } : {}),
  };
}

const covers = (n: GraphNode, module: string) => n.module === module || (n.modules?.includes(module) ?? false);

/** The nodes that stand for `sel` here, the one to show first; [] when none does. */
export function counterparts(graph: Graph, sel: Selected): string[] {
  const drawn = graph.nodes.filter((n) => n.kind !== 'group');
  const same = drawn.find((n) => n.name === sel.name && n.op === sel.op);
  if (same) return [same.id];
  const wanted = sel.modules?.length ? sel.modules : sel.module ? [sel.module] : [];
  const found: string[] = [];
  for (const m of wanted) {
    const inModule = drawn.filter((n) => covers(n, m));
    const pick = inModule.find((n) => n.op === sel.op) ?? inModule.find((n) => !isQdq(n.op)) ?? inModule[0];
    const group = pick
      ? undefined
      : graph.nodes.find((n) => n.kind === 'group' && n.module && (m === n.module || m.startsWith(n.module + '.')));
    const id = pick?.id ?? group?.id;
    if (id && !found.includes(id)) found.push(id);
  }
  return found;
}

/** The node to show first for `sel` (see counterparts). */
export function counterpart(graph: Graph, sel: Selected): string | undefined {
  return counterparts(graph, sel)[0];
}
