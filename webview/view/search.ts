// Search by node name, op type, module path or tensor name (case-insensitive): exact matches first, then
// prefixes, then substrings, each in graph order.
import type { Graph } from '../importers/types';

export function searchNodes(graph: Graph, query: string): string[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const scored: Array<[number, number, string]> = [];
  graph.nodes.forEach((n, i) => {
    const keys = [n.name, n.op, n.module ?? '', ...n.inputs, ...n.outputs].map((s) => s.toLowerCase());
    const score = keys.includes(q)
      ? 0
      : keys.some((k) => k.startsWith(q))
        ? 1
        : keys.some((k) => k.includes(q))
          ? 2
          : -1;
    if (score >= 0) scored.push([score, i, n.id]);
  });
  return scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , id]) => id);
}
