// QCFG002: a key the schema does not define at that place, with a "did you mean" from the schema's property names.
import { isMap, type Document, type Node } from 'yaml';
import { objectBranch, schemaAt, type SchemaError } from '../../services/schema';
import { closest } from '../../util/levenshtein';
import type { Finding } from '../types';
import { pairOf, rangeOf, replaceFix } from './context';

export function unknownKey(doc: Document.Parsed, path: Array<string | number>, err: SchemaError): Finding | undefined {
  const key = String(err.params.additionalProperty);
  const node = doc.getIn(path, true) as Node | undefined;
  const at = isMap(node) ? rangeOf(pairOf(node, key)?.key) : undefined;
  if (!at) return undefined;
  const known = Object.keys(objectBranch(schemaAt(path))?.properties ?? {});
  const present = isMap(node)
    ? new Set(node.items.map((p) => String((p.key as { value?: unknown })?.value)))
    : new Set();
  const suggestion = closest(
    key,
    known.filter((k) => !present.has(k)),
  );
  const where = path.length ? ` in ${path.join('.')}` : '';
  return {
    code: 'QCFG002',
    severity: 'error',
    start: at[0],
    end: at[1],
    message: `Unknown key '${key}'${where}.${suggestion ? ` Did you mean '${suggestion}'?` : ` Known keys: ${known.join(', ')}.`}`,
    fixes: suggestion ? [replaceFix(`Rename to '${suggestion}'`, at, suggestion, true)] : undefined,
  };
}
