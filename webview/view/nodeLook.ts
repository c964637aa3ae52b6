// How a node looks wherever it is drawn (SVG, canvas, the layout worker's scene, the minimap): its fill and the
// tag a Q/DQ box carries. Theme variables only, so this runs in the worker too.
import type { LayerResult } from '../../protocol/kernel';
import { isQdq, type GraphNode } from '../importers/types';
import { bandOf } from './metrics';
import { categoryFill, opCategory } from './opCategory';

/** A node's fill, as CSS (theme variables): Q/DQ, a compared layer by its cosine band, other ops by category, the rest. */
export function nodeFill(n: GraphNode, layer: LayerResult | undefined, threshold: number): string {
  if (isQdq(n.op)) return 'var(--vscode-charts-purple, #b180d7)';
  if (layer) return bandOf(layer.cosine, threshold).colour;
  const category = n.kind === 'op' ? opCategory(n.op) : undefined;
  if (category) return categoryFill(category);
  return n.kind === 'op' ? 'var(--vscode-editorWidget-background, #eee)' : 'var(--vscode-badge-background, #ddd)';
}

/** Short tag drawn on Q/DQ boxes, ahead of the op. */
export const QDQ_TAG = { q: 'Q', dq: 'DQ', fq: 'FQ' } as const;
