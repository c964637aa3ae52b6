// Which compared layer a drawn node shows, and layer names fitted to narrow places. The colour bands are
// common/bands.ts (the host's Layers view uses them too).
import type { LayerResult } from '../../protocol/kernel';
import { isQdq, type GraphNode } from '../importers/types';

/**
 * The compared layer a drawn node shows: a collapsed group's own entry (the worst layer inside it, from
 * groupMetrics), an op's layer (layerFor); none for Q/DQ, inputs and outputs.
 */
export function layerShown(node: GraphNode, byModule: Map<string, LayerResult>): LayerResult | undefined {
  if (node.kind === 'group') return node.module ? byModule.get(node.module) : undefined;
  if (node.kind !== 'op' || isQdq(node.op)) return undefined;
  return layerFor(node, byModule);
}

/**
 * `name` in at most `max` characters, cut in the middle so its end stays: module paths differ at the end
 * (features.16.conv.3, features.17.conv.3), so the tail keeps two thirds of the room.
 */
export function middleEllipsis(name: string, max: number): string {
  if (name.length <= max) return name;
  if (max <= 1) return '…';
  const keep = max - 1;
  // The end from a part boundary (17.conv.6) when one leaves room for a little of the start.
  for (let i = name.indexOf('.'); i >= 0; i = name.indexOf('.', i + 1)) {
    const tail = name.length - i - 1;
    if (tail <= keep - 2 && tail >= keep / 2) return name.slice(0, keep - tail) + '…' + name.slice(i + 1);
  }
  const head = Math.floor(keep / 3);
  return name.slice(0, head) + '…' + name.slice(name.length - (keep - head));
}

/**
 * Per name, the shortest tail of whole dot-separated parts that no other name ends with: where `names` differ
 * (17.conv.6 of features.17.conv.6 beside features.16.conv.6), which a narrow column must keep in view.
 */
export function distinguishingTails(names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const parts = names.map((n) => n.split('.'));
  const tailOf = (p: string[], k: number) => p.slice(p.length - k).join('.');
  const counts = new Map<string, number>();
  const maxParts = Math.max(0, ...parts.map((p) => p.length));
  for (let k = 1; k <= maxParts; k++)
    for (const p of parts)
      if (p.length >= k) counts.set(`${k}:${tailOf(p, k)}`, (counts.get(`${k}:${tailOf(p, k)}`) ?? 0) + 1);
  names.forEach((name, i) => {
    const p = parts[i];
    let k = 1;
    while (k < p.length && (counts.get(`${k}:${tailOf(p, k)}`) ?? 0) > 1) k++;
    out.set(name, tailOf(p, k));
  });
  return out;
}

/** The layer result a graph node belongs to: same module path, or a submodule of it. */
export function layerFor(node: GraphNode, byModule: Map<string, LayerResult>): LayerResult | undefined {
  if (!byModule.size) return undefined;
  for (let m = node.module; m; m = m.includes('.') ? m.slice(0, m.lastIndexOf('.')) : undefined) {
    const hit = byModule.get(m);
    if (hit) return hit;
  }
  return undefined;
}
