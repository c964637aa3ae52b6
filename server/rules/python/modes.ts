// Tracks, per scope and in source order, whether each model variable was last put in train or eval mode
// (.train(), .train(False), .eval(), and torchao's move_exported_model_to_train/eval). Copies made by
// deepcopy / fuse_modules_qat / prepare_* keep the mode of their source.
import type { SyntaxNode } from '@lezer/common';
import { asCall, memo, scopeOf, textOf, type Call, type PythonRuleContext } from './syntax';

export type Mode = { mode: 'train' | 'eval'; at: number };
export type ModeState = Map<string, Mode>;

export interface ModeEvent {
  call: Call;
  /** The modes in the call's scope just before the call. */
  state: ModeState;
  /** Set when the call itself changes a mode. */
  change?: { target: string; mode: 'train' | 'eval' };
  scope: SyntaxNode;
}

const COPIES = new Set([
  'deepcopy',
  'fuse_modules_qat',
  'fuse_modules',
  'prepare_qat',
  'prepare_qat_fx',
  'prepare_qat_pt2e',
  'quantize_qat',
]);

function modeChange(ctx: PythonRuleContext, call: Call): { target: string; mode: 'train' | 'eval' } | undefined {
  const [target, method] = call.callee.length === 2 ? call.callee : [];
  if (target && method === 'eval' && call.args.length === 0) return { target, mode: 'eval' };
  if (target && method === 'train') {
    const arg = call.args[0] ?? call.keywords.get('mode');
    return { target, mode: arg && textOf(ctx, arg) === 'False' ? 'eval' : 'train' };
  }
  const name = call.callee[call.callee.length - 1];
  const first = call.args[0];
  if (
    first?.name === 'VariableName' &&
    (name === 'move_exported_model_to_eval' || name === 'move_exported_model_to_train')
  ) {
    return { target: textOf(ctx, first), mode: name.endsWith('eval') ? 'eval' : 'train' };
  }
  return undefined;
}

/** Every call with the mode state before it, in source order (calls are visited when left, so the call in
 * `m = prepare_qat(m)` comes before its assignment). */
export function modeEvents(ctx: PythonRuleContext): ModeEvent[] {
  return memo(ctx, 'modes', () => {
    const events: ModeEvent[] = [];
    const modes = new Map<SyntaxNode, ModeState>();
    const scopes = new Map<string, SyntaxNode>();
    const stateOf = (node: SyntaxNode): [ModeState, SyntaxNode] => {
      const found = scopeOf(node);
      const key = `${found.from}:${found.to}`;
      const scope = scopes.get(key) ?? found;
      scopes.set(key, scope);
      let state = modes.get(scope);
      if (!state) modes.set(scope, (state = new Map()));
      return [state, scope];
    };
    ctx.tree.iterate({
      enter: () => undefined,
      leave(ref) {
        if (ref.name !== 'AssignStatement' && ref.name !== 'CallExpression') return;
        const node = ref.node;
        if (node.name === 'AssignStatement') {
          const target = node.firstChild;
          const value = target?.nextSibling?.nextSibling;
          if (target?.name !== 'VariableName' || !value) return;
          const [state] = stateOf(node);
          const call = asCall(ctx, value);
          const source = call?.args[0];
          const inherited =
            call && COPIES.has(call.callee[call.callee.length - 1]) && source?.name === 'VariableName'
              ? state.get(textOf(ctx, source))
              : undefined;
          if (inherited) state.set(textOf(ctx, target), inherited);
          else state.delete(textOf(ctx, target));
          return;
        }
        const call = asCall(ctx, node);
        if (!call) return;
        const [state, scope] = stateOf(node);
        const change = modeChange(ctx, call);
        events.push({ call, state: new Map(state), change, scope });
        if (change) state.set(change.target, { mode: change.mode, at: node.from });
      },
    });
    return events;
  });
}
