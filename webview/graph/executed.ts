// "Precision as executed": what a runtime really ran for each node after optimising the graph (ONNX Runtime's
// build report), laid over the graph: the badge shows the executed precision, the properties panel the kernel
// that ran it and, for a node left in fp32, why.
import type { ExecutedOp, ExecutedOverlay } from '../../protocol/webview';
import type { Graph, GraphNode, Precision } from '../importers/types';

const BADGED: ReadonlySet<string> = new Set(['int8', 'fp16', 'bf16', 'fp32']);

/** Marks every node the overlay names; returns how many ops run in each precision. */
export function applyExecuted(graph: Graph, overlay: ExecutedOverlay): Record<string, number> {
  for (const n of graph.nodes) {
    const e = overlay.ops[n.name];
    if (!e) continue;
    n.executed = e;
    if (BADGED.has(e.precision)) n.precision = e.precision as Precision;
  }
  return executedCounts(graph.nodes, overlay);
}

/** How many of these nodes' compute ops the overlay has running in each precision. */
export function executedCounts(nodes: readonly GraphNode[], overlay: ExecutedOverlay): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const n of nodes) {
    const e = overlay.ops[n.name];
    if (e?.role === 'compute') counts[e.precision] = (counts[e.precision] ?? 0) + 1;
  }
  return counts;
}

/** "compute ops as executed by ONNX Runtime 1.32 (CPU): 3 int8, 1 fp32". */
export function executedSummary(overlay: ExecutedOverlay, counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([p, c]) => `${c} ${p}`);
  return `compute ops as executed by ${overlay.runtime}: ${parts.join(', ') || 'none matched'}`;
}

/** Rows of the properties panel's "As executed" section. */
export function executedRows(e: ExecutedOp): Array<[string, string]> {
  return [
    ['precision', e.precision],
    ...(e.ranAs ? [['ran as', e.ranAs] as [string, string]] : []),
    ...(e.dtypes ? [['data types', e.dtypes] as [string, string]] : []),
    ...(e.reason ? [['why fp32', e.reason] as [string, string]] : []),
  ];
}

export type { GraphNode };
