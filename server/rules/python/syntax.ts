// Small helpers over the @lezer/python tree, shared by the Python rules.
import type { SyntaxNode, Tree } from '@lezer/common';

export interface PythonRuleContext {
  text: string;
  tree: Tree;
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

/** The innermost function (or the module) that owns a node: rules reason within one scope. */
export function scopeOf(node: SyntaxNode): SyntaxNode {
  for (let p = node.parent; p; p = p.parent) {
    if (p.name === 'FunctionDefinition' || p.name === 'Script') return p;
  }
  return node;
}

export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Names imported from torch quantization modules (`from torch.ao.quantization import convert`). */
export function quantizationImports(ctx: PythonRuleContext): Set<string> {
  const names = new Set<string>();
  ctx.tree.iterate({
    enter(n) {
      if (n.name !== 'ImportStatement') return;
      const text = textOf(ctx, n.node);
      const m = /^from\s+([\w.]+)\s+import\s+([\s\S]+)$/.exec(text);
      if (!m || !/quantiz|pt2e/.test(m[1])) return false;
      for (const part of m[2].replace(/[()\\\n]/g, ' ').split(',')) {
        const alias = part.trim().split(/\s+as\s+/);
        const name = (alias[1] ?? alias[0]).trim();
        if (name) names.add(name);
      }
      return false;
    },
  });
  return names;
}
