// A parsed QAT config as the YAML rules see it: the yaml Document plus helpers to walk observer specs.
import { isMap, isScalar, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import type { Edit, Fix } from '../types';
import type { ModelKnowledge } from '../../services/modelIndex';
import { MAX_OVERRIDES } from '../../util/budget';

export interface ObserverSpec {
  /** Dotted path, e.g. qconfig.activation or overrides.1.weight. */
  path: string;
  role: 'activation' | 'weight';
  map: YAMLMap;
  /** The `activation:` / `weight:` key, where spec-wide findings point. */
  key: Node;
}

export interface YamlRuleContext {
  text: string;
  doc: Document.Parsed;
  observers: ObserverSpec[];
  /** Top-level flow and backend, with the schema defaults filled in. */
  flow: string;
  backend: string;
  /** The model's module paths, when the kernel has exported its graph (graph/export). */
  model?: ModelKnowledge;
  /** The config's file and the workspace folders, when the server knows them. */
  workspace?: { configFile: string; folders: readonly string[] };
}

export function pairOf(map: YAMLMap, key: string): Pair<Node, Node> | undefined {
  return map.items.find((p) => isScalar(p.key) && p.key.value === key) as Pair<Node, Node> | undefined;
}

export function scalarValue(map: YAMLMap, key: string): unknown {
  const value = pairOf(map, key)?.value;
  return isScalar(value) ? value.value : undefined;
}

export const stringValue = (map: YAMLMap, key: string): string | undefined => {
  const v = scalarValue(map, key);
  return typeof v === 'string' ? v : undefined;
};

/** Every observer spec in the file: the global qconfig and each override's activation/weight. */
export function collectObservers(doc: Document.Parsed): ObserverSpec[] {
  const out: ObserverSpec[] = [];
  const root = doc.contents;
  if (!isMap(root)) return out;
  const add = (map: unknown, path: string) => {
    for (const role of ['activation', 'weight'] as const) {
      const pair = isMap(map) ? pairOf(map, role) : undefined;
      if (pair && isMap(pair.value))
        out.push({ path: `${path}${path ? '.' : ''}${role}`, role, map: pair.value, key: pair.key });
    }
  };
  add(pairOf(root, 'qconfig')?.value, 'qconfig');
  const overrides = pairOf(root, 'overrides')?.value;
  if (isSeq(overrides)) overrides.items.forEach((item, i) => add(item, `overrides.${i}`));
  return out;
}

export function makeContext(
  text: string,
  doc: Document.Parsed,
  model?: ModelKnowledge,
  workspace?: YamlRuleContext['workspace'],
): YamlRuleContext {
  const root = isMap(doc.contents) ? doc.contents : undefined;
  return {
    text,
    doc,
    observers: collectObservers(doc),
    model,
    workspace,
    flow: (root && stringValue(root, 'flow')) || 'pt2e',
    backend: (root && stringValue(root, 'backend')) || 'x86',
  };
}

export function rangeOf(node: Node | null | undefined): [number, number] | undefined {
  return node?.range ? [node.range[0], node.range[1]] : undefined;
}

/** Where a key's value sits, for findings; falls back to the key. */
export function valueRange(map: YAMLMap, key: string): [number, number] | undefined {
  const pair = pairOf(map, key);
  return rangeOf(pair?.value) ?? rangeOf(pair?.key);
}

export const replaceFix = (title: string, at: [number, number], newText: string, preferred = false): Fix => ({
  title,
  edits: [{ start: at[0], end: at[1], newText }],
  preferred,
});

/**
 * Edits that delete `key: value` entries from a map: whole lines in block style; in flow style each run of
 * removed entries together with the comma that joined it to the entries kept.
 */
export function removePairsEdits(text: string, map: YAMLMap, keys: string[]): Edit[] {
  const items = map.items as Array<Pair<Node, Node>>;
  const span = (p: Pair<Node, Node>) => [rangeOf(p.key)?.[0], rangeOf(p.value)?.[1] ?? rangeOf(p.key)?.[1]];
  const gone = items.map((p) => isScalar(p.key) && keys.includes(String(p.key.value)));
  const edits: Edit[] = [];
  for (let i = 0; i < items.length; i++) {
    if (!gone[i]) continue;
    if (!map.flow) {
      const [start, end] = span(items[i]);
      if (start === undefined || end === undefined) continue;
      const lineStart = text.lastIndexOf('\n', start - 1) + 1;
      const lineEnd = text.indexOf('\n', end);
      if (text.slice(lineStart, start).trim() !== '') edits.push({ start, end, newText: '' });
      else edits.push({ start: lineStart, end: lineEnd < 0 ? text.length : lineEnd + 1, newText: '' });
      continue;
    }
    let j = i;
    while (j + 1 < items.length && gone[j + 1]) j++;
    const first = span(items[i])[0];
    const last = span(items[j])[1];
    const keptBefore = i > 0 ? span(items[i - 1])[1] : undefined;
    const keptAfter = j + 1 < items.length ? span(items[j + 1])[0] : undefined;
    if (first !== undefined && last !== undefined) {
      if (keptBefore !== undefined) edits.push({ start: keptBefore, end: last, newText: '' });
      else edits.push({ start: first, end: keptAfter ?? last, newText: '' });
    }
    i = j;
  }
  return edits;
}

export const removePairEdit = (text: string, map: YAMLMap, key: string): Edit | undefined =>
  removePairsEdits(text, map, [key])[0];

/** An edit that adds `key: value` to a map, matching its style. */
export function addPairEdit(text: string, map: YAMLMap, key: string, value: string): Edit | undefined {
  const last = map.items[map.items.length - 1] as Pair<Node, Node> | undefined;
  const end = rangeOf(last?.value)?.[1] ?? rangeOf(last?.key)?.[1];
  const keyStart = rangeOf(last?.key)?.[0];
  if (end === undefined || keyStart === undefined) return undefined;
  if (map.flow) return { start: end, end, newText: `, ${key}: ${value}` };
  const lineStart = text.lastIndexOf('\n', keyStart - 1) + 1;
  const indent = text.slice(lineStart, keyStart);
  if (indent.trim() !== '') return undefined;
  const lineEnd = text.indexOf('\n', end);
  const at = lineEnd < 0 ? text.length : lineEnd;
  return { start: at, end: at, newText: `\n${indent}${key}: ${value}` };
}

export interface OverrideMatch {
  index: number;
  pattern: string;
  /** The match value's range. */
  at: [number, number];
  item: YAMLMap;
}

/** Every override with a string `match`, in order. */
export function overrideMatches(ctx: YamlRuleContext): OverrideMatch[] {
  const root = ctx.doc.contents;
  const overrides = isMap(root) ? pairOf(root, 'overrides')?.value : undefined;
  if (!isSeq(overrides)) return [];
  const out: OverrideMatch[] = [];
  // The override rules compare overrides pairwise: past MAX_OVERRIDES they stop (configFindings says where).
  overrides.items.slice(0, MAX_OVERRIDES).forEach((item, index) => {
    if (!isMap(item)) return;
    const pattern = stringValue(item, 'match');
    const at = valueRange(item, 'match');
    if (pattern !== undefined && at) out.push({ index, pattern, at, item });
  });
  return out;
}
