// QAT001: prepare_qat on a model last put in eval mode. QAT002: convert on a model still in train mode.
// Walks each scope in source order, tracking what .train()/.eval() (and their PT2E twins) last did.
import type { Finding } from '../types';
import { asCall, lineOf, quantizationImports, scopeOf, textOf, type Call, type PythonRuleContext } from './syntax';

type Mode = { mode: 'train' | 'eval'; at: number };

const PREPARE = new Set(['prepare_qat', 'prepare_qat_fx', 'prepare_qat_pt2e', 'quantize_qat']);
const CONVERT = new Set(['convert', 'convert_fx', 'convert_pt2e']);
const COPIES = new Set(['deepcopy', 'fuse_modules_qat', ...PREPARE]);

function isQuantizationCall(call: Call, names: Set<string>, imported: Set<string>): boolean {
  const name = call.callee[call.callee.length - 1];
  if (!names.has(name)) return false;
  if (call.callee.length === 1) return imported.has(name) || name !== 'convert';
  return call.callee.slice(0, -1).some((part) => /quantiz|pt2e|^tq$/.test(part));
}

function modeChange(ctx: PythonRuleContext, call: Call): { target: string; mode: 'train' | 'eval' } | undefined {
  const [target, method] = call.callee.length === 2 ? call.callee : [];
  if (target && method === 'eval' && call.args.length === 0) return { target, mode: 'eval' };
  if (target && method === 'train') {
    const arg = call.args[0] ?? call.keywords.get('mode');
    return { target, mode: arg && textOf(ctx, arg) === 'False' ? 'eval' : 'train' };
  }
  const name = call.callee[call.callee.length - 1];
  const first = call.args[0];
  if (first?.name === 'VariableName' && (name === 'move_exported_model_to_eval' || name === 'move_exported_model_to_train')) {
    return { target: textOf(ctx, first), mode: name.endsWith('eval') ? 'eval' : 'train' };
  }
  return undefined;
}

export function trainEvalOrder(ctx: PythonRuleContext): Finding[] {
  const imported = quantizationImports(ctx);
  const findings: Finding[] = [];
  const modes = new Map<string, Map<string, Mode>>();
  const stateOf = (node: Parameters<typeof scopeOf>[0]) => {
    const scope = scopeOf(node);
    let state = modes.get(scope.from + ':' + scope.to);
    if (!state) modes.set(scope.from + ':' + scope.to, (state = new Map()));
    return state;
  };

  ctx.tree.iterate({
    enter: () => undefined,
    leave(ref) {
      // Calls are handled when left, so the call inside `m = prepare_qat(m)` is seen before its assignment.
      const node = ref.node;
      if (node.name === 'AssignStatement') {
        const target = node.firstChild;
        const value = target?.nextSibling?.nextSibling;
        if (target?.name !== 'VariableName' || !value) return;
        const state = stateOf(node);
        const call = asCall(ctx, value);
        const source = call?.args[0];
        const inherited = call && COPIES.has(call.callee[call.callee.length - 1]) && source?.name === 'VariableName'
          ? state.get(textOf(ctx, source)) : undefined;
        if (inherited) state.set(textOf(ctx, target), inherited);
        else state.delete(textOf(ctx, target));
        return;
      }
      const call = asCall(ctx, node);
      if (!call) return;
      const state = stateOf(node);
      const change = modeChange(ctx, call);
      if (change) {
        state.set(change.target, { mode: change.mode, at: node.from });
        return;
      }
      const model = call.args[0] ?? call.keywords.get('model');
      if (model?.name !== 'VariableName') return;
      const name = textOf(ctx, model);
      const last = state.get(name);
      const fn = call.callee[call.callee.length - 1];
      if (last?.mode === 'eval' && isQuantizationCall(call, PREPARE, imported)) {
        findings.push({
          code: 'QAT001', severity: 'warning', start: node.from, end: node.to,
          message: `${fn}() on '${name}', which was last put in eval mode (line ${lineOf(ctx.text, last.at)}). ` +
            `QAT needs train mode: call ${name}.train() first.`,
        });
      } else if (last?.mode === 'train' && isQuantizationCall(call, CONVERT, imported)) {
        const fix = fn === 'convert_pt2e' ? `move_exported_model_to_eval(${name})` : `${name}.eval()`;
        findings.push({
          code: 'QAT002', severity: 'warning', start: node.from, end: node.to,
          message: `${fn}() on '${name}', which is still in train mode (line ${lineOf(ctx.text, last.at)}). ` +
            `Call ${fix} before converting.`,
        });
      }
    },
  });
  return findings;
}
