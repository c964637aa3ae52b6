// Reading the @lezer/python tree: dotted names, calls and their arguments, statement bodies. Plain data
// out (offsets and strings), so what the walker records can outlive the tree it came from.
import type { SyntaxNode } from '@lezer/common';

export interface Span {
  from: number;
  to: number;
}

export interface Arg extends Span {
  /** The lezer node name: VariableName, MemberExpression, Number, String, CallExpression, ... */
  node: string;
  text: string;
  /** The dotted name when the argument is a name chain (`model`, `self.model`). */
  dotted?: string;
}

export const slice = (text: string, n: Span) => text.slice(n.from, n.to);

/** `a.b.c` -> ['a','b','c'] for name chains; undefined for anything else (calls, subscripts). */
export function dottedParts(text: string, node: SyntaxNode | null): string[] | undefined {
  if (!node) return undefined;
  if (node.name === 'VariableName') return [slice(text, node)];
  if (node.name === 'MemberExpression') {
    const object = node.firstChild;
    const prop = node.lastChild;
    if (!object || !prop || prop.name !== 'PropertyName') return undefined;
    const head = dottedParts(text, object);
    return head ? [...head, slice(text, prop)] : undefined;
  }
  return undefined;
}

export function argOf(text: string, node: SyntaxNode): Arg {
  const parts = dottedParts(text, node);
  return { from: node.from, to: node.to, node: node.name, text: slice(text, node), dotted: parts?.join('.') };
}

/** Positional and keyword arguments of an ArgList (star arguments are left out). */
export function readArgs(
  text: string,
  argList: SyntaxNode | null,
): { args: SyntaxNode[]; keywords: Map<string, SyntaxNode>; starred: boolean } {
  const args: SyntaxNode[] = [];
  const keywords = new Map<string, SyntaxNode>();
  let starred = false;
  if (!argList) return { args, keywords, starred };
  for (let c = argList.firstChild; c; c = c.nextSibling) {
    if (c.name === '(' || c.name === ')' || c.name === ',') continue;
    if (c.name === '*' || c.name === '**') {
      starred = true;
      c = c.nextSibling ?? c;
      continue;
    }
    if (c.name === 'VariableName' && c.nextSibling?.name === 'AssignOp') {
      const value = c.nextSibling.nextSibling;
      if (value) keywords.set(slice(text, c), value);
      c = value ?? c.nextSibling;
      continue;
    }
    args.push(c);
  }
  return { args, keywords, starred };
}

/** The statements of a Body or Script (StatementGroup `a(); b()` flattened). */
export function statements(body: SyntaxNode | null): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = body?.firstChild ?? null; c; c = c.nextSibling) {
    if (c.name === ':' || c.name === '⚠' || c.name === 'Comment') continue;
    if (c.name === 'StatementGroup') {
      for (let s = c.firstChild; s; s = s.nextSibling) if (s.name !== ';' && s.name !== '⚠') out.push(s);
    } else out.push(c);
  }
  return out;
}

/** The FunctionDefinition / ClassDefinition of a possibly decorated statement. */
export function definitionOf(node: SyntaxNode): SyntaxNode | null {
  if (node.name === 'FunctionDefinition' || node.name === 'ClassDefinition') return node;
  if (node.name === 'DecoratedStatement')
    return node.getChild('FunctionDefinition') ?? node.getChild('ClassDefinition');
  return null;
}

export const nameOf = (text: string, def: SyntaxNode): string => {
  const n = def.getChild('VariableName');
  return n ? slice(text, n) : '';
};

/** Parameter names of a FunctionDefinition, in order (`*args`, `**kw` included by name). */
export function paramsOf(text: string, def: SyntaxNode): string[] {
  const list = def.getChild('ParamList');
  const out: string[] = [];
  for (let c = list?.firstChild ?? null; c; c = c.nextSibling) {
    if (c.name === 'VariableName') out.push(slice(text, c));
    else if (c.name === 'AssignOp' || c.name === 'TypeDef') c = c.nextSibling ?? c; // skip the default / type
  }
  return out;
}

export function lineStartOf(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

export function indentAt(text: string, offset: number): string {
  const start = lineStartOf(text, offset);
  let end = start;
  while (text[end] === ' ' || text[end] === '\t') end++;
  return text.slice(start, end);
}

/** A Python int literal (with an optional minus), else undefined. */
export function intLiteral(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const t = text.replace(/_/g, '').replace(/\s+/g, '');
  return /^-?\d+$/.test(t) ? Number(t) : undefined;
}

/** Children of a tuple/list expression, without the punctuation. */
export function elements(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) if (!/^[()[\],]$/.test(c.name)) out.push(c);
  return out;
}
