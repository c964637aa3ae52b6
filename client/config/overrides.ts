// Text edits to a QAT config's `overrides` list that keep the user's formatting and comments.
import { isMap, isSeq, parseDocument, type YAMLSeq } from 'yaml';

export interface TextInsert {
  offset: number;
  text: string;
}

export type FloatPrecision = 'fp16' | 'bf16' | 'fp32';

/** One `overrides` entry: a module regex and what those layers get instead of the global qconfig. */
export interface OverrideEntry {
  match: string;
  precision?: FloatPrecision | 'int8';
  weight?: Record<string, string | number>;
  activation?: Record<string, string | number>;
  /** The torchao flow's recipe for the module (`8da8w`, `int8-weight-only`, ...), and its group size. */
  scheme?: string;
  group_size?: number | 'per_channel';
}

/** Module path as a regex that matches exactly that module (overrides use re.fullmatch). */
export const exactMatch = (module: string) => module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regex that matches exactly these modules (one alternative each), for one override over several layers. */
export const exactMatchAny = (modules: string[]) => modules.map(exactMatch).join('|');

const scalar = (v: string | number) => (typeof v === 'number' ? String(v) : /^[A-Za-z_][\w]*$/.test(v) ? v : quote(v));
const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
const flowMap = (m: Record<string, string | number>) =>
  `{${Object.entries(m)
    .map(([k, v]) => `${k}: ${scalar(v)}`)
    .join(', ')}}`;

/** The entry as one YAML flow mapping, e.g. `{match: 'conv1', weight: {qscheme: per_channel_symmetric}}`. */
export function overrideText(entry: OverrideEntry): string {
  const parts = [`match: ${quote(entry.match)}`];
  if (entry.precision) parts.push(`precision: ${entry.precision}`);
  if (entry.activation) parts.push(`activation: ${flowMap(entry.activation)}`);
  if (entry.weight) parts.push(`weight: ${flowMap(entry.weight)}`);
  if (entry.scheme) parts.push(`scheme: ${scalar(entry.scheme)}`);
  if (entry.group_size !== undefined) parts.push(`group_size: ${scalar(entry.group_size)}`);
  return `{${parts.join(', ')}}`;
}

/**
 * Inserts the entry as the FIRST override (the first match wins), into a block list, a flow list, or a new
 * `overrides:` key at the end of the file.
 */
export function addOverride(text: string, entry: OverrideEntry): TextInsert {
  const item = overrideText(entry);
  const doc = parseDocument(text);
  const node = doc.get('overrides', true);
  if (isSeq(node) && node.range) {
    const seq = node as YAMLSeq;
    if (seq.flow) {
      const open = text.indexOf('[', node.range[0]);
      return { offset: open + 1, text: seq.items.length ? `${item}, ` : item };
    }
    const first = seq.items[0] as { range?: [number, number, number] } | undefined;
    if (first?.range) {
      const lineStart = text.lastIndexOf('\n', first.range[0] - 1) + 1;
      const indent = /^[ \t]*/.exec(text.slice(lineStart))![0];
      return { offset: lineStart, text: `${indent}- ${item}\n` };
    }
  }
  if (node === undefined || node === null) {
    const prefix = text.length && !text.endsWith('\n') ? '\n' : '';
    return { offset: text.length, text: `${prefix}overrides:\n  - ${item}\n` };
  }
  throw new Error('`overrides` in this config is not a list; add the override by hand.');
}

/** Inserts `{match: '<module>', precision: <p>}` as the first override. */
export function addPrecisionOverride(text: string, module: string, precision: FloatPrecision | 'int8'): TextInsert {
  return addOverride(text, { match: exactMatch(module), precision });
}

/** The config text with `entries` put first under `overrides:`, the first listed ending up first. */
export function withEntries(text: string, entries: OverrideEntry[]): string {
  for (const entry of [...entries].reverse()) {
    const e = addOverride(text, entry);
    text = text.slice(0, e.offset) + e.text + text.slice(e.offset);
  }
  return text;
}

/** The config text with an FP16/FP32 override for each module, the first listed ending up first. */
export function withOverrides(text: string, modules: Array<{ match: string; precision: FloatPrecision }>): string {
  for (const m of [...modules].reverse()) {
    const e = addPrecisionOverride(text, m.match, m.precision);
    text = text.slice(0, e.offset) + e.text + text.slice(e.offset);
  }
  return text;
}

/**
 * The config text with the layers of `searched` set as `picked` says (the mixed-precision search's point): plain
 * precision overrides (`{match, precision}` and nothing else) that name exactly one of the searched modules are
 * removed first (an earlier pick), then an override per float layer of `picked` goes first, in the order given.
 * Every other override, comment and the formatting stay.
 */
export function withPickedPrecisions(
  text: string,
  searched: string[],
  picked: Array<{ module: string; precision: 'fp16' | 'bf16' | 'fp32' }>,
): string {
  const doc = parseDocument(text);
  const node = doc.get('overrides', true);
  if (node !== undefined && node !== null && !isSeq(node))
    throw new Error('`overrides` in this config is not a list; add the overrides by hand.');
  const owned = new Set(searched.map(exactMatch));
  const cuts: Array<[number, number]> = [];
  if (isSeq(node)) {
    const seq = node as YAMLSeq;
    seq.items.forEach((item, i) => {
      if (!isMap(item) || !item.range) return;
      const keys = item.items.map((p) => String((p.key as { value?: unknown })?.value ?? p.key));
      const match = item.get('match');
      if (keys.length !== 2 || !keys.includes('precision') || typeof match !== 'string' || !owned.has(match)) return;
      const [start, , end] = item.range;
      if (seq.flow) {
        // `a, ` or, for the last item, `, a`.
        const next = seq.items[i + 1] as { range?: [number, number, number] } | undefined;
        if (next?.range) cuts.push([start, next.range[0]]);
        else {
          const before = text.lastIndexOf(',', start);
          const prev = seq.items[i - 1] as { range?: [number, number, number] } | undefined;
          cuts.push([prev?.range && before > prev.range[1] - 1 ? before : start, end]);
        }
      } else {
        const lineStart = text.lastIndexOf('\n', start - 1) + 1;
        const lineEnd = text.indexOf('\n', end - 1);
        cuts.push([lineStart, lineEnd === -1 ? text.length : lineEnd + 1]);
      }
    });
  }
  for (const [a, b] of cuts.sort((x, y) => y[0] - x[0])) text = text.slice(0, a) + text.slice(b);
  // A block list left without items would read as `overrides:` (null): say it is empty.
  if (cuts.length && isSeq(node) && !(node as YAMLSeq).flow && cuts.length === (node as YAMLSeq).items.length)
    text = text.replace(/^(overrides:)[ \t]*(\r?\n)/m, '$1 []$2');
  return withOverrides(
    text,
    picked.map((p) => ({ match: p.module, precision: p.precision })),
  );
}
