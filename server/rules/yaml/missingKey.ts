// QCFG003: a required key is missing; the finding sits on the key that owns the incomplete map.
import { isMap, isScalar, type Document, type Node, type Pair } from 'yaml';
import { schemaAt, placeholderFor, type SchemaError } from '../../services/schema';
import type { Finding } from '../types';
import { addPairEdit, rangeOf } from './context';

/** The key (or list item) whose value is the map at `path`; the first top-level key for the root. */
function ownerRange(doc: Document.Parsed, path: Array<string | number>): [number, number] | undefined {
  if (path.length === 0) {
    const first = isMap(doc.contents) ? (doc.contents.items[0] as Pair<Node, Node> | undefined) : undefined;
    return rangeOf(first?.key) ?? [0, 0];
  }
  const parent = doc.getIn(path.slice(0, -1), true) as Node | undefined;
  const last = path[path.length - 1];
  if (isMap(parent)) {
    const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last) as Pair<Node, Node> | undefined;
    return rangeOf(pair?.key);
  }
  const node = doc.getIn(path, true) as Node | undefined;
  return node?.range ? [node.range[0], node.range[0] + 1] : undefined;
}

export function missingKey(
  doc: Document.Parsed,
  text: string,
  path: Array<string | number>,
  err: SchemaError,
): Finding | undefined {
  const key = String(err.params.missingProperty);
  const at = ownerRange(doc, path);
  if (!at) return undefined;
  const map = doc.getIn(path, true) as Node | undefined;
  const add =
    isMap(map) && map.items.length ? addPairEdit(text, map, key, placeholderFor(schemaAt([...path, key]))) : undefined;
  const where = path.length ? path.join('.') : 'the config';
  return {
    code: 'QCFG003',
    severity: 'error',
    start: at[0],
    end: Math.max(at[1], at[0] + 1),
    message: `${where} is missing the required key '${key}'.`,
    fixes: add ? [{ title: `Add '${key}'`, edits: [add], preferred: true }] : undefined,
  };
}
