// The flow-sensitive core: one walk over a unit that follows each function's control flow (if/elif/else,
// loops with break/continue/else, try/except/else/finally, with, match, return/raise) and records, at every
// call and attribute assignment, the abstract state on the paths that reach it (join at merges, loops to a
// fixpoint). `with pytest.raises(...)` / `self.assertRaises(...)` bodies do not complete: what they do has
// no effect after them, and the rules skip what is expected to raise there. Calls' effects are in effects.ts.
import type { SyntaxNode } from '@lezer/common';
import type { DocContext } from './context';
import type { Anchored } from './findings';
import { applyCall, type Value } from './effects';
import type { ImportStatement } from './names';
import { canonical, readImport } from './names';
import { LocalScope } from './scope';
import { emptyState, equalState, join, joinAll, setObj, setVar, type State, type VarFact } from './state';
import {
  argOf,
  definitionOf,
  dottedParts,
  indentAt,
  nameOf,
  paramsOf,
  readArgs,
  slice,
  statements,
  type Arg,
  type Span,
} from './syntax';

export interface FnRun {
  /** `Net.forward`, `main`, `<module>`. */
  name: string;
  /** The class the function is a method of. */
  cls?: string;
  /** The class `self` is taken to be (a subclass for an inherited method). */
  selfCls?: string;
  /** A second run of an inherited method for a subclass: only its self-attribute calls are recorded. */
  variant: boolean;
  def?: SyntaxNode;
}

export interface CallInfo extends Span {
  node: SyntaxNode;
  callee?: string[];
  calleeSpan: Span;
  /** The attribute called, for `<anything>.<method>(...)`. */
  method?: string;
  /** Through imports and aliases, torch.quantization spelled torch.ao.quantization; undefined: local/unknown. */
  qualified?: string;
  args: Arg[];
  keywords: Record<string, Arg>;
  stmt: Span;
  indent: string;
  run: FnRun;
  /** Inside the body of `with pytest.raises(...)` / `self.assertRaises(...)`. */
  inRaises: boolean;
  /** The joined state on the paths that reach the call, after its arguments; null: unreachable. */
  state: State | null;
  /** Argument values (in order: positional then keyword). */
  argKinds?: string[];
  /** `self.<attr>(...)`: the attribute, and its earlier call sites on some path to here. */
  selfAttr?: string;
  prior?: number[];
}

export interface AssignInfo extends Span {
  /** Dotted target (`model.qconfig`, `model.fc.qconfig`). */
  target: string;
  targetSpan: Span;
  stmt: Span;
  run: FnRun;
  inRaises: boolean;
  state: State | null;
}

/** A dotted reference to a library name (calls and attribute reads), for the API rules. */
export interface RefInfo extends Span {
  parts: string[];
  /** End offset of each part: parts[0..i] spans from..ends[i]. */
  ends: number[];
  /** The qualified name of each prefix parts[0..i]. */
  qualified: Array<string | undefined>;
  /** Inside an except ImportError / version-check block: code for other library versions. */
  guarded: boolean;
}

export interface UnitFacts {
  calls: CallInfo[];
  assigns: AssignInfo[];
  refs: RefInfo[];
  /** Imports inside functions of this unit (module-level ones are the module unit's). */
  imports: ImportStatement[];
  runs: FnRun[];
  /** Offsets from other units (negative site numbers index this list). */
  foreign: Anchored[];
}

const RAISES = /(^|\.)(raises|assertRaises|assertRaisesRegex|assertRaisesRegexp|assertRaisesWithPredicateMatch)$/;
const SUPPRESS = /(^|\.)suppress$/;
const MAX_LOOP = 6;
const headMemo = new WeakMap<LocalScope, Map<string, boolean>>();
const LIBRARY_HEADS = /^(torch|torchao|tvm|torchvision)$/;
/** Unimported names taken as the module of that name (snippets that skip `import torch`). */
const KNOWN_ROOTS = new Set(
  'torch torchao torchvision tvm onnx onnxruntime copy numpy os sys math json pytest unittest logging time pathlib functools itertools random pickle warnings contextlib'.split(
    ' ',
  ),
);

interface LoopFrame {
  breaks: Array<State | null>;
  continues: Array<State | null>;
}

export class Walker {
  readonly facts: UnitFacts = { calls: [], assigns: [], refs: [], imports: [], runs: [], foreign: [] };
  scope!: LocalScope;
  run!: FnRun;
  private stmtNode: SyntaxNode | null = null;
  private raises = 0;
  private guarded = 0;
  private loops: LoopFrame[] = [];
  private returns: Array<State | null> = [];
  private tries: Array<Array<State | null>> = [];
  private byOffset = new Map<number, CallInfo>();
  private refSeen = new Set<number>();
  private assignAt = new Map<number, AssignInfo>();
  /** Function bodies to walk: each with its enclosing function's scope (none at top level or in a class). */
  private pending: Array<{ def: SyntaxNode; outer?: LocalScope; cls?: string }> = [];

  constructor(
    readonly text: string,
    readonly ctx: DocContext,
  ) {}

  private partsMemo = new Map<number, string[] | undefined>();

  /** dottedParts, once per node (loops and the rules ask again). */
  partsOf(n: SyntaxNode | null): string[] | undefined {
    if (!n) return undefined;
    const key = n.from * 2 ** 26 + (n.to - n.from);
    if (this.partsMemo.has(key)) return this.partsMemo.get(key);
    const parts = n.name === 'VariableName' || n.name === 'MemberExpression' ? dottedParts(this.text, n) : undefined;
    this.partsMemo.set(key, parts);
    return parts;
  }

  /** Does `name` name a module or an imported function here (not a variable)? */
  isModuleHead(name: string): boolean {
    let memo = headMemo.get(this.scope);
    if (!memo) headMemo.set(this.scope, (memo = new Map()));
    let yes = memo.get(name);
    if (yes === undefined) {
      yes =
        !this.scope.isLocal(name) &&
        this.scope.qualifyParts([name]) !== undefined &&
        (this.scope.table.bindings.has(name) ||
          this.ctx.module.names.lookup(name) !== undefined ||
          KNOWN_ROOTS.has(name));
      memo.set(name, yes);
    }
    return yes;
  }

  /** A site number for an offset in another unit. */
  foreignSite(a: Anchored): number {
    this.facts.foreign.push(a);
    return -this.facts.foreign.length;
  }

  // ---- Entry points.

  /** Module-level code: the given top-level statements, in order. */
  walkModule(stmts: SyntaxNode[], guardedOf: (s: SyntaxNode) => boolean): void {
    this.begin({ name: '<module>', variant: false }, new LocalScope(this.ctx.module.names));
    let s: State | null = emptyState();
    for (const st of stmts) {
      const g = guardedOf(st);
      if (g) this.guarded++;
      s = this.stmt(st, s);
      if (g) this.guarded--;
    }
    this.flushPending();
  }

  /** A top-level def or class unit. */
  walkUnit(node: SyntaxNode): void {
    const def = definitionOf(node);
    if (!def) return;
    this.begin({ name: '<module>', variant: false }, new LocalScope(this.ctx.module.names));
    // decorators and default values run at module level
    this.definition(node, emptyState(), undefined);
    this.flushPending();
  }

  private begin(run: FnRun, scope: LocalScope): void {
    this.run = run;
    this.scope = scope;
    this.byOffset = new Map();
    this.assignAt = new Map();
    this.facts.runs.push(run);
  }

  private flushPending(): void {
    while (this.pending.length) {
      const { def, outer, cls } = this.pending.shift()!;
      this.runFunction(def, outer, cls, cls, false);
      if (cls) {
        // an inherited method also runs as each subclass that uses it, for its module attributes
        const name = nameOf(this.text, def);
        for (const user of this.ctx.usersOf(cls, name)) if (user !== cls) this.runFunction(def, outer, cls, user, true);
      }
    }
  }

  private runFunction(
    def: SyntaxNode,
    outer: LocalScope | undefined,
    cls: string | undefined,
    selfCls: string | undefined,
    variant: boolean,
  ): void {
    const saved = {
      run: this.run,
      scope: this.scope,
      byOffset: this.byOffset,
      loops: this.loops,
      returns: this.returns,
      tries: this.tries,
      raises: this.raises,
    };
    const name = nameOf(this.text, def);
    const scope = LocalScope.ofFunction(this.text, def, this.ctx.module.names, outer);
    this.begin({ name: cls ? `${cls}.${name}` : name, cls, selfCls, variant, def }, scope);
    this.loops = [];
    this.returns = [];
    this.tries = [];
    this.raises = 0;
    let s: State = emptyState();
    for (const p of paramsOf(this.text, def)) {
      const id = `param:${p}`;
      s = setVar(s, p, { objs: [id] });
      s = setObj(s, id, p === 'self' && selfCls ? { cls: selfCls } : {});
    }
    this.block(def.getChild('Body'), s);
    Object.assign(this, saved);
  }

  // ---- Statements.

  block(body: SyntaxNode | null, s: State | null): State | null {
    for (const st of statements(body)) s = this.stmt(st, s);
    return s;
  }

  private stmt(n: SyntaxNode, s: State | null): State | null {
    for (const t of this.tries) t.push(s);
    const prev = this.stmtNode;
    this.stmtNode = n;
    try {
      return this.stmtInner(n, s);
    } finally {
      this.stmtNode = prev;
    }
  }

  private stmtInner(n: SyntaxNode, s: State | null): State | null {
    switch (n.name) {
      case 'ExpressionStatement':
        return this.exprs(n, s);
      case 'AssignStatement':
        return this.assign(n, s);
      case 'UpdateStatement':
        return this.update(n, s);
      case 'ReturnStatement':
        s = this.exprs(n, s);
        this.returns.push(s);
        return null;
      case 'RaiseStatement':
        this.exprs(n, s);
        return null;
      case 'BreakStatement':
        this.loops[this.loops.length - 1]?.breaks.push(s);
        return null;
      case 'ContinueStatement':
        this.loops[this.loops.length - 1]?.continues.push(s);
        return null;
      case 'PassStatement':
      case 'ScopeStatement':
        return s;
      case 'ImportStatement':
        if (this.run.name !== '<module>' && !this.run.variant)
          this.facts.imports.push(...readImport(this.text, n, this.guarded > 0));
        return this.bindImport(n, s);
      case 'DeleteStatement':
        return this.bindTargets(n.firstChild?.nextSibling ?? null, this.exprs(n, s), true);
      case 'IfStatement':
        return this.ifStmt(n, s);
      case 'WhileStatement':
        return this.whileStmt(n, s);
      case 'ForStatement':
        return this.forStmt(n, s);
      case 'TryStatement':
        return this.tryStmt(n, s);
      case 'WithStatement':
        return this.withStmt(n, s);
      case 'MatchStatement':
        return this.matchStmt(n, s);
      case 'FunctionDefinition':
      case 'ClassDefinition':
      case 'DecoratedStatement':
        return this.definition(n, s, undefined); // a def inside a function is no method
      default:
        return this.exprs(n, s);
    }
  }

  /** Evaluates every expression child in order. */
  private exprs(n: SyntaxNode, s: State | null): State | null {
    for (let c = n.firstChild; c; c = c.nextSibling) if (isExpression(c)) s = this.expr(c, s)[0];
    return s;
  }

  private bindImport(n: SyntaxNode, s: State | null): State | null {
    if (!s) return s;
    for (const imp of this.ctx.module.importsAt.get(n.from) ?? readImport(this.text, n, false)) {
      if (imp.local) s = setVar(s, imp.local, undefined);
      for (const name of imp.names) if (name.local !== '*') s = setVar(s, name.local, undefined);
    }
    return s;
  }

  private assign(n: SyntaxNode, s: State | null): State | null {
    const targets: SyntaxNode[] = [];
    let value: SyntaxNode | null = null;
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.name === 'AssignOp' || c.name === 'TypeDef') continue;
      if (c.nextSibling?.name === 'AssignOp' || c.nextSibling?.name === 'TypeDef') targets.push(c);
      else value = c;
    }
    if (!value) return this.exprs(n, s);
    // targets' own subexpressions (a[i] = ..., f().x = ...) are evaluated too
    for (const t of targets) if (t.name !== 'VariableName' && t.name !== 'MemberExpression') s = this.expr(t, s)[0];
    const [after, val] = this.expr(value, s);
    s = after;
    for (const t of targets) s = this.bindTarget(t, s, val, value);
    return s;
  }

  private update(n: SyntaxNode, s: State | null): State | null {
    const target = n.firstChild;
    const op = target?.nextSibling;
    const value = op?.nextSibling;
    if (!target || !value) return this.exprs(n, s);
    const [s1, left] = this.expr(target, s);
    const [s2, right] = this.expr(value, s1);
    const dotted = this.partsOf(target)?.join('.');
    if (!s2 || !dotted) return s2;
    const old = s2.vars.get(dotted);
    const kinds = op && slice(this.text, op) === '+=' ? addKinds(left.kinds, right.kinds) : ['other'];
    return setVar(s2, dotted, { objs: old?.objs, kinds, defs: old?.defs });
  }

  /** Binds an assignment target to a value. */
  private bindTarget(t: SyntaxNode, s: State | null, val: Value, valueNode: SyntaxNode | null): State | null {
    const dotted = this.partsOf(t);
    if (dotted) {
      const name = dotted.join('.');
      if (dotted.length > 1) {
        this.recordAssign(t, name, s);
      }
      if (!s) return s;
      let objs = val.objs;
      if (!objs && valueNode) {
        // a fresh value we know nothing about: an object of its own, so later .train()/.eval() can be tracked
        const id = `@${valueNode.from}:${valueNode.to}`;
        if (!s.objs.has(id)) s = setObj(s, id, {});
        objs = [id];
      }
      const fact: VarFact = { objs, kinds: val.kinds, defs: valueNode ? [valueNode.from] : undefined };
      return setVar(s, name, fact);
    }
    if (t.name === 'TupleExpression' || t.name === 'ArrayExpression' || t.name === 'ParenthesizedExpression') {
      for (let c = t.firstChild; c; c = c.nextSibling) if (isExpression(c)) s = this.bindTarget(c, s, {}, null);
      return s;
    }
    return s;
  }

  private recordAssign(t: SyntaxNode, target: string, s: State | null): void {
    if (this.run.variant) return;
    const seen = this.assignAt.get(t.from);
    if (seen) {
      // walked again (a loop): the paths join
      seen.state = join(seen.state, s);
      seen.inRaises ||= this.raises > 0;
      return;
    }
    const stmt = this.stmtNode ?? t;
    const info: AssignInfo = {
      from: t.from,
      to: t.to,
      target,
      targetSpan: { from: t.from, to: t.to },
      stmt: { from: stmt.from, to: stmt.to },
      run: this.run,
      inRaises: this.raises > 0,
      state: s,
    };
    this.assignAt.set(t.from, info);
    this.facts.assigns.push(info);
  }

  /** Names bound by for / with-as / except-as / del: unknown values. */
  private bindTargets(first: SyntaxNode | null, s: State | null, stopAtIn = false): State | null {
    for (let c = first; c; c = c.nextSibling) {
      if (c.name === 'in' || c.name === 'Body') break;
      if (c.name === 'VariableName' || c.name === 'MemberExpression') {
        const d = this.partsOf(c);
        if (d && s) s = setVar(s, d.join('.'), undefined);
      } else if (c.name === 'TupleExpression' || c.name === 'ArrayExpression' || c.name === 'ParenthesizedExpression')
        s = this.bindTargets(c.firstChild, s);
    }
    void stopAtIn;
    return s;
  }

  private ifStmt(n: SyntaxNode, s: State | null): State | null {
    const outs: Array<State | null> = [];
    let cur = s;
    let hasElse = false;
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.name === 'if' || c.name === 'elif') {
        const cond = c.nextSibling;
        if (cond && isExpression(cond)) cur = this.expr(cond, cur)[0];
      } else if (c.name === 'else') {
        hasElse = true;
        const body = c.nextSibling;
        if (body?.name === 'Body') outs.push(this.block(body, cur));
        c = body ?? c;
      } else if (c.name === 'Body') outs.push(this.block(c, cur));
    }
    if (!hasElse) outs.push(cur);
    return joinAll(outs);
  }

  /** Runs a loop body to a fixpoint of its head state; returns the head and the breaks. */
  private loop(
    entry: State | null,
    body: (head: State | null) => State | null,
  ): { head: State | null; breaks: Array<State | null> } {
    let head = entry;
    let frame: LoopFrame;
    for (let i = 0; ; i++) {
      frame = { breaks: [], continues: [] };
      this.loops.push(frame);
      const out = body(head);
      this.loops.pop();
      const next = joinAll([entry, out, ...frame.continues]);
      if (equalState(next, head)) break;
      // Not converging: assume nothing (an empty state claims nothing) and run once more.
      head = i >= MAX_LOOP ? (next ? emptyState() : null) : next;
      if (i > MAX_LOOP) break;
    }
    return { head, breaks: frame.breaks };
  }

  private whileStmt(n: SyntaxNode, s: State | null): State | null {
    const cond = n.getChild('while')?.nextSibling ?? null;
    const [body, elseBody] = n.getChildren('Body');
    const infinite = !!cond && /^(True|1)$/.test(slice(this.text, cond));
    let afterCond: State | null = null;
    const { head, breaks } = this.loop(s, (h) => {
      afterCond = cond && isExpression(cond) ? this.expr(cond, h)[0] : h;
      return this.block(body ?? null, afterCond);
    });
    const normal = infinite ? null : cond && isExpression(cond) ? this.expr(cond, head)[0] : head;
    const done = elseBody ? this.block(elseBody, normal) : normal;
    return joinAll([done, ...breaks]);
  }

  private forStmt(n: SyntaxNode, s: State | null): State | null {
    const inKw = n.getChild('in');
    const iter = inKw?.nextSibling ?? null;
    const [body, elseBody] = n.getChildren('Body');
    if (iter && isExpression(iter)) s = this.expr(iter, s)[0];
    const first = n.getChild('for')?.nextSibling ?? null;
    const { head, breaks } = this.loop(s, (h) => this.block(body ?? null, this.bindTargets(first, h)));
    const done = elseBody ? this.block(elseBody, head) : head;
    return joinAll([done, ...breaks]);
  }

  private tryStmt(n: SyntaxNode, s: State | null): State | null {
    const parts: Array<{ kw: string; type?: SyntaxNode; as?: SyntaxNode; body: SyntaxNode }> = [];
    let kw = '';
    let type: SyntaxNode | undefined;
    let as: SyntaxNode | undefined;
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.name === 'try' || c.name === 'except' || c.name === 'else' || c.name === 'finally') {
        kw = c.name;
        type = as = undefined;
      } else if (c.name === 'as') {
        as = c.nextSibling ?? undefined;
        c = c.nextSibling ?? c;
      } else if (c.name === 'Body') {
        parts.push({ kw, type, as, body: c });
      } else if (kw === 'except' && isExpression(c)) type = c;
    }
    const guard = parts.some(
      (p) =>
        p.kw === 'except' &&
        (!p.type || /ImportError|ModuleNotFoundError|AttributeError/.test(slice(this.text, p.type))),
    );
    if (guard) this.guarded++;
    this.tries.push([]);
    const tryPart = parts.find((p) => p.kw === 'try');
    const bodyOut = this.block(tryPart?.body ?? null, s);
    const points = this.tries.pop()!;
    // what the outer try sees: these points may raise out of here too
    for (const t of this.tries) t.push(...points);
    const raised = joinAll([s, ...points]);
    const outs: Array<State | null> = [];
    for (const p of parts.filter((x) => x.kw === 'except')) {
      let h = p.type ? this.expr(p.type, raised)[0] : raised;
      if (p.as && h) {
        const d = this.partsOf(p.as);
        if (d) h = setVar(h, d.join('.'), undefined);
      }
      outs.push(this.block(p.body, h));
    }
    if (guard) this.guarded--;
    const elsePart = parts.find((p) => p.kw === 'else');
    const normal = joinAll([elsePart ? this.block(elsePart.body, bodyOut) : bodyOut, ...outs]);
    const fin = parts.find((p) => p.kw === 'finally');
    if (!fin) return normal;
    // finally runs on every way out; its calls see all of them, what follows only the normal one
    this.block(fin.body, joinAll([normal, raised]));
    return this.block(fin.body, normal);
  }

  private withStmt(n: SyntaxNode, s: State | null): State | null {
    let raises = false;
    let suppress = false;
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.name === 'Body' || c.name === 'with' || c.name === ',') continue;
      if (c.name === 'as') {
        s = this.bindTargets(c.nextSibling, s);
        c = c.nextSibling ?? c;
        continue;
      }
      if (!isExpression(c)) continue;
      const callee = c.name === 'CallExpression' ? this.partsOf(c.firstChild)?.join('.') : undefined;
      if (callee && RAISES.test(callee)) raises = true;
      if (callee && SUPPRESS.test(callee)) suppress = true;
      s = this.expr(c, s)[0];
    }
    const body = n.getChild('Body');
    if (!raises && !suppress) return this.block(body, s);
    // The body raises somewhere (raises) or may stop anywhere (suppress): after the with, the state is that of
    // some statement's start inside it, never that of its completion (for raises).
    if (raises) this.raises++;
    this.tries.push([]);
    const out = this.block(body, s);
    const points = this.tries.pop()!;
    if (raises) this.raises--;
    return joinAll([s, ...points, ...(suppress && !raises ? [out] : [])]);
  }

  private matchStmt(n: SyntaxNode, s: State | null): State | null {
    const subject = n.getChild('match')?.nextSibling ?? null;
    if (subject && isExpression(subject)) s = this.expr(subject, s)[0];
    const outs: Array<State | null> = [s];
    for (const clause of n.getChild('MatchBody')?.getChildren('MatchClause') ?? [])
      outs.push(this.block(clause.getChild('Body'), s));
    return joinAll(outs);
  }

  /** A def or class: decorators and defaults run now; the body is walked as its own function later. */
  private definition(n: SyntaxNode, s: State | null, cls: string | undefined): State | null {
    const def = definitionOf(n);
    if (!def) return s;
    if (n.name === 'DecoratedStatement') for (const d of n.getChildren('Decorator')) s = this.exprs(d, s);
    const name = nameOf(this.text, def);
    if (def.name === 'FunctionDefinition') {
      const params = def.getChild('ParamList');
      for (let c = params?.firstChild ?? null; c; c = c.nextSibling)
        if (c.name === 'AssignOp' && c.nextSibling && isExpression(c.nextSibling)) s = this.expr(c.nextSibling, s)[0];
      this.pending.push({ def, outer: this.run.def && !cls ? this.scope : undefined, cls });
    } else {
      const args = def.getChild('ArgList');
      if (args) s = this.exprs(args, s);
      // class body: indexed (not followed); its methods are walked as functions of the class
      this.classBody(def, name);
    }
    return s && name ? setVar(s, name, undefined) : s;
  }

  private classBody(cls: SyntaxNode, name: string): void {
    const saved = this.run;
    for (const st of statements(cls.getChild('Body'))) {
      const d = definitionOf(st);
      if (d) this.definition(st, null, name);
      else this.stmt(st, null); // class attributes: indexed, not followed
    }
    this.run = saved;
  }

  // ---- Expressions.

  /** Evaluates an expression: the state after it and what it is. */
  expr(n: SyntaxNode, s: State | null): [State | null, Value] {
    switch (n.name) {
      case 'CallExpression':
        return this.call(n, s);
      case 'VariableName': {
        this.ref(n);
        const name = slice(this.text, n);
        const known = s?.vars.get(name);
        if (known || !s || this.scope.isLocal(name) || this.isModuleHead(name)) return [s, known ?? {}];
        // a global read here: an object of its own, so what this code does to it can be followed
        const id = `global:${name}`;
        if (!s.objs.has(id)) s = setObj(s, id, {});
        const fact = { objs: [id] };
        return [setVar(s, name, fact), fact];
      }
      case 'MemberExpression': {
        this.ref(n);
        const obj = n.firstChild;
        if (obj && obj.name !== 'VariableName' && obj.name !== 'MemberExpression') s = this.expr(obj, s)[0];
        else if (obj && obj.name === 'MemberExpression') s = this.subexprs(obj, s);
        for (let c = obj?.nextSibling ?? null; c; c = c.nextSibling)
          if (isExpression(c) && c.name !== 'PropertyName') s = this.expr(c, s)[0];
        const dotted = this.partsOf(n)?.join('.');
        return [s, (dotted && s?.vars.get(dotted)) || {}];
      }
      case 'ParenthesizedExpression': {
        let v: Value = {};
        for (let c = n.firstChild; c; c = c.nextSibling) if (isExpression(c)) [s, v] = this.expr(c, s);
        return [s, v];
      }
      case 'ConditionalExpression': {
        const kids = childExprs(n); // a if c else b
        if (kids.length !== 3) return [this.subexprs(n, s), {}];
        const [a, c, b] = kids;
        const sc = this.expr(c, s)[0];
        const [sa, va] = this.expr(a, sc);
        const [sb, vb] = this.expr(b, sc);
        return [join(sa, sb), joinValues(va, vb)];
      }
      case 'BinaryExpression': {
        const kids = childExprs(n);
        const op = n.getChild('and') ?? n.getChild('or');
        if (kids.length === 2 && op) {
          const [sl, vl] = this.expr(kids[0], s);
          const [sr, vr] = this.expr(kids[1], sl);
          return [join(sl, sr), joinValues(vl, vr)];
        }
        let vals: Value[] = [];
        for (const k of kids) {
          const [s2, v] = this.expr(k, s);
          s = s2;
          vals.push(v);
        }
        const arith = n.getChild('ArithOp');
        const plus = arith && slice(this.text, arith) === '+';
        vals = vals.length === 2 ? vals : [{}, {}];
        return [s, { kinds: plus ? addKinds(vals[0].kinds, vals[1].kinds) : ['other'] }];
      }
      case 'LambdaExpression':
        // the body runs later, if ever: indexed without a state
        for (let c = n.firstChild; c; c = c.nextSibling) if (isExpression(c)) this.expr(c, null);
        return [s, {}];
      case 'ArrayComprehensionExpression':
      case 'SetComprehensionExpression':
      case 'DictionaryComprehensionExpression':
      case 'ComprehensionExpression':
        return [this.comprehension(n, s), {}];
      case 'NamedExpression': {
        const target = n.firstChild;
        const value = target?.nextSibling?.nextSibling;
        if (!target || !value) return [this.subexprs(n, s), {}];
        const [s2, v] = this.expr(value, s);
        return [this.bindTarget(target, s2, v, value), v];
      }
      default:
        return [this.subexprs(n, s), {}];
    }
  }

  private subexprs(n: SyntaxNode, s: State | null): State | null {
    for (let c = n.firstChild; c; c = c.nextSibling) if (isExpression(c)) s = this.expr(c, s)[0];
    return s;
  }

  /** [elt for x in it if c ...]: the first iterable once, the rest zero or more times. */
  private comprehension(n: SyntaxNode, s: State | null): State | null {
    const kids = childExprs(n);
    const firstIn = n.getChild('in');
    const iter = firstIn?.nextSibling;
    if (iter && isExpression(iter)) s = this.expr(iter, s)[0];
    const rest = kids.filter((k) => k.from !== iter?.from);
    const once = (h: State | null) => {
      for (const k of rest) h = this.expr(k, h)[0];
      return h;
    };
    const s1 = once(s);
    return join(s, once(join(s, s1)));
  }

  /** Records a dotted reference to a library name (for the API rules). */
  private ref(n: SyntaxNode): void {
    if (this.run.variant) return;
    // only maximal chains: the parent is not a member access on this node
    const p = n.parent;
    if (p?.name === 'MemberExpression' && p.firstChild?.from === n.from && p.firstChild.to === n.to) return;
    // only references whose head can name a library (a cheap test before any parsing)
    let head0: SyntaxNode | null = n;
    while (head0 && head0.name === 'MemberExpression') head0 = head0.firstChild;
    if (head0?.name !== 'VariableName' || !this.isModuleHead(slice(this.text, head0))) return;
    // a loop body is walked more than once: one record per place
    const key = n.from * 2 ** 26 + (n.to - n.from);
    if (this.refSeen.has(key)) return;
    this.refSeen.add(key);
    const parts = this.partsOf(n);
    if (!parts) return;
    const head = this.scope.qualifyParts([parts[0]]);
    if (!head || !LIBRARY_HEADS.test(head.split('.')[0])) return;
    const ends: number[] = [];
    const qualified: Array<string | undefined> = [];
    let cur: SyntaxNode | null = n;
    const chain: SyntaxNode[] = [];
    while (cur && cur.name === 'MemberExpression') {
      chain.unshift(cur);
      cur = cur.firstChild;
    }
    if (cur) chain.unshift(cur);
    for (let i = 0; i < parts.length; i++) {
      ends.push(chain[i]?.to ?? n.to);
      qualified.push(this.scope.qualifyParts(parts.slice(0, i + 1)));
    }
    this.facts.refs.push({ from: n.from, to: n.to, parts, ends, qualified, guarded: this.guarded > 0 });
  }

  private call(n: SyntaxNode, s: State | null): [State | null, Value] {
    const callee = n.firstChild;
    const argList = n.getChild('ArgList');
    let receiver: Value | undefined;
    let calleeValue: Value = {};
    if (callee?.name === 'MemberExpression') {
      this.ref(callee);
      const obj = callee.firstChild;
      if (obj) [s, receiver] = this.expr(obj, s);
    } else if (callee) [s, calleeValue] = this.expr(callee, s);
    const { args, keywords } = readArgs(this.text, argList);
    const values: Value[] = [];
    const kwValues = new Map<string, Value>();
    for (let c = argList?.firstChild ?? null; c; c = c.nextSibling) {
      if (!isExpression(c)) continue;
      if (c.name === 'VariableName' && c.nextSibling?.name === 'AssignOp') continue; // keyword name
      const [s2, v] = this.expr(c, s);
      s = s2;
      // (lezer hands out a new node object per visit: compare positions, not identities)
      if (args.some((a) => a.from === c.from)) values.push(v);
      else for (const [k, node] of keywords) if (node.from === c.from) kwValues.set(k, v);
    }
    const parts = this.partsOf(callee);
    // a chained call (`f(x).module()`) starts where its inner call starts: key by both ends
    const key = n.from * 2 ** 26 + (n.to - n.from);
    let info = this.byOffset.get(key);
    if (!info) {
      const stmt = this.stmtNode ?? n;
      info = {
        node: n,
        from: n.from,
        to: n.to,
        callee: parts,
        calleeSpan: { from: callee?.from ?? n.from, to: callee?.to ?? n.from },
        method:
          callee?.name === 'MemberExpression' && callee.lastChild?.name === 'PropertyName'
            ? slice(this.text, callee.lastChild)
            : undefined,
        qualified: parts && this.isModuleHead(parts[0]) ? canonical(this.scope.qualifyParts(parts)) : undefined,
        args: args.map((a) => argOf(this.text, a)),
        keywords: Object.fromEntries([...keywords].map(([k, v]) => [k, argOf(this.text, v)])),
        stmt: { from: stmt.from, to: stmt.to },
        indent: indentAt(this.text, stmt.from),
        run: this.run,
        inRaises: this.raises > 0,
        state: s,
      };
      this.byOffset.set(key, info);
      if (!this.run.variant || parts?.[0] === 'self') this.facts.calls.push(info);
    } else {
      info.state = join(info.state, s);
      info.inRaises ||= this.raises > 0;
    }
    return applyCall(this, info, s, { receiver, callee: calleeValue, args: values, keywords: kwValues });
  }
}

const NOT_EXPRESSION =
  /^(\(|\)|\[|\]|\{|\}|,|:|;|\.|=|AssignOp|UpdateOp|ArithOp|CompareOp|BitOp|LogicOp|if|else|elif|for|in|not|and|or|is|lambda|await|yield|from|as|async|Comment|⚠|PropertyName|TypeDef|Body|ParamList|Decorator|At|def|class|return|raise|del|assert|import|global|nonlocal|pass|break|continue|while|with|try|except|finally|match|case|print|exec)$/;

function isExpression(n: SyntaxNode): boolean {
  return !NOT_EXPRESSION.test(n.name);
}

function childExprs(n: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = n.firstChild; c; c = c.nextSibling) if (isExpression(c)) out.push(c);
  return out;
}

function joinValues(a: Value, b: Value): Value {
  const u = <T>(x?: T[], y?: T[]) => (x && y ? [...new Set([...x, ...y])] : undefined);
  return { objs: u(a.objs, b.objs), kinds: u(a.kinds, b.kinds) };
}

/** conv2d + x is what the conv+add(+relu) pattern matches; anything else added is just "other". */
export function addKinds(a?: string[], b?: string[]): string[] {
  return a?.includes('conv2d') || b?.includes('conv2d') ? ['convadd'] : ['other'];
}
