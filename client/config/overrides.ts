// Text edits to a QAT config's `overrides` list that keep the user's formatting and comments.
import { isSeq, parseDocument, type YAMLSeq } from 'yaml';

export interface TextInsert {
  offset: number;
  text: string;
}

/** Module path as a regex that matches exactly that module (overrides use re.fullmatch). */
export const exactMatch = (module: string) => module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Inserts `{match: '<module>', precision: <p>}` as the FIRST override (the first match wins), into a block
 * list, a flow list, or a new `overrides:` key at the end of the file.
 */
export function addPrecisionOverride(
  text: string,
  module: string,
  precision: 'fp16' | 'bf16' | 'fp32' | 'int8',
): TextInsert {
  const item = `{match: '${exactMatch(module).replace(/'/g, "''")}', precision: ${precision}}`;
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

/** The config text with an FP16/FP32 override for each module, the first listed ending up first. */
export function withOverrides(
  text: string,
  modules: Array<{ match: string; precision: 'fp16' | 'bf16' | 'fp32' }>,
): string {
  for (const m of [...modules].reverse()) {
    const e = addPrecisionOverride(text, m.match, m.precision);
    text = text.slice(0, e.offset) + e.text + text.slice(e.offset);
  }
  return text;
}
