// What one unit (a top-level def or class) tells the others, read from its syntax: each class's module
// attributes (`self.relu = nn.ReLU()`), bases and methods; each function's effect on the train/eval mode of
// its parameters (`def evaluate(model): model.eval()`), what it returns (`def conv3x3(): return nn.Conv2d()`,
// `def load_model(): m = Net(); ...; return m`) and the conv+bn fusions it runs. Offsets are kept relative to
// the unit (Anchored), so a summary stays the same when the unit only moves.
import type { SyntaxNode } from '@lezer/common';
import { canonical } from './names';
import type { Anchored } from './findings';
import { LocalScope } from './scope';
import type { Mode } from './state';
import { definitionOf, dottedParts, intLiteral, nameOf, paramsOf, readArgs, slice, statements } from './syntax';

/** What a module attribute or a call's result is. */
export type Desc =
  | { m: string; in?: number } // a torch.nn class: Conv2d, ReLU, ...; `in`: nn.Linear's literal in_features
  | { seq: Desc[] } // nn.Sequential(...)
  | { list: Desc[] } // nn.ModuleList([...])
  | { call: string } // an in-file class or function, resolved in the document context
  | null;

export interface AttrInfo {
  desc: Desc;
  site: Anchored;
}

export type Step =
  | { mode: Mode; site: Anchored }
  | { unknown: true }
  | { call: string; arg: number; nested: boolean } // 'fn:<name>' or 'self:<method>'
  | { exit: true }
  | { rebound: true };

export interface FuseInfo {
  site: Anchored;
  groups: string;
  /** Index of the parameter fused (0 is self for methods). */
  param: number;
}

export interface FnSummary {
  name: string;
  params: string[];
  returns?: Desc;
  /** Mode effect per parameter name. */
  effects: Record<string, Step[]>;
  /** Unconditional fuse_modules (not _qat) over a group with a BatchNorm, on a parameter. */
  fuse: FuseInfo[];
  /** Unconditional calls `self.<m>(...)` / `<fn>(<param 0>, ...)`, for fusions reached through them. */
  fuseCalls: Array<{ call: string; param: number }>;
  /** `m = SomeClass(...); ...; return m`: the class and what happens to m's mode before it returns. */
  returnsObj?: { cls: string; site: Anchored; steps: Step[] };
  /** Every return gives what a convert call made (`return convert(prepared)`). */
  returnsConverted?: 'eager' | 'fx' | 'pt2e';
}

export interface ClassSummary {
  name: string;
  site: Anchored;
  bases: string[];
  /** A base resolves to torch.nn.Module (or another torch.nn class). */
  torchBase: boolean;
  attrs: Record<string, AttrInfo>;
  methods: Record<string, FnSummary>;
}

export interface UnitSummary {
  classes: ClassSummary[];
  functions: FnSummary[];
  /** torch.export.export calls in the unit, with strict=True and without. */
  exports: { strict: number; loose: number };
}

export const NEUTRAL_METHODS = new Set([
  'parameters',
  'named_parameters',
  'buffers',
  'named_buffers',
  'children',
  'named_children',
  'modules',
  'named_modules',
  'state_dict',
  'load_state_dict',
  'to',
  'cpu',
  'cuda',
  'float',
  'half',
  'double',
  'bfloat16',
  'type',
  'zero_grad',
  'requires_grad_',
  'register_forward_hook',
  'register_forward_pre_hook',
  'register_full_backward_hook',
  'register_buffer',
  'register_parameter',
  'add_module',
  'get_submodule',
  'get_parameter',
  'forward',
  'share_memory',
  'extra_repr',
  'print_readable',
  'graph',
  'recompile',
  'module',
]);

const BUILTINS = new Set(
  'print len isinstance issubclass type id repr str int float bool hash getattr hasattr setattr sum list dict tuple set zip enumerate range sorted reversed max min iter next vars dir callable super format round abs any all map filter'.split(
    ' ',
  ),
);

/** Calls that never change the train/eval mode of a module passed to them. */
export function neutralCall(qualified: string | undefined, bare: string | undefined): boolean {
  if (bare && BUILTINS.has(bare)) return true;
  if (!qualified) return false;
  if (/\.(move_exported_model_to_eval|move_exported_model_to_train|allow_exported_model_train_eval)$/.test(qualified))
    return false;
  return /^(torch|torchao|copy|numpy|np|math|logging|os|json|time|tqdm|pathlib|random|sys|pickle|warnings|itertools|functools)(\.|$)/.test(
    qualified,
  );
}

export const MODE_MOVERS: Record<string, Mode> = {
  'torchao.quantization.pt2e.move_exported_model_to_eval': 'eval',
  'torchao.quantization.pt2e.move_exported_model_to_train': 'train',
  'torchao.quantization.pt2e.utils.move_exported_model_to_eval': 'eval',
  'torchao.quantization.pt2e.utils.move_exported_model_to_train': 'train',
};

const FUSE = new Set(['torch.ao.quantization.fuse_modules', 'torch.ao.quantization.fuse_modules.fuse_modules']);

/** A group list that names a BatchNorm: `[["conv1", "bn1", "relu1"]]`. Names are the only evidence. */
export const groupsHaveBatchNorm = (groups: string) => /['"][^'"]*(bn|batch_?norm|norm)[^'"]*['"]/i.test(groups);

const NESTED_DEF = new Set(['FunctionDefinition', 'ClassDefinition', 'LambdaExpression']);

/** What the mode of a torch.nn class's constructor call or an in-file call is. */
export function describe(text: string, node: SyntaxNode | null, scope: LocalScope): Desc {
  if (node?.name !== 'CallExpression') return null;
  const parts = dottedParts(text, node.firstChild);
  if (!parts) return null;
  const q = canonical(scope.qualifyParts(parts));
  const { args } = readArgs(text, node.getChild('ArgList'));
  if (q && /^torch\.(ao\.)?nn\.([\w.]+\.)?\w+$/.test(q)) {
    const cls = q.slice(q.lastIndexOf('.') + 1);
    if (cls === 'Sequential') return { seq: args.map((a) => describe(text, a, scope)) };
    if (cls === 'ModuleList') {
      const list = args[0];
      return {
        list: list?.name === 'ArrayExpression' ? statementsOfList(list).map((a) => describe(text, a, scope)) : [],
      };
    }
    if (cls === 'Linear') {
      const { keywords } = readArgs(text, node.getChild('ArgList'));
      const first = args[0] ?? keywords.get('in_features');
      const n = first ? intLiteral(slice(text, first)) : undefined;
      if (n !== undefined) return { m: cls, in: n };
    }
    return { m: cls };
  }
  if (parts.length === 1 && !scope.isLocal(parts[0]) && scope.module.variables.has(parts[0])) return { call: parts[0] };
  return null;
}

const statementsOfList = (n: SyntaxNode) => {
  const out: SyntaxNode[] = [];
  for (let c = n.firstChild; c; c = c.nextSibling) if (!/^[[\],]$/.test(c.name)) out.push(c);
  return out;
};

interface Ctx {
  text: string;
  anchor: string;
  base: number;
}
const site = (c: Ctx, offset: number): Anchored => ({ anchor: c.anchor, rel: offset - c.base });

/** The mode steps a function body takes on `target`, in order (see FnSummary.effects). */
function effectSteps(c: Ctx, body: SyntaxNode | null, target: string, scope: LocalScope): Step[] {
  const steps: Step[] = [];
  for (const s of statements(body)) {
    steps.push(...effectStepsOf(c, s, target, scope));
    if (s.name === 'ReturnStatement') break;
    if (
      s.name === 'AssignStatement' &&
      s.firstChild?.name === 'VariableName' &&
      slice(c.text, s.firstChild) === target
    ) {
      steps.push({ rebound: true });
      break;
    }
  }
  return steps;
}

/** The mode-relevant uses of `target` inside one statement, in evaluation order. */
function scanUses(
  c: Ctx,
  stmt: SyntaxNode,
  target: string,
  scope: LocalScope,
  nested: boolean,
  steps: Step[],
  skip?: SyntaxNode | null,
): void {
  const cursor = stmt.cursor();
  const visit = (): void => {
    const n = cursor.node;
    if (skip && n.from === skip.from && n.to === skip.to && n.name === skip.name) return;
    if (NESTED_DEF.has(n.name)) return;
    if (nested && n.name === 'ReturnStatement' && n.from !== stmt.from) {
      // an early return: the function may end here with the mode as it is
      if (cursor.firstChild()) {
        do visit();
        while (cursor.nextSibling());
        cursor.parent();
      }
      steps.push({ exit: true });
      return;
    }
    if (cursor.firstChild()) {
      do visit();
      while (cursor.nextSibling());
      cursor.parent();
    }
    if (n.name === 'CallExpression') classify(c, n, target, scope, nested, steps);
    else if (
      nested &&
      n.name === 'AssignStatement' &&
      n.firstChild?.name === 'VariableName' &&
      slice(c.text, n.firstChild) === target
    )
      steps.push({ unknown: true }); // rebound on some path
  };
  visit();
}

function classify(c: Ctx, call: SyntaxNode, target: string, scope: LocalScope, nested: boolean, steps: Step[]): void {
  const callee = call.firstChild;
  const parts = dottedParts(c.text, callee);
  const { args, keywords } = readArgs(c.text, call.getChild('ArgList'));
  const mode = (m: Mode): void => {
    steps.push(nested ? { unknown: true } : { mode: m, site: site(c, call.from) });
  };
  if (parts && parts.length >= 2 && parts.slice(0, -1).join('.') === target) {
    const method = parts[parts.length - 1];
    if (method === 'eval' && !args.length) return mode('eval');
    if (method === 'train') {
      const a = args[0] ?? keywords.get('mode');
      return mode(a && slice(c.text, a) === 'False' ? 'eval' : 'train');
    }
    if (NEUTRAL_METHODS.has(method)) return;
    if (
      method === 'apply' &&
      args[0] &&
      neutralCall(canonical(scope.qualifyParts(dottedParts(c.text, args[0]) ?? [])), undefined)
    )
      return;
    if (target === 'self') {
      steps.push({ call: `self:${method}`, arg: 0, nested });
      return;
    }
    steps.push({ unknown: true });
    return;
  }
  if (parts && parts.join('.') === target) return; // model(x)
  const all = [...args, ...keywords.values()];
  const index = all.findIndex((a) => dottedParts(c.text, a)?.join('.') === target);
  if (index < 0) return;
  const q = parts ? canonical(scope.qualifyParts(parts)) : undefined;
  if (q && MODE_MOVERS[q]) return mode(MODE_MOVERS[q]);
  if (neutralCall(q, parts?.length === 1 ? parts[0] : undefined)) return;
  if (parts?.length === 1 && !scope.isLocal(parts[0]) && scope.module.variables.has(parts[0])) {
    steps.push({ call: `fn:${parts[0]}`, arg: index < args.length ? index : -1, nested });
    return;
  }
  steps.push({ unknown: true });
}

function fnSummary(c: Ctx, def: SyntaxNode, scope: LocalScope, isMethod: boolean): FnSummary {
  const params = paramsOf(c.text, def);
  const body = def.getChild('Body');
  const effects: Record<string, Step[]> = {};
  for (const p of params) effects[p] = effectSteps(c, body, p, scope);
  const fuse: FuseInfo[] = [];
  const fuseCalls: FnSummary['fuseCalls'] = [];
  let returns: Desc | undefined;
  let returnsAll = true;
  const returned = new Set<string>();
  for (const s of statements(body)) {
    if (s.name === 'ExpressionStatement' && s.firstChild?.name === 'CallExpression') {
      const call = s.firstChild;
      const parts = dottedParts(c.text, call.firstChild);
      const { args, keywords } = readArgs(c.text, call.getChild('ArgList'));
      const first = args[0] ? dottedParts(c.text, args[0])?.join('.') : undefined;
      const q = parts ? canonical(scope.qualifyParts(parts)) : undefined;
      const groups = args[1] ?? keywords.get('modules_to_fuse');
      const param = first ? params.indexOf(first) : -1;
      if (q && FUSE.has(q) && param >= 0 && groups && groupsHaveBatchNorm(slice(c.text, groups)))
        fuse.push({ site: site(c, call.from), groups: slice(c.text, groups), param });
      else if (isMethod && parts?.length === 2 && parts[0] === 'self' && params[0] === 'self')
        fuseCalls.push({ call: `self:${parts[1]}`, param: 0 });
      else if (parts?.length === 1 && param >= 0 && scope.module.variables.has(parts[0]) && !scope.isLocal(parts[0]))
        fuseCalls.push({ call: `fn:${parts[0]}`, param });
    }
  }
  // Returns: every `return` in the body (not in nested defs).
  const returnValues: SyntaxNode[] = [];
  def
    .getChild('Body')
    ?.cursor()
    .iterate((n) => {
      if (NESTED_DEF.has(n.name) && n.from !== def.from) return false;
      if (n.name === 'ReturnStatement') {
        const v = n.node.lastChild;
        if (v && v.name !== 'return') returnValues.push(v);
        else returnsAll = false;
      }
      return undefined;
    });
  for (const v of returnValues) {
    const d = describe(c.text, v, scope);
    if (returns === undefined) returns = d;
    else if (JSON.stringify(returns) !== JSON.stringify(d)) returns = null;
    if (v.name === 'VariableName') returned.add(slice(c.text, v));
  }
  const summary: FnSummary = { name: nameOf(c.text, def), params, effects, fuse, fuseCalls };
  const kinds = returnValues.map((v) => convertedBy(c, v, body, scope));
  if (returnsAll && kinds.length && kinds.every((k) => k && k === kinds[0])) summary.returnsConverted = kinds[0];
  if (returns && returnsAll) summary.returns = returns;
  if (returned.size === 1 && returnsAll && returnValues.length > 0) {
    const name = [...returned][0];
    const ctor = statements(body).filter(
      (s) =>
        s.name === 'AssignStatement' && s.firstChild?.name === 'VariableName' && slice(c.text, s.firstChild) === name,
    );
    const value = ctor.length === 1 ? ctor[0].firstChild?.nextSibling?.nextSibling : undefined;
    const desc = value ? describe(c.text, value, scope) : null;
    if (desc && 'call' in desc && !params.includes(name)) {
      // what the statements after the constructor do to its mode
      const rest = statements(body);
      const steps: Step[] = [];
      for (const s of rest.slice(rest.indexOf(ctor[0]) + 1)) steps.push(...effectStepsOf(c, s, name, scope));
      summary.returnsObj = { cls: desc.call, site: site(c, value!.from), steps };
    }
  }
  return summary;
}

const CONVERTERS: Record<string, 'eager' | 'fx' | 'pt2e'> = {
  'torch.ao.quantization.convert': 'eager',
  'torch.ao.quantization.quantize': 'eager',
  'torch.ao.quantization.quantize_qat': 'eager',
  'torch.ao.quantization.quantize_fx.convert_fx': 'fx',
  'torchao.quantization.pt2e.quantize_pt2e.convert_pt2e': 'pt2e',
};

/** What convert call made a returned value: the call itself, or the one assignment of a returned name. */
function convertedBy(
  c: Ctx,
  v: SyntaxNode,
  body: SyntaxNode | null,
  scope: LocalScope,
): 'eager' | 'fx' | 'pt2e' | undefined {
  let value: SyntaxNode | null | undefined = v;
  if (v.name === 'VariableName') {
    const name = slice(c.text, v);
    const assigns: SyntaxNode[] = [];
    body?.cursor().iterate((n) => {
      if (NESTED_DEF.has(n.name)) return false;
      if (
        n.name === 'AssignStatement' &&
        n.node.firstChild?.name === 'VariableName' &&
        slice(c.text, n.node.firstChild) === name
      )
        assigns.push(n.node);
      return undefined;
    });
    value = assigns.length === 1 ? assigns[0].firstChild?.nextSibling?.nextSibling : undefined;
  }
  if (value?.name !== 'CallExpression') return undefined;
  const parts = dottedParts(c.text, value.firstChild);
  const q = parts ? canonical(scope.qualifyParts(parts)) : undefined;
  return q ? CONVERTERS[q] : undefined;
}

/** effectSteps for a single statement. */
function effectStepsOf(c: Ctx, s: SyntaxNode, target: string, scope: LocalScope): Step[] {
  const steps: Step[] = [];
  const simple = /^(ExpressionStatement|AssignStatement|UpdateStatement|ReturnStatement)$/.test(s.name);
  if (NESTED_DEF.has(definitionOf(s)?.name ?? '')) return steps;
  if (s.name === 'WithStatement' && !/raises|assertRaises|suppress/i.test(slice(c.text, s).split('\n')[0])) {
    scanUses(c, s, target, scope, false, steps, s.getChild('Body'));
    for (const inner of statements(s.getChild('Body'))) steps.push(...effectStepsOf(c, inner, target, scope));
    return steps;
  }
  scanUses(c, s, target, scope, !simple, steps);
  if (s.name === 'ReturnStatement') steps.push({ exit: true });
  return steps;
}

/** `self.<attr> = <value>` anywhere in __init__ (the last description wins if they agree, else unknown). */
function attrsOf(c: Ctx, init: SyntaxNode | undefined, scope: LocalScope): Record<string, AttrInfo> {
  const attrs: Record<string, AttrInfo> = {};
  if (!init) return attrs;
  const seen = new Map<string, string>();
  init
    .getChild('Body')
    ?.cursor()
    .iterate((n) => {
      if (NESTED_DEF.has(n.name)) return false;
      if (n.name !== 'AssignStatement') return undefined;
      const target = n.node.firstChild;
      const value = target?.nextSibling?.nextSibling;
      const parts = dottedParts(c.text, target);
      if (!parts || parts.length !== 2 || parts[0] !== 'self' || target?.nextSibling?.name !== 'AssignOp')
        return undefined;
      const desc = value && !value.nextSibling ? describe(c.text, value, scope) : null;
      const key = JSON.stringify(desc);
      const attr = parts[1];
      if (seen.has(attr) && seen.get(attr) !== key) attrs[attr] = { desc: null, site: site(c, n.from) };
      else attrs[attr] = { desc, site: site(c, n.from) };
      seen.set(attr, key);
      return undefined;
    });
  return attrs;
}

/** Summaries of a unit: its classes (nested ones too) and its top-level function. */
export function summarize(text: string, unit: SyntaxNode, anchor: string, module: LocalScope['module']): UnitSummary {
  const c: Ctx = { text, anchor, base: unit.from };
  const out: UnitSummary = { classes: [], functions: [], exports: { strict: 0, loose: 0 } };
  if (slice(text, unit).includes('export'))
    unit.cursor().iterate((n) => {
      if (n.name === 'CallExpression') countExport(text, n.node, (p) => module.qualify(p), out.exports);
    });
  const visitClass = (cls: SyntaxNode, outer?: LocalScope) => {
    const methods: Record<string, FnSummary> = {};
    const defs = new Map<string, SyntaxNode>();
    const nested: SyntaxNode[] = [];
    for (const s of statements(cls.getChild('Body'))) {
      const d = definitionOf(s);
      if (d?.name === 'FunctionDefinition') defs.set(nameOf(text, d), d);
      else if (d?.name === 'ClassDefinition') nested.push(d);
    }
    const scopes = new Map<string, LocalScope>();
    for (const [name, d] of defs) {
      const scope = LocalScope.ofFunction(text, d, module, outer);
      scopes.set(name, scope);
      methods[name] = fnSummary(c, d, scope, true);
    }
    const bases: string[] = [];
    let torchBase = false;
    for (const a of readArgs(text, cls.getChild('ArgList')).args) {
      const parts = dottedParts(text, a);
      if (!parts) continue;
      const q = canonical(module.qualify(parts));
      if (q && /^torch\.(ao\.)?nn\./.test(q)) torchBase = true;
      bases.push(parts.join('.'));
    }
    const init = defs.get('__init__');
    out.classes.push({
      name: nameOf(text, cls),
      site: site(c, cls.from),
      bases,
      torchBase,
      attrs: attrsOf(c, init, scopes.get('__init__') ?? new LocalScope(module)),
      methods,
    });
    for (const n of nested) visitClass(n, outer);
  };
  const def = definitionOf(unit);
  if (def?.name === 'ClassDefinition') visitClass(def);
  else if (def?.name === 'FunctionDefinition')
    out.functions.push(fnSummary(c, def, LocalScope.ofFunction(text, def, module), false));
  return out;
}

/** Counts a torch.export.export call, with strict=True or without. */
export function countExport(
  text: string,
  call: SyntaxNode,
  qualify: (parts: string[]) => string | undefined,
  out: { strict: number; loose: number },
): void {
  const parts = dottedParts(text, call.firstChild);
  if (!parts || parts[parts.length - 1] !== 'export') return;
  if (canonical(qualify(parts)) !== 'torch.export.export') return;
  const strict = readArgs(text, call.getChild('ArgList')).keywords.get('strict');
  if (strict && slice(text, strict) === 'True') out.strict++;
  else out.loose++;
}
