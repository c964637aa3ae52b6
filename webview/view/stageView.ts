// The page around a graph that shows Find Where INT8 Diverges: the legend of the stage lanes (which badge is which
// stage, what each colour and mark means) and the summary line.
import type { StageResults } from '../../protocol/webview';
import { LEVEL_LOOK, LEVELS, divergences, pairLabel } from '../graph/stageLanes';

const make = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};

/** The legend: the lane's stages left to right, each level's swatch, the divergence mark. */
export function stageLegend(host: HTMLElement, results: StageResults): void {
  const order = make('span', { class: 'lane-order' }, `Lane: ${results.stages.map((s) => s.label).join(' · ')}`);
  order.title = 'One badge per stage under each node of a quantized layer, left to right';
  const items = LEVELS.map((level) => {
    const span = make('span', { 'data-level': level, title: LEVEL_LOOK[level].text });
    const sw = make('span', { class: `swatch${level === 'fused' ? ' fused' : ''}` });
    if (level !== 'fused') sw.style.background = LEVEL_LOOK[level].colour;
    span.append(sw, LEVEL_LOOK[level].short);
    return span;
  });
  const mark = make('span', { 'data-level': 'first', title: 'where a pair of stages that should agree first parts' });
  const dot = make('span', { class: 'swatch first' });
  mark.append(dot, 'first divergence');
  host.replaceChildren(order, ...items, mark);
}

/** The summary line: the graph's size and where the stages first part. */
export function stageSummary(results: StageResults, total: number, groups: number, qdq: number): string {
  const found = divergences(results);
  const first = found.length ? found.reduce((a, b) => (b.index < a.index ? b : a)) : undefined;
  return (
    `${total} nodes${groups ? ` in ${groups} collapsed groups (click one to open)` : ''} · ${qdq} Q/DQ shown · ` +
    `${results.layers.length} quantized layers across ${results.stages.length} stages · ` +
    (first
      ? `first divergence ${first.module} (${pairLabel(results, first.pair)})`
      : 'every pair that should agree does, to rounding')
  );
}
