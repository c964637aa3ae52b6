// Where the SVG view writes edge labels (tensor shapes, collapsed Q/DQ parameters): beside the edge, at the first
// of a few places along it that no node box, module-frame label or earlier label takes. Greedy, in edge order,
// with a grid of occupied cells so it stays linear in the number of labels.

export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

type Point = { x: number; y: number };

const CELL = 48;

/** Rectangles already taken, bucketed by grid cell. */
export class Occupancy {
  private readonly cells = new Map<number, Rect[]>();

  private *keys(r: Rect): Generator<number> {
    const cx0 = Math.floor(r.x0 / CELL),
      cx1 = Math.floor(r.x1 / CELL),
      cy0 = Math.floor(r.y0 / CELL),
      cy1 = Math.floor(r.y1 / CELL);
    for (let cx = cx0; cx <= cx1; cx++) for (let cy = cy0; cy <= cy1; cy++) yield cx * 1_000_003 + cy;
  }

  add(r: Rect): void {
    for (const k of this.keys(r)) (this.cells.get(k) ?? this.cells.set(k, []).get(k)!).push(r);
  }

  /** The right edge of the taken rectangles that overlap `r` (its own left edge when none does). */
  rightmostOver(r: Rect): number {
    let right = r.x0;
    for (const k of this.keys(r))
      for (const o of this.cells.get(k) ?? [])
        if (Math.min(r.x1, o.x1) > Math.max(r.x0, o.x0) && Math.min(r.y1, o.y1) > Math.max(r.y0, o.y0))
          right = Math.max(right, o.x1);
    return right;
  }

  /** The left edge of the taken rectangles that overlap `r` (its own right edge when none does). */
  leftmostUnder(r: Rect): number {
    let left = r.x1;
    for (const k of this.keys(r))
      for (const o of this.cells.get(k) ?? [])
        if (Math.min(r.x1, o.x1) > Math.max(r.x0, o.x0) && Math.min(r.y1, o.y1) > Math.max(r.y0, o.y0))
          left = Math.min(left, o.x0);
    return left;
  }

  /** Area of `r` that taken rectangles cover (overlaps counted once per rectangle). */
  overlap(r: Rect): number {
    let area = 0;
    const seen = new Set<Rect>();
    for (const k of this.keys(r))
      for (const o of this.cells.get(k) ?? []) {
        if (seen.has(o)) continue;
        seen.add(o);
        const w = Math.min(r.x1, o.x1) - Math.max(r.x0, o.x0);
        const h = Math.min(r.y1, o.y1) - Math.max(r.y0, o.y0);
        if (w > 0 && h > 0) area += w * h;
      }
    return area;
  }
}

/** The point a fraction `t` of the way along a polyline (by length). */
export function pointAlong(points: readonly Point[], t: number): Point {
  if (points.length < 2) return points[0] ?? { x: 0, y: 0 };
  const lengths = points.slice(1).map((p, i) => Math.hypot(p.x - points[i].x, p.y - points[i].y));
  let rest = lengths.reduce((a, b) => a + b, 0) * t;
  for (let i = 0; i < lengths.length; i++) {
    if (rest <= lengths[i] || i === lengths.length - 1) {
      const k = lengths[i] ? Math.min(1, rest / lengths[i]) : 0;
      return {
        x: points[i].x + (points[i + 1].x - points[i].x) * k,
        y: points[i].y + (points[i + 1].y - points[i].y) * k,
      };
    }
    rest -= lengths[i];
  }
  return points[points.length - 1];
}

/** Along the edge: the middle first, then further out. */
const ALONG = [0.5, 0.35, 0.65, 0.22, 0.78];
const GAP = 4;
/** Clear space kept around a label: drawn glyphs run a little past their measured advance. */
const MARGIN = 3;
/** How far past what is in the way a label may move from its edge, on either side. */
const MAX_AWAY = 240;

export interface LabelRequest {
  points: readonly Point[];
  width: number;
  height: number;
}

/**
 * A rectangle per request, beside its edge: on the side away from the edge's slant first (so the labels of two
 * edges meeting at a node fall apart), at the first place along it where nothing taken overlaps, moved sideways
 * past what is in the way (an edge drawn through a row of nodes) when beside it is taken; where every place
 * overlaps something, the one that overlaps least. `taken` (node boxes, frame labels) is added to.
 */
export function placeLabels(requests: readonly LabelRequest[], taken: Occupancy): Rect[] {
  const overlap = (r: Rect) => taken.overlap({ x0: r.x0 - MARGIN, y0: r.y0, x1: r.x1 + MARGIN, y1: r.y1 });
  return requests.map(({ points, width, height }) => {
    const first = points[0],
      last = points[points.length - 1];
    const leftFirst = !!first && !!last && first.x < last.x - 1;
    let best: Rect | undefined;
    let bestOverlap = Infinity;
    search: for (const pushed of [false, true])
      for (const t of ALONG)
        for (const left of leftFirst ? [true, false] : [false, true]) {
          const p = pointAlong(points, t);
          const x0 = left ? p.x - GAP - width : p.x + GAP;
          let r = { x0, y0: p.y - height / 2, x1: x0 + width, y1: p.y + height / 2 };
          // Second pass: past whatever is beside the edge, a few times over.
          for (let k = 0; pushed && k < 4 && overlap(r) > 0; k++) {
            const wall = left ? taken.leftmostUnder(r) - GAP - MARGIN : taken.rightmostOver(r) + GAP + MARGIN;
            r = left ? { ...r, x0: wall - width, x1: wall } : { ...r, x0: wall, x1: wall + width };
          }
          if (Math.abs((left ? r.x1 : r.x0) - p.x) > MAX_AWAY) continue;
          const o = overlap(r);
          if (o < bestOverlap) {
            best = r;
            bestOverlap = o;
            if (o === 0) break search;
          }
        }
    best ??= {
      x0: (first?.x ?? 0) + GAP,
      y0: (first?.y ?? 0) - height / 2,
      x1: (first?.x ?? 0) + GAP + width,
      y1: (first?.y ?? 0) + height / 2,
    };
    taken.add(best);
    return best;
  });
}
