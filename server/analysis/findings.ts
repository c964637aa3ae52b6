// Findings of one unit (a top-level def or class) are kept between edits and moved with the unit. Their
// offsets are stored relative to the unit's start, and a line number in a message is a marker naming the
// unit it points into, so it is written out against wherever that unit is now.
import type { Edit, Finding } from '../rules/types';

/** A place in another (or this) unit: the unit's id and the offset from its start. */
export interface Anchored {
  anchor: string;
  rel: number;
}

// eslint-disable-next-line no-control-regex -- the markers are control characters no source text contains
const MARK = /\u0001([^\u0002\u0003]*)\u0003(-?\d+)\u0002/g;

/** A "line N" reference inside a message; resolved by resolveLines. */
export const lineMark = (a: Anchored) => `\u0001${a.anchor}\u0003${a.rel}\u0002`;

/** Edits marked absolute are not moved with the unit (they point into the module's imports). */
export type StoredEdit = Edit & { absolute?: boolean };

export interface StoredFinding extends Finding {
  fixes?: Array<{ title: string; edits: StoredEdit[]; preferred?: boolean }>;
}

/** Offsets relative to `base` (for storing). */
export function toRelative(findings: StoredFinding[], base: number): StoredFinding[] {
  return base === 0 ? findings : findings.map((f) => shift(f, -base));
}

/** Offsets moved by `delta`; edits marked absolute stay. */
export function shift(f: StoredFinding, delta: number): StoredFinding {
  return delta === 0 ? f : remap(f, (o) => o + delta, false);
}

/** Every offset through `map` (markers anchored at the module too, when `markers`). */
export function remap(f: StoredFinding, map: (offset: number) => number, markers: boolean): StoredFinding {
  const text = (m: string) =>
    markers && m.includes('\u0001')
      ? m.replace(MARK, (all, anchor: string, rel: string) =>
          anchor === 'module' ? lineMark({ anchor, rel: map(Number(rel)) }) : all,
        )
      : m;
  return {
    ...f,
    start: map(f.start),
    end: map(f.end),
    message: text(f.message),
    fixes: f.fixes?.map((fix) => ({
      ...fix,
      title: text(fix.title),
      edits: fix.edits.map((e) => (e.absolute ? e : { ...e, start: map(e.start), end: map(e.end) })),
    })),
  };
}

// Module-level code is many statements between the defs: its offsets are stored as (statement, offset in it),
// so the findings follow each statement wherever it moved.
const SEG = 2 ** 26;

export function segmentEncoder(starts: number[]): (offset: number) => number {
  return (o) => {
    if (!starts.length) return o;
    let [lo, hi] = [0, starts.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= o) lo = mid;
      else hi = mid - 1;
    }
    return lo * SEG + (o - starts[lo]); // negative before the first statement
  };
}

export function segmentDecoder(starts: number[]): (encoded: number) => number {
  return (e) => {
    if (!starts.length) return e;
    const k = Math.min(starts.length - 1, Math.max(0, Math.floor(e / SEG)));
    return starts[k] + (e - k * SEG);
  };
}

/** Line numbers for the markers, from where each unit starts now (and the text's line index). */
export function resolveLines(
  message: string,
  unitStart: (anchor: string) => number | undefined,
  line: (offset: number) => number,
): string {
  return message.replace(MARK, (_, anchor: string, rel: string) => {
    const start = unitStart(anchor);
    return start === undefined ? '?' : String(line(start + Number(rel)));
  });
}

export function finalize(
  f: StoredFinding,
  unitStart: (anchor: string) => number | undefined,
  line: (offset: number) => number,
): Finding {
  const message = f.message.includes('\u0001') ? resolveLines(f.message, unitStart, line) : f.message;
  const fixes = f.fixes?.map((fix) => ({
    ...fix,
    title: fix.title.includes('\u0001') ? resolveLines(fix.title, unitStart, line) : fix.title,
    edits: fix.edits.map(({ start, end, newText }) => ({ start, end, newText })),
  }));
  return {
    code: f.code,
    severity: f.severity,
    start: f.start,
    end: f.end,
    message,
    ...(fixes ? { fixes } : {}),
    ...(f.detail ? { detail: f.detail } : {}),
  };
}
