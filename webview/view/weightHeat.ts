// A torchao layer's group-wise weight error (compare/layers' weightError) as an inline SVG heat map: one cell per
// block of quantization groups (rows down, groups across), coloured from the lowest SQNR on the map (red) to the
// highest (green); a group stored exactly is green. Each cell's tooltip names its rows, groups and SQNR.
import type { GroupWeightError } from '../../protocol/kernel';

const NS = 'http://www.w3.org/2000/svg';
const WIDTH = 240;
const MAX_HEIGHT = 160;

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** Red (hue 0) at `lo` dB to green (hue 120) at `hi`; null (exact) is green. */
export function cellColour(db: number | null, lo: number, hi: number): string {
  if (db === null) return 'hsl(120, 55%, 45%)';
  const t = hi > lo ? Math.min(1, Math.max(0, (db - lo) / (hi - lo))) : 1;
  return `hsl(${Math.round(120 * t)}, 65%, 45%)`;
}

const span = (from: number, per: number, count: number) =>
  per === 1 ? `${from}` : `${from}–${Math.min(from + per, count) - 1}`;

export function weightHeatSvg(w: GroupWeightError): SVGSVGElement {
  const map = w.heat.sqnr;
  const rows = map.length;
  const cols = rows ? map[0].length : 0;
  const values = map.flat().filter((v): v is number => v !== null);
  const lo = values.length ? Math.min(...values) : 0;
  const hi = values.length ? Math.max(...values) : 0;
  const cw = WIDTH / Math.max(cols, 1);
  const ch = Math.min(cw, MAX_HEIGHT / Math.max(rows, 1));
  const svg = el('svg', { viewBox: `0 0 ${WIDTH} ${Math.max(ch * rows, 1)}`, class: 'weight-heat', role: 'img' });
  svg.setAttribute(
    'aria-label',
    `group SQNR of ${w.rows} rows x ${w.groups} groups of ${w.groupSize}: ${lo.toFixed(1)} to ${hi.toFixed(1)} dB`,
  );
  map.forEach((line, r) =>
    line.forEach((db, c) => {
      const cell = el('rect', {
        x: c * cw,
        y: r * ch,
        width: cw,
        height: ch,
        fill: cellColour(db, lo, hi),
        'data-sqnr': db === null ? 'exact' : db,
      });
      const tip = el('title', {});
      const rowsText = span(r * w.heat.rowsPerCell, w.heat.rowsPerCell, w.rows);
      const groupsText = span(c * w.heat.groupsPerCell, w.heat.groupsPerCell, w.groups);
      tip.textContent = `rows ${rowsText}, groups ${groupsText}: ${db === null ? 'exact' : `${db.toFixed(1)} dB (lowest)`}`;
      cell.append(tip);
      svg.append(cell);
    }),
  );
  return svg;
}
