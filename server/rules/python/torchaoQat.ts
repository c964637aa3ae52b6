// Reading torchao's QAT API in a unit, for QAT016-QAT019: `quantize_(model, QATConfig(base, step=...))` with the
// config inline or in a variable assigned once on every path here (in this function), and its base PTQ config
// (or weight_config=IntxFakeQuantizeConfig(...)) likewise. Anything built another way (a helper, a dict, a
// config from another module) is unknown, and the rules stay silent about it.
import type { RuleInput } from '../../analysis/document';
import { factsOf } from '../../analysis/state';
import type { Desc } from '../../analysis/summaries';
import type { CallInfo } from '../../analysis/walker';
import { intLiteral, type Arg } from '../../analysis/syntax';

export interface QatUse {
  /** The quantize_ call. */
  call: CallInfo;
  /** The QATConfig(...) call (inline or the one assigned to the variable passed). */
  config: CallInfo;
  step: 'prepare' | 'convert';
  /** The model argument (a dotted name). */
  model: Arg;
  /** The base PTQ config call, when it is one. */
  base?: CallInfo;
  /** weight_config=IntxFakeQuantizeConfig(...), when it is one. */
  weight?: CallInfo;
  /** filter_fn or a third argument was passed: which modules it reaches is not known here. */
  filtered: boolean;
}

const isTorchao = (q: string | undefined, name: string) => !!q && q.startsWith('torchao.') && q.endsWith(`.${name}`);
export const isQuantize = (c: CallInfo) => isTorchao(c.qualified, 'quantize_');

/** The torchao base configs QAT016/QAT018 know, by class name (their module path does not matter). */
export const BASE_CONFIGS = new Set([
  'Int4WeightOnlyConfig',
  'Int8DynamicActivationIntxWeightConfig',
  'IntxWeightOnlyConfig',
  'Float8DynamicActivationFloat8WeightConfig',
  'Float8DynamicActivationInt4WeightConfig',
  'Int8DynamicActivationInt8WeightConfig',
  'Int8WeightOnlyConfig',
  'Float8WeightOnlyConfig',
]);

export const lastName = (c: CallInfo) => c.qualified?.slice(c.qualified.lastIndexOf('.') + 1);

/** The call an argument is: inline, or the one value of a variable on every path to `at`. */
export function callOf(input: RuleInput, at: CallInfo, arg: Arg | undefined): CallInfo | undefined {
  if (!arg) return undefined;
  if (arg.node === 'CallExpression') return input.facts.calls.find((c) => c.from === arg.from && c.to === arg.to);
  if (!arg.dotted || !at.state) return undefined;
  const defs = at.state.vars.get(arg.dotted)?.defs;
  if (defs?.length !== 1) return undefined;
  return input.facts.calls.find((c) => c.from === defs[0] && c.run === at.run);
}

function stepOf(config: CallInfo): 'prepare' | 'convert' | undefined {
  const s = config.keywords.step;
  if (!s) return 'prepare'; // QATConfig's default
  const t = s.text.replace(/\s+/g, '');
  if (/^(["'])prepare\1$/i.test(t) || /(^|\.)QATStep\.PREPARE$/.test(t)) return 'prepare';
  if (/^(["'])convert\1$/i.test(t) || /(^|\.)QATStep\.CONVERT$/.test(t)) return 'convert';
  return undefined;
}

/** Every quantize_(model, QATConfig(...)) of the unit whose config and step are known. */
export function qatUses(input: RuleInput): QatUse[] {
  const out: QatUse[] = [];
  for (const call of input.facts.calls) {
    if (call.inRaises || !call.state || !isQuantize(call)) continue;
    const model = call.args[0] ?? call.keywords.model;
    if (!model?.dotted) continue;
    const config = callOf(input, call, call.args[1] ?? call.keywords.config);
    if (!config || !isTorchao(config.qualified, 'QATConfig') || config.inRaises) continue;
    const step = stepOf(config);
    if (!step) continue;
    const baseCall = callOf(input, config, config.args[0] ?? config.keywords.base_config);
    const base = baseCall && BASE_CONFIGS.has(lastName(baseCall) ?? '') ? baseCall : undefined;
    const weightCall = callOf(input, config, config.args[2] ?? config.keywords.weight_config);
    const weight = weightCall && isTorchao(weightCall.qualified, 'IntxFakeQuantizeConfig') ? weightCall : undefined;
    const filtered = call.args.length > 2 || Object.keys(call.keywords).some((k) => k !== 'model' && k !== 'config');
    out.push({ call, config, step, model, base, weight, filtered });
  }
  return out;
}

/** `PerGroup(32)` (any module path) -> 32. */
function perGroup(input: RuleInput, at: CallInfo, arg: Arg | undefined): number | undefined {
  const c = callOf(input, at, arg);
  return c && isTorchao(c.qualified, 'PerGroup')
    ? intLiteral(c.args[0]?.text ?? c.keywords.group_size?.text)
    : undefined;
}

/** The weight group size a QAT prepare fake-quantizes with, when a literal says it. */
export function groupSize(input: RuleInput, use: QatUse): number | undefined {
  if (use.base) return baseGroupSize(input, use.base);
  const w = use.weight;
  if (!w) return undefined;
  // IntxFakeQuantizeConfig(dtype, granularity=None, ..., group_size=N): only the keyword form is read
  return intLiteral(w.keywords.group_size?.text);
}

/** The group size of a base config call, when a literal says it. */
export function baseGroupSize(input: RuleInput, base: CallInfo): number | undefined {
  switch (lastName(base)) {
    case 'Int4WeightOnlyConfig':
      return intLiteral((base.keywords.group_size ?? base.args[0])?.text);
    case 'Int8DynamicActivationIntxWeightConfig':
      return perGroup(input, base, base.keywords.weight_granularity);
    case 'IntxWeightOnlyConfig':
      return perGroup(input, base, base.keywords.granularity);
  }
  return undefined;
}

/** The config as written (whitespace squeezed), for messages. */
export const spelled = (input: RuleInput, c: CallInfo) => input.text.slice(c.from, c.to).replace(/\s+/g, ' ');

/** The leaf torch.nn modules a model's in-file class assigns in __init__, and whether that list is complete. */
export function modulesOf(
  input: RuleInput,
  use: QatUse,
): { cls: string; leaves: Leaf[]; complete: boolean } | undefined {
  const facts = factsOf(use.call.state, use.model.dotted!);
  const cls = facts?.[0]?.cls;
  if (!cls || !facts!.every((f) => f.cls === cls)) return undefined;
  const summary = input.ctx.classes.get(cls);
  // the class itself, straight on nn.Module (an in-file base or a mixin may add modules we do not see)
  if (!summary || !summary.torchBase || summary.bases.length !== 1 || input.ctx.lineage(cls).length !== 1)
    return undefined;
  const leaves: Leaf[] = [];
  let complete = true;
  const walk = (d: Desc): void => {
    if (!d || 'call' in d) complete = false;
    else if ('m' in d) leaves.push(d);
    else if ('seq' in d) d.seq.forEach(walk);
    else if (d.list.length) d.list.forEach(walk);
    else complete = false;
  };
  for (const a of Object.values(summary.attrs)) walk(a.desc);
  const text = classText(input, cls);
  // modules made another way than `self.x = nn.X(...)`: the list is not complete
  if (text === undefined || /setattr|add_module|register_module|ModuleDict|\bfor\b|Linear|Embedding/.test(text))
    complete = false;
  return { cls, leaves, complete };
}

export type Leaf = { m: string; in?: number };

function classText(input: RuleInput, name: string): string | undefined {
  let found: string | undefined;
  let count = 0;
  input.tree.topNode.cursor().iterate((n) => {
    if (n.name !== 'ClassDefinition') return undefined;
    const v = n.node.getChild('VariableName');
    if (v && input.text.slice(v.from, v.to) === name) {
      count++;
      found = input.text.slice(n.from, n.to);
    }
    return undefined;
  });
  return count === 1 ? found : undefined;
}
