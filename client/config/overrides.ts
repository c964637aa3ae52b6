// Text edits to a QAT config's `overrides` list that keep the user's formatting and comments.
import { isSeq, parseDocument, type YAMLSeq } from 'yaml';

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

/** The config text with an FP16/FP32 override for each module, the first listed ending up first. */
export function withOverrides(text: string, modules: Array<{ match: string; precision: FloatPrecision }>): string {
  for (const m of [...modules].reverse()) {
    const e = addPrecisionOverride(text, m.match, m.precision);
    text = text.slice(0, e.offset) + e.text + text.slice(e.offset);
  }
  return text;
}
