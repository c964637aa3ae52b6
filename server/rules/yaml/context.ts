// A parsed QAT config as the YAML rules see it: the yaml Document plus helpers to walk observer specs.
import { isMap, isScalar, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';

export interface ObserverSpec {
  /** Dotted path, e.g. qconfig.activation or overrides.1.weight. */
  path: string;
  map: YAMLMap;
}

export interface YamlRuleContext {
  doc: Document.Parsed;
  observers: ObserverSpec[];
}

export function pairOf(map: YAMLMap, key: string): Pair<Node, Node> | undefined {
  return map.items.find((p) => isScalar(p.key) && p.key.value === key) as Pair<Node, Node> | undefined;
}

export function scalarValue(map: YAMLMap, key: string): unknown {
  const value = pairOf(map, key)?.value;
  return isScalar(value) ? value.value : undefined;
}

/** Every observer spec in the file: the global qconfig and each override's activation/weight. */
export function collectObservers(doc: Document.Parsed): ObserverSpec[] {
  const out: ObserverSpec[] = [];
  const root = doc.contents;
  if (!isMap(root)) return out;
  const add = (map: unknown, path: string) => {
    for (const role of ['activation', 'weight']) {
      const spec = isMap(map) ? pairOf(map, role)?.value : undefined;
      if (isMap(spec)) out.push({ path: `${path}${path ? '.' : ''}${role}`, map: spec });
    }
  };
  add(pairOf(root, 'qconfig')?.value, 'qconfig');
  const overrides = pairOf(root, 'overrides')?.value;
  if (isSeq(overrides)) overrides.items.forEach((item, i) => add(item, `overrides.${i}`));
  return out;
}

export function rangeOf(node: Node | null | undefined): [number, number] | undefined {
  return node?.range ? [node.range[0], node.range[1]] : undefined;
}
