// How a node looks wherever it is drawn (SVG, canvas, the layout worker's scene, the minimap): its fill and the
// tag a Q/DQ box carries. Theme variables only, so this runs in the worker too.
import type { LayerResult } from '../../protocol/kernel';
import { isQdq, type GraphNode } from '../importers/types';
import { bandOf } from '../../common/bands';
import { middleEllipsis } from './metrics';
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

/** About how wide a character of 11px text is (the layout sizes boxes at 7px a character, with margins). */
export const CHAR_PX = 6.2;

/**
 * A node's second line, fitted to its box: a collapsed group's lowest cosine (the worst layer inside); a compared
 * layer's module and cosine, or only the cosine where both do not fit (the frame around the node and the tooltip
 * name the module; a name cut short misleads where module paths differ only at the end); else the module, cut in
 * the middle if it must be.
 */
export function subLabel(n: GraphNode, layer: LayerResult | undefined, width: number): string | undefined {
  const room = Math.floor((width - 6) / CHAR_PX);
  if (n.kind === 'group') return layer ? `lowest cos ${layer.cosine.toFixed(4)}` : undefined;
  if (!n.module) return undefined;
  if (!layer) return middleEllipsis(n.module, Math.max(room, 8));
  const cos = layer.cosine.toFixed(4);
  const badge = schemeBadge(layer.scheme);
  const texts = [`${n.module}  cos ${cos}`, `${n.module} ${cos}`];
  if (badge) texts.unshift(`${n.module}  ${badge}  cos ${cos}`, `${badge}  cos ${cos}`);
  return texts.find((t) => t.length <= room) ?? `cos ${cos}`;
}

/** A torchao layer's recipe, short: `8da4w (group 32)` -> `8da4w g32`, `int8-weight-only (per channel)` ->
 * `int8-weight-only pc`. */
export function schemeBadge(scheme: string | undefined): string | undefined {
  if (!scheme) return undefined;
  const m = /^(\S+) \((?:group (\d+)|(per channel))/.exec(scheme);
  if (!m) return scheme;
  return `${m[1]} ${m[2] ? `g${m[2]}` : 'pc'}`;
}
