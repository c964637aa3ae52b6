// Find Where INT8 Diverges on the SVG view: a node's stage lane (one badge per stage along its bottom edge, each
// with its figures as a tooltip) and the mark of a node where a bisected pair first diverges. The canvas draws the
// same from the scene (view/sceneDraw.ts); what each badge is comes from graph/stageLanes.ts.
import type { GraphNode } from '../importers/types';
import { LANE, LEVEL_LOOK, badgeTitle, laneOrigin, pairLabel, type StageLanes } from '../graph/stageLanes';

const SVG = 'http://www.w3.org/2000/svg';
const el = <K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};
const titled = <E extends SVGElement>(e: E, text: string): E => {
  const title = el('title');
  title.textContent = text;
  e.append(title);
  return e;
};

/** Adds the node's lane and divergence mark to its group `g` (placed at the node's top-left corner). */
export function drawStage(g: SVGGElement, node: GraphNode, box: { width: number; height: number }, lanes: StageLanes) {
  const { results } = lanes;
  const lane = lanes.laneOf(node);
  if (lane) {
    const layer = results.layers[lane.layer];
    g.setAttribute('data-stage-layer', layer.module);
    const row = el('g', { class: 'stage-lane', 'data-output': String(lane.output) });
    const o = laneOrigin(box.width / 2, box.height, lane.levels.length);
    lane.levels.forEach((level, k) => {
      const x = o.x + k * (LANE.width + LANE.gap);
      const badge = el('g', { class: `stage-badge ${level}`, 'data-stage': results.stages[k].id, 'data-level': level });
      const rect = el('rect', { x, y: o.y, width: LANE.width, height: LANE.height });
      rect.style.fill = level === 'fused' ? 'var(--vscode-editor-background, #fff)' : LEVEL_LOOK[level].colour;
      badge.append(rect);
      if (level === 'fused') badge.append(el('line', { x1: x, y1: o.y + LANE.height, x2: x + LANE.width, y2: o.y }));
      row.append(titled(badge, badgeTitle(results, layer, k, level)));
    });
    g.append(row);
  }
  const first = lanes.firstAt(node);
  if (first?.length) {
    g.classList.add('first-divergence');
    g.setAttribute('data-divergence', first.join(' '));
    const mark = el('circle', { class: 'divergence-mark', cx: 0, cy: 0, r: 6 });
    g.append(titled(mark, first.map((k) => `${pairLabel(results, k)} first diverges here`).join('\n')));
  }
}
