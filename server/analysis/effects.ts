// What a call does to the abstract state: train/eval mode changes (.train(), .eval(), torchao's
// move_exported_model_to_*, in-file helpers such as `def evaluate(model): model.eval()`), the objects it
// makes (a module constructed in train mode, copies made by deepcopy / prepare / convert / fuse, torch.export
// graphs), and the producers of a forward's values (which self.<module> calls follow a conv). A module
// passed to a function the analysis does not know may have its mode changed there: it becomes unknown.
import type { Effect } from './context';
import { addCall, mergedFact, setObj, updateObjs, type Mode, type ModeFact, type ObjFact, type State } from './state';
import { MODE_MOVERS, NEUTRAL_METHODS, neutralCall, type Desc } from './summaries';
import type { CallInfo, Walker } from './walker';

/** What an expression is: the objects it may be, and (in forward) what produced it. */
export interface Value {
  objs?: string[];
  kinds?: string[];
}

export interface CallValues {
  receiver?: Value;
  callee: Value;
  args: Value[];
  keywords: Map<string, Value>;
}

const SELF_RETURNING = new Set([
  'to',
  'cpu',
  'cuda',
  'float',
  'half',
  'double',
  'bfloat16',
  'requires_grad_',
  'train',
  'eval',
]);
const TORCHVISION_MODEL = /^torchvision\.models\.(quantization\.|detection\.|segmentation\.|video\.)?[a-z]\w*$/;
const PT2E = 'torchao.quantization.pt2e.quantize_pt2e.';

const modeFact = (mode: Mode, site: number): ModeFact => ({
  train: mode === 'train' ? [site] : [],
  eval: mode === 'eval' ? [site] : [],
  unknown: false,
});

function setMode(s: State, ids: string[] | undefined, mode: ModeFact | undefined): State {
  return ids?.length ? updateObjs(s, ids, (o) => ({ ...o, mode })) : s;
}

function applyEffect(w: Walker, s: State, ids: string[] | undefined, effect: Effect): State {
  if (effect.kind === 'none' || !ids?.length) return s;
  if (effect.kind === 'unknown') return setMode(s, ids, undefined);
  return setMode(s, ids, modeFact(effect.mode, w.foreignSite(effect.site)));
}

function fresh(s: State, info: CallInfo, fact: ObjFact): [State, Value] {
  const id = `@${info.from}:${info.to}`;
  return [setObj(s, id, fact), { objs: [id] }];
}

/** The producer of a module call's output, from the module's description and its input's producer. */
function produced(desc: Desc | { cls: string }, input: string[] | undefined): string[] | undefined {
  if (!desc) return undefined;
  if ('m' in desc) {
    if (desc.m === 'Conv2d') return ['conv2d'];
    if (desc.m === 'Conv1d') return ['conv1d'];
    // conv -> bn -> act is the conv+bn+unary pattern; Identity leaves no node in the exported graph
    if (desc.m === 'BatchNorm2d') return input?.includes('conv2d') ? ['conv2d'] : ['other'];
    if (desc.m === 'Identity') return input;
    return ['other'];
  }
  if ('seq' in desc) {
    let k = input;
    for (const item of desc.seq) k = produced(item, k);
    return k;
  }
  return ['other'];
}

export function applyCall(w: Walker, info: CallInfo, s: State | null, v: CallValues): [State | null, Value] {
  const first = v.args[0];
  info.argKinds = first?.kinds;
  if (!s) return [s, {}];
  return transfer(w, info, s, v);
}

function transfer(w: Walker, info: CallInfo, s: State, v: CallValues): [State | null, Value] {
  const first = v.args[0];
  const parts = info.callee;
  const q = info.qualified;
  const site = info.from;
  const ctx = w.ctx;
  const text = (k: string) => info.keywords[k]?.text;

  // ---- Methods: receiver.method(...) (the receiver a variable or any expression, not a module)
  if (v.receiver && info.method && !(parts && w.isModuleHead(parts[0]))) {
    const method = info.method;
    const recv = v.receiver.objs;
    // self.<attr>(...) inside a method: a submodule call, or one of the class's own methods
    if (parts?.length === 2 && parts[0] === 'self' && w.run.selfCls) {
      const own = ctx.method(w.run.selfCls, method);
      if (own) return [applySummary(w, s, own.summary, own.owner.name, recv, v), {}];
      const attr = ctx.attr(w.run.selfCls, method);
      if (attr) {
        info.selfAttr = method;
        const before = s.calls.get(method);
        if (before?.length) info.prior = [...new Set([...(info.prior ?? []), ...before])];
        const kinds = produced(ctx.resolveDesc(attr.info.desc), first?.kinds);
        return [addCall(s, method, site), { kinds }];
      }
    }
    if (method === 'train' || method === 'eval') {
      const arg = info.args[0]?.text ?? text('mode');
      const mode: Mode = method === 'eval' || arg === 'False' ? 'eval' : 'train';
      if (recv?.length) {
        const facts = recv.map((id) => s.objs.get(id));
        // an exported graph module refuses .train()/.eval(): the call raises
        if (facts.every((f) => f?.exported && !f.trainEvalAllowed)) return [null, {}];
        s = setMode(s, recv, modeFact(mode, site));
      }
      return [s, { objs: recv }];
    }
    if (SELF_RETURNING.has(method)) return [s, { objs: recv }];
    if (method === 'module' && recv?.length && recv.every((id) => s.objs.get(id)?.program)) {
      const src = mergedFact(s, recv);
      return fresh(s, info, {
        exported: true,
        ...(src.mode ? { mode: src.mode } : {}),
        ...(src.cls ? { cls: src.cls } : {}),
      });
    }
    if (NEUTRAL_METHODS.has(method)) return [havocArgs(s, v), {}];
    if (method === 'apply') {
      const fn = info.args[0]?.dotted;
      const fq = fn ? w.scope.qualifyParts(fn.split('.')) : undefined;
      return [neutralCall(fq, undefined) ? s : setMode(s, recv, undefined), {}];
    }
    // an in-file method of the receiver's class
    const cls = recv?.length ? recv.map((id) => s.objs.get(id)?.cls) : undefined;
    if (cls?.[0] && cls.every((c) => c === cls[0])) {
      const m = ctx.method(cls[0], method);
      if (m) return [applySummary(w, s, m.summary, m.owner.name, recv, v), {}];
    }
    if (q && neutralCall(q, undefined)) return [s, {}];
    // unknown method: it may change the receiver's mode, and that of modules passed to it
    return [havocArgs(setMode(s, recv, undefined), v), {}];
  }

  // ---- Functions
  const bare = parts?.length === 1 ? parts[0] : undefined;
  if (bare && !w.scope.isLocal(bare)) {
    const cls = ctx.classes.get(bare);
    if (cls && !w.scope.table.bindings.has(bare)) {
      // nn.Module subclasses start in train mode
      return fresh(s, info, { cls: bare, ...(ctx.isModuleClass(bare) ? { mode: modeFact('train', site) } : {}) });
    }
    const fn = ctx.functions.get(bare);
    if (fn && !w.scope.table.bindings.has(bare)) {
      s = applySummary(w, s, fn, undefined, undefined, v);
      if (fn.returnsObj && ctx.isModuleClass(fn.returnsObj.cls)) {
        const made = ctx.fold(fn.returnsObj.steps, undefined, 0, {
          kind: 'set',
          mode: 'train',
          site: fn.returnsObj.site,
        });
        const mode = made.kind === 'set' ? modeFact(made.mode, w.foreignSite(made.site)) : undefined;
        return fresh(s, info, { cls: fn.returnsObj.cls, ...(mode ? { mode } : {}) });
      }
      if (fn.returnsConverted) return fresh(s, info, { converted: { kind: fn.returnsConverted, at: [site] } });
      return [s, {}];
    }
  }
  if (!q) return [havocArgs(s, v), {}];
  const arg0 = first?.objs ?? v.keywords.get('model')?.objs ?? v.keywords.get('module')?.objs;
  const inplace = text('inplace') === 'True';
  if (MODE_MOVERS[q]) return [setMode(s, arg0, modeFact(MODE_MOVERS[q], site)), {}];
  if (q.endsWith('.allow_exported_model_train_eval'))
    return [arg0?.length ? updateObjs(s, arg0, (o) => ({ ...o, trainEvalAllowed: true })) : s, {}];
  const src = mergedFact(s, arg0);
  const keep = (extra: ObjFact): ObjFact => ({
    ...(src.mode ? { mode: src.mode } : {}),
    ...(src.cls ? { cls: src.cls } : {}),
    ...extra,
  });
  switch (q) {
    case 'copy.deepcopy':
    case 'copy.copy':
      return fresh(s, info, src);
    case 'torch.export.export':
    case 'torch.export.export_for_training':
      return fresh(s, info, keep({ program: true }));
    case 'torch._export.capture_pre_autograd_graph':
      return fresh(s, info, keep({ exported: true }));
    case `${PT2E}prepare_pt2e`:
    case `${PT2E}prepare_qat_pt2e`:
      return fresh(s, info, keep({ exported: true, ...(src.trainEvalAllowed ? { trainEvalAllowed: true } : {}) }));
    case `${PT2E}convert_pt2e`:
      return fresh(s, info, keep({ exported: true, converted: { kind: 'pt2e', at: [site] } }));
    case 'torch.ao.quantization.prepare':
    case 'torch.ao.quantization.prepare_qat':
      if (inplace && arg0?.length) return [updateObjs(s, arg0, (o) => ({ ...o, prepared: [site] })), { objs: arg0 }];
      return fresh(s, info, keep({ prepared: [site] }));
    case 'torch.ao.quantization.quantize_fx.prepare_fx':
    case 'torch.ao.quantization.quantize_fx.prepare_qat_fx':
      return fresh(s, info, keep({}));
    case 'torch.ao.quantization.convert':
      if (inplace && arg0?.length)
        return [updateObjs(s, arg0, (o) => ({ ...o, converted: { kind: 'eager', at: [site] } })), { objs: arg0 }];
      return fresh(s, info, keep({ converted: { kind: 'eager', at: [site] } }));
    case 'torch.ao.quantization.quantize':
    case 'torch.ao.quantization.quantize_qat':
      return fresh(s, info, { ...(src.cls ? { cls: src.cls } : {}), converted: { kind: 'eager', at: [site] } });
    case 'torch.ao.quantization.quantize_fx.convert_fx':
      return fresh(s, info, keep({ converted: { kind: 'fx', at: [site] } }));
    case 'torch.ao.quantization.fuse_modules':
    case 'torch.ao.quantization.fuse_modules_qat':
    case 'torch.ao.quantization.fuse_modules.fuse_modules':
    case 'torch.ao.quantization.fuse_modules.fuse_modules_qat':
      if (inplace) return [s, { objs: arg0 }];
      return fresh(s, info, keep({}));
  }
  if (TORCHVISION_MODEL.test(q)) return fresh(s, info, { mode: modeFact('train', site) });
  if (neutralCall(q, bare)) return [s, {}];
  return [havocArgs(s, v), {}];
}

/** A call the analysis cannot see into: any module passed to it may come back in another mode. */
function havocArgs(s: State, v: CallValues): State {
  for (const a of [...v.args, ...v.keywords.values()]) if (a.objs?.length) s = setMode(s, a.objs, undefined);
  return s;
}

/** An in-file function or method: its summary's effect on each parameter's module. */
function applySummary(
  w: Walker,
  s: State,
  fn: { params: string[]; name: string; effects: Record<string, unknown> } & Parameters<Walker['ctx']['effect']>[0],
  owner: string | undefined,
  receiver: string[] | undefined,
  v: CallValues,
): State {
  const params = fn.params;
  const bound: Array<[string, string[] | undefined]> = [];
  let i = 0;
  if (owner && receiver) bound.push([params[i++], receiver]);
  for (const a of v.args) bound.push([params[i++], a.objs]);
  for (const [k, a] of v.keywords) if (params.includes(k)) bound.push([k, a.objs]);
  for (const [param, objs] of bound) {
    if (!param || !objs?.length) continue;
    s = applyEffect(w, s, objs, w.ctx.effect(fn, param, owner));
  }
  return s;
}
