// A histogram as an inline SVG (no canvas: it scales with the panel and exports with it): bars over a value axis
// (round ticks from the lowest to the highest value) and a count axis (0 to the tallest bar), both labelled.
import { niceTicks, tickLabel } from '../../common/axes';

const NS = 'http://www.w3.org/2000/svg';
const W = 240;
const H = 60;
/** The bars' box inside the view box: room on the left for the counts, below for the values. */
export const PLOT = { left: 26, right: W - 4, top: 4, bottom: H - 12 };

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toPrecision(6));

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** `bins` counts over equal widths from `min` to `max`. */
export function histogramSvg(bins: number[], min: number, max: number): SVGSVGElement {
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, class: 'histogram', role: 'img' });
  const total = bins.reduce((a, b) => a + b, 0);
  svg.setAttribute('aria-label', `histogram of ${total} values from ${fmt(min)} to ${fmt(max)}`);
  const top = Math.max(...bins, 1);
  const { left, right, top: y0, bottom } = PLOT;
  const bw = (right - left) / bins.length;
  bins.forEach((count, i) => {
    const bh = (count / top) * (bottom - y0);
    svg.append(
      el('rect', {
        x: left + i * bw + 0.5,
        y: bottom - bh,
        width: Math.max(bw - 1, 0.5),
        height: bh,
        'data-count': count,
      }),
    );
  });
  // Axes in the panel's text colour, drawn with presentation attributes (the webview allows no inline styles).
  const axis = el('g', { class: 'axis', fill: 'currentColor', stroke: 'currentColor', 'font-size': 8 });
  axis.append(
    el('line', { x1: left, x2: right, y1: bottom, y2: bottom, 'stroke-opacity': 0.5 }),
    el('line', { x1: left, x2: left, y1: y0, y2: bottom, 'stroke-opacity': 0.5 }),
  );
  const x = (v: number) => (max > min ? left + ((v - min) / (max - min)) * (right - left) : (left + right) / 2);
  const values = niceTicks(min, max, 4);
  for (const v of values.ticks) {
    axis.append(el('line', { class: 'tick', x1: x(v), x2: x(v), y1: bottom, y2: bottom + 3, 'stroke-opacity': 0.5 }));
    // The end labels stay inside the chart.
    const anchor = x(v) > right - 10 ? 'end' : x(v) < left + 6 ? 'start' : 'middle';
    const t = el('text', { class: 'x-tick', x: x(v), y: H - 1, 'text-anchor': anchor, stroke: 'none' });
    t.textContent = tickLabel(v, values.step);
    axis.append(t);
  }
  const counts = niceTicks(0, top, 2);
  for (const c of counts.ticks.filter(Number.isInteger)) {
    const y = bottom - (c / top) * (bottom - y0);
    axis.append(el('line', { class: 'tick', x1: left - 3, x2: left, y1: y, y2: y, 'stroke-opacity': 0.5 }));
    const t = el('text', { class: 'y-tick', x: left - 4, y: y + 3, 'text-anchor': 'end', stroke: 'none' });
    t.textContent = tickLabel(c, Math.max(1, counts.step));
    axis.append(t);
  }
  svg.append(axis);
  return svg;
}
