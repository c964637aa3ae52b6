// Axes for the small charts (histograms and observer drift in the properties panel, the search and sensitivity
// pages): round tick values, their labels, and the drift chart's value range. Free of the DOM.

/** About `count` round values (1, 2 or 5 times a power of ten apart, the step nearest the even split, as d3's
 * ticks) from `min` to `max`, and the step between them. */
export function niceTicks(min: number, max: number, count = 4): { ticks: number[]; step: number } {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { ticks: [], step: 0 };
  if (max < min) [min, max] = [max, min];
  if (max === min) return { ticks: [min], step: 0 };
  const raw = (max - min) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const err = raw / power;
  const step = power * (err >= Math.sqrt(50) ? 10 : err >= Math.sqrt(10) ? 5 : err >= Math.SQRT2 ? 2 : 1);
  const ticks: number[] = [];
  const eps = step * 1e-9;
  for (let v = Math.ceil((min - eps) / step) * step; v <= max + eps; v += step) ticks.push(clean(v, step));
  return { ticks, step };
}

/** `v` without the float noise of adding steps (0.30000000000000004 -> 0.3). */
function clean(v: number, step: number): number {
  const digits = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  return Number(v.toFixed(Math.min(20, digits)));
}

/** A tick's label: as many decimals as the step needs; thousands as k, very small or large values in e-notation. */
export function tickLabel(v: number, step: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || (a < 1e-3 && step < 1e-3)) return v.toExponential(Math.max(0, significant(step, a) - 1));
  if (a >= 1000 && step >= 100) return `${Number((v / 1000).toFixed(step >= 1000 ? 0 : 1))}k`;
  const decimals = step > 0 ? Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) : 3;
  return v.toFixed(Math.min(decimals, 8));
}

/** Significant digits that tell ticks `step` apart around magnitude `a`. */
function significant(step: number, a: number): number {
  return Math.max(1, Math.min(6, Math.floor(Math.log10(a)) - Math.floor(Math.log10(step)) + 1));
}

/** Smallest span of the drift chart's value axis, relative to the first value: a change of a few percent then
 * reads as a few percent of the height, not as the full height. */
export const MIN_RELATIVE_SPAN = 0.1;

/**
 * The drift chart's value range: every value and the first one (the zero-change baseline), widened around their
 * middle to at least MIN_RELATIVE_SPAN of the first value's magnitude, with a little room above and below.
 */
export function driftDomain(values: number[], first: number): [number, number] {
  let lo = Math.min(first, ...values);
  let hi = Math.max(first, ...values);
  const least = Math.abs(first) * MIN_RELATIVE_SPAN || Math.max(Math.abs(hi), Math.abs(lo)) * MIN_RELATIVE_SPAN || 1;
  if (hi - lo < least) {
    const mid = (hi + lo) / 2;
    lo = mid - least / 2;
    hi = mid + least / 2;
  }
  const pad = (hi - lo) * 0.05;
  return [lo - pad, hi + pad];
}
