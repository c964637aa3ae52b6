// Document symbols (outline) for a QAT config: one symbol per key, overrides named by their match.
import { isMap, isScalar, isSeq, type Node, type Pair } from 'yaml';
import { SymbolKind, type DocumentSymbol } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { parsedConfig } from './configDiagnostics';

export function yamlSymbols(doc: TextDocument): DocumentSymbol[] {
  const range = (from: number, to: number) => ({
    start: doc.positionAt(from),
    end: doc.positionAt(Math.max(to, from)),
  });

  const children = (node: Node | null | undefined): DocumentSymbol[] => {
    if (isMap(node)) {
      return (node.items as Array<Pair<Node, Node>>).flatMap((pair) => {
        const k = pair.key?.range;
        if (!isScalar(pair.key) || !k) return [];
        const end = pair.value?.range?.[1] ?? k[1];
        return [symbol(String(pair.key.value), pair.value, range(k[0], end), range(k[0], k[1]))];
      });
    }
    if (isSeq(node)) {
      return node.items.flatMap((item, i) => {
        const r = (item as Node).range;
        if (!r) return [];
        const match = isMap(item) ? item.get('match') : undefined;
        const name = typeof match === 'string' ? match : `[${i}]`;
        return [symbol(name, item as Node, range(r[0], r[1]), range(r[0], r[1]))];
      });
    }
    return [];
  };

  const symbol = (
    name: string,
    value: Node | null | undefined,
    full: DocumentSymbol['range'],
    selection: DocumentSymbol['range'],
  ): DocumentSymbol => ({
    name: name || '""',
    detail: isScalar(value) ? String(value.value) : undefined,
    kind: isMap(value) ? SymbolKind.Object : isSeq(value) ? SymbolKind.Array : SymbolKind.Property,
    range: full,
    selectionRange: selection,
    children: isMap(value) || isSeq(value) ? children(value) : undefined,
  });

  return children(parsedConfig(doc.uri, doc.getText()).contents);
}
