// Colouring layers by FP32-vs-INT8 cosine similarity, relative to the config's threshold.
import type { LayerResult } from '../../protocol/kernel';
import type { GraphNode } from '../importers/types';

export interface Band {
  label: string;
  colour: string;
  test: (cos: number, threshold: number) => boolean;
}

export const BANDS: Band[] = [
  { label: '≥ threshold', colour: 'var(--vscode-charts-green, #388a34)', test: (c, t) => c >= t },
  { label: 'within 0.02', colour: 'var(--vscode-charts-yellow, #bf8803)', test: (c, t) => c >= t - 0.02 },
  { label: 'within 0.10', colour: 'var(--vscode-charts-orange, #d18616)', test: (c, t) => c >= t - 0.1 },
  { label: 'worse', colour: 'var(--vscode-charts-red, #e51400)', test: () => true },
];

export function bandOf(cosine: number, threshold: number): Band {
  return BANDS.find((b) => b.test(cosine, threshold))!;
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
