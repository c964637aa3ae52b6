// Small helpers over the @lezer/python tree, shared by the Python rules.
import type { SyntaxNode, Tree } from '@lezer/common';

export interface PythonRuleContext {
  text: string;
  tree: Tree;
  /** Per-document memo for helpers that several rules need (calls, imports). */
  cache?: Map<string, unknown>;
}

export function memo<T>(ctx: PythonRuleContext, key: string, compute: () => T): T {
  ctx.cache ??= new Map();
  if (!ctx.cache.has(key)) ctx.cache.set(key, compute());
  return ctx.cache.get(key) as T;
}

export const textOf = (ctx: PythonRuleContext, node: SyntaxNode) => ctx.text.slice(node.from, node.to);

/** Dotted name of a callee: `torch.ao.quantization.prepare_qat` -> ['torch','ao','quantization','prepare_qat']. */
export function dottedName(ctx: PythonRuleContext, node: SyntaxNode | null): string[] | undefined {
  if (!node) return undefined;
  if (node.name === 'VariableName') return [textOf(ctx, node)];
  if (node.name === 'MemberExpression') {
    const object = node.firstChild;
    const prop = node.lastChild;
    if (!object || !prop || prop.name !== 'PropertyName') return undefined;
    const head = dottedName(ctx, object);
    return head ? [...head, textOf(ctx, prop)] : undefined;
  }
  return undefined;
}

export interface Call {
  node: SyntaxNode;
  callee: string[];
  /** Positional arguments (keyword arguments are left out). */
  args: SyntaxNode[];
  keywords: Map<string, SyntaxNode>;
}

export function asCall(ctx: PythonRuleContext, node: SyntaxNode): Call | undefined {
  if (node.name !== 'CallExpression') return undefined;
  const callee = dottedName(ctx, node.firstChild);
  const argList = node.getChild('ArgList');
  if (!callee || !argList) return undefined;
  const args: SyntaxNode[] = [];
  const keywords = new Map<string, SyntaxNode>();
  for (let c = argList.firstChild; c; c = c.nextSibling) {
    if (c.name === '(' || c.name === ')' || c.name === ',') continue;
    if (c.nextSibling?.name === 'AssignOp' && c.name === 'VariableName') {
      const value = c.nextSibling.nextSibling;
      if (value) keywords.set(textOf(ctx, c), value);
      c = value ?? c.nextSibling;
      continue;
    }
    args.push(c);
  }
  return { node, callee, args, keywords };
}

/** Every call in the document, in source order. */
export function allCalls(ctx: PythonRuleContext): Call[] {
  return memo(ctx, 'calls', () => {
    const calls: Call[] = [];
    ctx.tree.iterate({
      enter(ref) {
        if (ref.name !== 'CallExpression') return;
        const call = asCall(ctx, ref.node);
        if (call) calls.push(call);
      },
    });
    return calls;
  });
}

/** The innermost function (or the module) that owns a node: rules reason within one scope. */
export function scopeOf(node: SyntaxNode): SyntaxNode {
  for (let p = node.parent; p; p = p.parent) {
    if (p.name === 'FunctionDefinition' || p.name === 'Script') return p;
  }
  return node;
}

/** The statement that contains a node (its direct parent is a Body or the Script). */
export function statementOf(node: SyntaxNode): SyntaxNode {
  let n = node;
  while (n.parent && n.parent.name !== 'Body' && n.parent.name !== 'Script') n = n.parent;
  return n;
}

const lineStarts = new WeakMap<object, { text: string; starts: number[] }>();

/** 1-based line of an offset (line starts are indexed once per text). */
export function lineOf(text: string, offset: number): number {
  const key = lineOf as object;
  let index = lineStarts.get(key);
  if (index?.text !== text) {
    const starts = [0];
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    lineStarts.set(key, (index = { text, starts }));
  }
  let [lo, hi] = [0, index.starts.length - 1];
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (index.starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

export function lineStartOf(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

export const indentAt = (text: string, offset: number) => /^[ \t]*/.exec(text.slice(lineStartOf(text, offset)))![0];

export interface Imports {
  /** Local name -> what it is bound to, e.g. tq -> torch.ao.quantization, convert -> torch.ao.quantization.convert. */
  aliases: Map<string, string>;
  /** Every import statement with its dotted module text and where that text sits. */
  statements: Array<{ node: SyntaxNode; module: string; from: number; to: number; names: string[] }>;
}

export function imports(ctx: PythonRuleContext): Imports {
  return memo(ctx, 'imports', () => {
    const aliases = new Map<string, string>();
    const statements: Imports['statements'] = [];
    ctx.tree.iterate({
      enter(ref) {
        if (ref.name !== 'ImportStatement') return;
        const node = ref.node;
        const text = textOf(ctx, node).replace(/\\\n/g, ' ');
        const from = /^from\s+(\.*[\w.]*)\s+import\s+([\s\S]+)$/.exec(text);
        const first = node.getChild('VariableName');
        if (from) {
          const names: string[] = [];
          for (const part of from[2]
            .replace(/[()\n]/g, ' ')
            .replace(/#[^\n]*/g, '')
            .split(',')) {
            const [name, alias] = part.trim().split(/\s+as\s+/);
            if (!name) continue;
            names.push(name);
            if (name !== '*') aliases.set((alias ?? name).trim(), `${from[1]}.${name}`);
          }
          const start = first ? first.from : node.from;
          statements.push({ node, module: from[1], from: start, to: start + from[1].length, names });
        } else {
          for (const part of text.replace(/^import\s+/, '').split(',')) {
            const [module, alias] = part.trim().split(/\s+as\s+/);
            if (!module) continue;
            aliases.set(alias?.trim() ?? module.split('.')[0], alias ? module : module.split('.')[0]);
            const at = ctx.text.indexOf(module, node.from);
            statements.push({ node, module, from: at, to: at + module.length, names: [] });
          }
        }
        return false;
      },
    });
    return { aliases, statements };
  });
}

/** The fully qualified name a dotted reference stands for, through the file's imports. */
export function qualify(ctx: PythonRuleContext, parts: string[]): string {
  const bound = imports(ctx).aliases.get(parts[0]);
  return [bound ?? parts[0], ...parts.slice(1)].join('.');
}

/** Names imported from torch quantization modules (`from torch.ao.quantization import convert`). */
export function quantizationImports(ctx: PythonRuleContext): Set<string> {
  const names = new Set<string>();
  for (const [local, target] of imports(ctx).aliases) {
    const module = target.slice(0, target.lastIndexOf('.'));
    if (/quantiz|pt2e/.test(module) && target.includes('.')) names.add(local);
  }
  return names;
}

/** A Python int literal (with an optional minus), else undefined. */
export function intLiteral(ctx: PythonRuleContext, node: SyntaxNode | undefined): number | undefined {
  if (!node) return undefined;
  const t = textOf(ctx, node).replace(/_/g, '').replace(/\s+/g, '');
  return /^-?\d+$/.test(t) ? Number(t) : undefined;
}

/** The value of the last `name = value` in the same scope before `offset`. */
export function lastAssignment(ctx: PythonRuleContext, name: string, at: SyntaxNode): SyntaxNode | undefined {
  const scope = scopeOf(at);
  let found: SyntaxNode | undefined;
  scope.cursor().iterate((n) => {
    if (n.from >= at.from) return false;
    if (n.name === 'FunctionDefinition' && n.from !== scope.from) return false;
    if (n.name !== 'AssignStatement') return;
    const target = n.node.firstChild;
    const value = target?.nextSibling?.nextSibling;
    if (target?.name === 'VariableName' && textOf(ctx, target) === name && value) found = value;
    return undefined;
  });
  return found;
}

/** Children of a tuple/list/argument expression, without the punctuation. */
export function elements(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) if (!/^[()[\],]$/.test(c.name)) out.push(c);
  return out;
}
