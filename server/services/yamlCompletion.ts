// Completion in a QAT config: the keys the schema allows at the cursor, and enum values
// (observers for the file's flow, dtypes, qschemes, backends, precision, flow, ...).
import {
  CompletionItemKind,
  InsertTextFormat,
  type CompletionItem,
  type CompletionList,
  type Position,
} from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { VALUE_DOCS } from '../knowledge/docs';
import { observersFor } from '../rules/yaml/observerFlow';
import { objectBranch, schemaAt, type SchemaNode } from './schema';
import type { ModelKnowledge } from './modelIndex';
import { yamlCursor } from './yamlCursor';

export function yamlCompletion(doc: TextDocument, position: Position, model?: ModelKnowledge): CompletionList {
  const text = doc.getText();
  const offset = doc.offsetAt(position);
  const cursor = yamlCursor(text, offset);
  const range = { start: doc.positionAt(cursor.prefixStart), end: position };
  let items: CompletionItem[];
  if (cursor.kind === 'value' && cursor.key === '*' && objectBranch(schemaAt([...cursor.path, '*']))?.properties) {
    items = keyItems([...cursor.path, '*']); // a `- ` item of a list of maps
  } else if (cursor.kind === 'value' && cursor.key === 'match' && cursor.path[0] === 'overrides') {
    const quote = /^["']/.exec(cursor.prefix)?.[0] ?? '';
    if (!model) items = [];
    else {
      // A model can have a million modules: the ones matching what is typed, at most MAX_MODULE_ITEMS; the
      // editor asks again as the user types on (isIncomplete).
      const { modules, cut } = modulesFor(model, cursor.prefix.slice(quote.length));
      items = moduleItems(model, modules, quote);
      for (const item of items) item.textEdit = { range, newText: item.insertText ?? item.label };
      return { isIncomplete: cut, items };
    }
  } else if (cursor.kind === 'value') {
    const path = [...cursor.path, cursor.key!];
    items = valueItems(schemaAt(path), cursor.key === 'observer' ? flowOf(text) : undefined);
  } else {
    items = keyItems(cursor.path);
  }
  for (const item of items) item.textEdit = { range, newText: item.insertText ?? item.label };
  return { isIncomplete: false, items };
}

export const MAX_MODULE_ITEMS = 1000;

/** All the modules; of a model with more than MAX_MODULE_ITEMS, those whose path holds what is typed (dots
 * typed escaped or not), in the graph's order, at most MAX_MODULE_ITEMS of them. */
function modulesFor(model: ModelKnowledge, typed: string): { modules: ModelKnowledge['modules']; cut: boolean } {
  if (model.modules.length <= MAX_MODULE_ITEMS) return { modules: model.modules, cut: false };
  const want = typed.replace(/\\+\./g, '.').toLowerCase();
  const modules: ModelKnowledge['modules'] = [];
  for (const m of model.modules) {
    if (want && !m.path.toLowerCase().includes(want)) continue;
    if (modules.length === MAX_MODULE_ITEMS) return { modules, cut: true };
    modules.push(m);
  }
  return { modules, cut: false };
}

/** Module paths of the last exported graph, parents before children (a parent's match covers its children). */
function moduleItems(model: ModelKnowledge, modules: ModelKnowledge['modules'], quote: string): CompletionItem[] {
  return modules.map((m, i) => ({
    label: m.path,
    kind: CompletionItemKind.Module,
    detail: m.type,
    documentation: {
      kind: 'markdown',
      value: `\`${m.path}\` (${m.type})${m.source ? ` defined at ${m.source.file}:${m.source.line}` : ''}; from the ${model.stage} graph.`,
    },
    // Dots are regex metacharacters: escape them (the kernel matches with re.fullmatch); inside a
    // double-quoted YAML string the backslash itself needs escaping.
    // The typed prefix keeps its opening quote, so the item does too.
    insertText: quote + m.path.replace(/\./g, quote === '"' ? '\\\\.' : '\\.'),
    filterText: quote + m.path,
    sortText: String(i).padStart(5, '0'),
  }));
}

function keyItems(path: string[]): CompletionItem[] {
  const props = objectBranch(schemaAt(path))?.properties ?? {};
  const required = new Set(objectBranch(schemaAt(path))?.required ?? []);
  return Object.keys(props).map((key, i) => {
    const node = schemaAt([...path, key]);
    return {
      label: key,
      kind: CompletionItemKind.Property,
      detail: typeLabel(node),
      documentation: node?.description ? { kind: 'markdown', value: node.description } : undefined,
      insertText: `${key}: `,
      insertTextFormat: InsertTextFormat.PlainText,
      // Required keys first, then the schema's order.
      sortText: `${required.has(key) ? 0 : 1}${String(i).padStart(3, '0')}`,
    };
  });
}

function valueItems(node: SchemaNode | undefined, flow: string | undefined): CompletionItem[] {
  const item = (value: unknown, i: number): CompletionItem => ({
    label: String(value),
    kind: CompletionItemKind.EnumMember,
    documentation: VALUE_DOCS[String(value)] ? { kind: 'markdown', value: VALUE_DOCS[String(value)] } : undefined,
    sortText: String(i).padStart(3, '0'),
  });
  if (!node) return [];
  if (flow) return observersFor(flow).map(item);
  if (node.enum) return node.enum.map(item);
  if (node.items?.enum) return node.items.enum.map(item);
  // train.loss: a fixed name or a file.py:function entry.
  const named = node.anyOf?.find((n) => n.enum);
  if (named?.enum) return named.enum.map(item);
  if (node.const !== undefined) return [item(node.const, 0)];
  if (node.type === 'boolean') return [item(true, 0), item(false, 1)];
  return [];
}

function typeLabel(node: SchemaNode | undefined): string | undefined {
  if (!node) return undefined;
  if (node.enum) return node.enum.join(' | ');
  if (node.const !== undefined) return String(node.const);
  return Array.isArray(node.type) ? node.type.join(' | ') : (node.type ?? (node.properties ? 'object' : undefined));
}

export const flowOf = (text: string) => /^flow:\s*(eager|pt2e|torchao)\b/m.exec(text)?.[1] ?? 'pt2e';
