// Name scopes: the module's bindings (imports, aliases, star imports) and each function's locals, so that
// `tq.prepare_qat`, `nn.quantized.FloatFunctional` or a local `fuse = torch.ao.quantization.fuse_modules`
// resolve to what they are, and a parameter named `convert` does not.
import type { SyntaxNode } from '@lezer/common';
import { NameTable, readImport, type ImportStatement } from './names';
import { definitionOf, dottedParts, nameOf, paramsOf, slice, statements } from './syntax';

/** try/except ImportError, or an `if` on a version or hasattr: code written for other library versions. */
function guardsImports(text: string, node: SyntaxNode): boolean {
  if (node.name === 'TryStatement') {
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.name !== 'except') continue;
      const type = c.nextSibling;
      if (!type || type.name === 'Body') return true; // bare except
      if (/ImportError|ModuleNotFoundError|AttributeError|\bException\b/.test(slice(text, type))) return true;
    }
    return false;
  }
  if (node.name === 'IfStatement') {
    const cond = node.getChild('if')?.nextSibling;
    return !!cond && /version|hasattr|find_spec|TORCH_|_AT_LEAST|_available|is_fbcode/i.test(slice(text, cond));
  }
  return false;
}

const COMPOUND = new Set(['IfStatement', 'TryStatement', 'WithStatement', 'ForStatement', 'WhileStatement']);

/** Every statement of a block and of the if/try/with/for/while blocks inside it (not of defs and classes). */
function* flatStatements(text: string, body: SyntaxNode | null, guarded: boolean): Generator<[SyntaxNode, boolean]> {
  for (const s of statements(body)) {
    yield [s, guarded];
    if (COMPOUND.has(s.name)) {
      const g = guarded || guardsImports(text, s);
      for (const b of s.getChildren('Body')) yield* flatStatements(text, b, g);
    } else if (s.name === 'MatchStatement') {
      for (const clause of s.getChild('MatchBody')?.getChildren('MatchClause') ?? [])
        yield* flatStatements(text, clause.getChild('Body'), guarded);
    }
  }
}

/** `x = <dotted name>`: the target and the value's parts, when that is all the statement is. */
function aliasAssignment(text: string, s: SyntaxNode): { target: string; value?: string[] } | undefined {
  if (s.name !== 'AssignStatement') return undefined;
  const target = s.firstChild;
  const op = target?.nextSibling;
  if (target?.name !== 'VariableName' || op?.name !== 'AssignOp') return undefined;
  const value = op.nextSibling;
  if (value?.nextSibling) return { target: slice(text, target) }; // a = b = c, or a typed target
  return { target: slice(text, target), value: dottedParts(text, value) };
}

/** Names a statement binds other than by plain `x = ...` (for targets, with-as, except-as, walrus, del). */
function otherTargets(text: string, s: SyntaxNode, out: Set<string>): void {
  const addTargets = (n: SyntaxNode | null) => {
    for (let c = n; c; c = c.nextSibling) {
      if (c.name === 'VariableName') out.add(slice(text, c));
      else if (c.name === 'TupleExpression' || c.name === 'ArrayExpression' || c.name === 'ParenthesizedExpression')
        addTargets(c.firstChild);
      if (c.name === 'in' || c.name === 'AssignOp' || c.name === 'UpdateOp') break;
    }
  };
  if (s.name === 'AssignStatement' || s.name === 'UpdateStatement') {
    // every target before the last `=`
    let last: SyntaxNode | null = null;
    for (let c = s.firstChild; c; c = c.nextSibling) if (c.name === 'AssignOp' || c.name === 'UpdateOp') last = c;
    for (let c = s.firstChild; c && c !== last; c = c.nextSibling) {
      if (c.name === 'VariableName') out.add(slice(text, c));
      else if (c.name === 'TupleExpression' || c.name === 'ArrayExpression') addTargets(c.firstChild);
    }
  } else if (s.name === 'ForStatement') addTargets(s.getChild('for')?.nextSibling ?? null);
  else if (s.name === 'WithStatement' || s.name === 'TryStatement') {
    for (let c = s.firstChild; c; c = c.nextSibling)
      if (c.name === 'as' && c.nextSibling?.name === 'VariableName') out.add(slice(text, c.nextSibling));
  } else if (s.name === 'DeleteStatement') addTargets(s.firstChild?.nextSibling ?? null);
  // walrus targets anywhere in the statement
  s.cursor().iterate((n) => {
    if (n.name === 'FunctionDefinition' || n.name === 'LambdaExpression' || n.name === 'ClassDefinition') return false;
    if (n.name === 'NamedExpression') {
      const t = n.node.firstChild;
      if (t?.name === 'VariableName') out.add(slice(text, t));
    }
    return undefined;
  });
}

export interface ModuleScope {
  names: NameTable;
  /** The module-level import statements by where they start (the walker binds their names). */
  importsAt: Map<number, ImportStatement[]>;
  /** Where a new import line goes: after the last top-level import (or after the docstring / at 0). */
  importAt: number;
}

/** The module's bindings, from its top level and the if/try blocks there. */
export function moduleScope(text: string, script: SyntaxNode): ModuleScope {
  const names = new NameTable();
  const importsAt = new Map<number, ImportStatement[]>();
  const aliases = new Map<string, Array<string[] | undefined>>();
  const others = new Set<string>();
  let importAt = -1;
  let docEnd = 0;
  const top = statements(script);
  if (top[0]?.name === 'ExpressionStatement' && top[0].firstChild?.name === 'String') docEnd = top[0].to;
  for (const s of top) if (s.name === 'ImportStatement') importAt = s.to;
  for (const [s, guarded] of flatStatements(text, script, false)) {
    if (s.name === 'ImportStatement') {
      const read = readImport(text, s, guarded);
      importsAt.set(s.from, read);
      for (const imp of read) names.addImport(imp);
      continue;
    }
    const def = definitionOf(s);
    if (def) {
      // a def in `except ImportError:` stands in for the import the try made
      if (!guarded) others.add(nameOf(text, def));
      continue;
    }
    const alias = aliasAssignment(text, s);
    if (alias) {
      // a fallback (`except ImportError: tq = None`) does not undo the import it stands in for
      if (!guarded || alias.value) aliases.set(alias.target, [...(aliases.get(alias.target) ?? []), alias.value]);
      continue;
    }
    if (!guarded) otherTargets(text, s, others);
  }
  for (const [target, values] of aliases) {
    // An alias when every assignment to the name is the same dotted reference to an import or module.
    const qualified = values.map((v) => (v && !others.has(v[0]) && v[0] !== target ? names.qualify(v) : undefined));
    if (!others.has(target) && qualified.every((q) => q !== undefined && q === qualified[0]))
      names.bind(target, qualified[0]!);
    else others.add(target);
  }
  // A name assigned something else as well as imported is a variable: what it holds depends on the path.
  for (const o of others) {
    names.bindings.delete(o);
    names.variables.add(o);
  }
  return { names, importsAt, importAt: importAt >= 0 ? importAt : docEnd };
}

/** A function's scope: its parameters and locals shadow the module; local imports and aliases resolve. */
export class LocalScope {
  readonly locals = new Set<string>();
  readonly table = new NameTable();
  readonly imports: ImportStatement[] = [];

  constructor(
    readonly module: NameTable,
    readonly parent?: LocalScope,
  ) {}

  static ofFunction(text: string, def: SyntaxNode, module: NameTable, parent?: LocalScope): LocalScope {
    const scope = new LocalScope(module, parent);
    for (const p of paramsOf(text, def)) scope.locals.add(p);
    const aliases = new Map<string, Array<string[] | undefined>>();
    const globals = new Set<string>();
    const others = new Set<string>();
    for (const [s, guarded] of flatStatements(text, def.getChild('Body'), false)) {
      if (s.name === 'ImportStatement') {
        for (const imp of readImport(text, s, guarded)) {
          scope.imports.push(imp);
          scope.table.addImport(imp);
        }
        continue;
      }
      if (s.name === 'ScopeStatement') {
        for (let c = s.firstChild; c; c = c.nextSibling) if (c.name === 'VariableName') globals.add(slice(text, c));
        continue;
      }
      const d = definitionOf(s);
      if (d) {
        others.add(nameOf(text, d));
        continue;
      }
      const alias = aliasAssignment(text, s);
      if (alias) {
        aliases.set(alias.target, [...(aliases.get(alias.target) ?? []), alias.value]);
        otherTargets(text, s, new Set()); // walrus inside is rare; ignore
        continue;
      }
      otherTargets(text, s, others);
    }
    for (const [target, values] of aliases) {
      const qualified = values.map((v) => (v && v[0] !== target ? scope.qualifyParts(v) : undefined));
      if (!others.has(target) && !scope.locals.has(target) && qualified.every((q) => q && q === qualified[0]))
        scope.table.bind(target, qualified[0]!);
      else others.add(target);
    }
    for (const o of others) if (!globals.has(o) && !scope.table.bindings.has(o)) scope.locals.add(o);
    return scope;
  }

  private memo = new Map<string, string | undefined>();

  /** The qualified name of a dotted reference in this scope; undefined for locals and variables. */
  qualifyParts(parts: string[]): string | undefined {
    const key = parts.join('.');
    if (this.memo.has(key)) return this.memo.get(key);
    const q = this.qualifyUncached(parts);
    this.memo.set(key, q);
    return q;
  }

  private qualifyUncached(parts: string[]): string | undefined {
    const head = parts[0];
    if (this.table.bindings.has(head)) return this.table.qualify(parts);
    if (this.locals.has(head)) return undefined;
    if (this.parent) return this.parent.qualifyParts(parts);
    return this.module.qualify(parts);
  }

  isLocal(name: string): boolean {
    return this.locals.has(name) || (!this.table.bindings.has(name) && !!this.parent?.isLocal(name));
  }
}

/** A scope for code that runs at module level (the module's own statements). */
export const moduleLevel = (module: NameTable) => new LocalScope(module);
