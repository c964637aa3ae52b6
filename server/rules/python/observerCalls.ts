// Observer / fake-quant constructor calls in code, shared by QAT006 and QAT007:
// `FakeQuantize.with_args(...)`, `MovingAverageMinMaxObserver(...)`, `torch.ao.quantization.FakeQuantize(...)`.
import type { SyntaxNode } from '@lezer/common';
import { allCalls, memo, type Call, type PythonRuleContext } from './syntax';

const CLASSES =
  /^(FakeQuantize|FusedMovingAvgObsFakeQuantize|MinMaxObserver|MovingAverageMinMaxObserver|PerChannelMinMaxObserver|MovingAveragePerChannelMinMaxObserver|HistogramObserver|PlaceholderObserver|NoopObserver|FixedQParamsObserver|FixedQParamsFakeQuantize)$/;

export interface ObserverCall {
  call: Call;
  cls: string;
  /** The callee text up to and including the class name, e.g. `torch.ao.quantization.FakeQuantize`. */
  classNode: SyntaxNode;
}

export function observerCalls(ctx: PythonRuleContext): ObserverCall[] {
  return memo(ctx, 'observerCalls', () =>
    allCalls(ctx).flatMap((call) => {
      const parts = call.callee;
      const withArgs = parts[parts.length - 1] === 'with_args';
      const cls = parts[parts.length - (withArgs ? 2 : 1)];
      if (!cls || !CLASSES.test(cls)) return [];
      const calleeNode = call.node.firstChild!;
      const classNode = withArgs ? calleeNode.firstChild! : calleeNode;
      return [{ call, cls, classNode }];
    }),
  );
}

/** `torch.quint8` / `torch.float16` / `quint8` -> 'quint8' / 'float16'. */
export function dtypeName(text: string): string | undefined {
  const m = /^(?:torch\.)?(\w+)$/.exec(text.trim());
  if (!m) return undefined;
  return m[1] === 'half' ? 'float16' : m[1];
}
