// Observer / fake-quant constructor calls, shared by QAT006 and QAT007: `FakeQuantize.with_args(...)`,
// `MovingAverageMinMaxObserver(...)`, `tq.FakeQuantize(...)` (names through the file's imports).
import type { RuleInput } from '../../analysis/document';
import type { CallInfo } from '../../analysis/walker';

const CLASSES =
  /^(FakeQuantize|FusedMovingAvgObsFakeQuantize|MinMaxObserver|MovingAverageMinMaxObserver|PerChannelMinMaxObserver|MovingAveragePerChannelMinMaxObserver|HistogramObserver|PlaceholderObserver|NoopObserver|FixedQParamsObserver|FixedQParamsFakeQuantize)$/;

export interface ObserverCall {
  call: CallInfo;
  cls: string;
  /** The callee text up to and including the class name, e.g. `torch.ao.quantization.FakeQuantize`. */
  classText: string;
  withArgs: boolean;
}

export function observerCalls(input: RuleInput): ObserverCall[] {
  const out: ObserverCall[] = [];
  for (const call of input.facts.calls) {
    const parts = call.callee;
    if (!parts) continue;
    const withArgs = parts[parts.length - 1] === 'with_args';
    const cls = parts[parts.length - (withArgs ? 2 : 1)];
    if (!cls || !CLASSES.test(cls)) continue;
    // A name the file binds to something outside torch / torchao is someone else's class.
    const q = call.qualified;
    if (q && !/^torch(ao)?\./.test(q)) continue;
    if (!q && (input.ctx.module.names.variables.has(parts[0]) || input.ctx.classes.has(parts[0]))) continue;
    const classText = parts.slice(0, parts.length - (withArgs ? 1 : 0)).join('.');
    out.push({ call, cls, classText, withArgs });
  }
  return out;
}

/** `torch.quint8` / `torch.float16` / `quint8` -> 'quint8' / 'float16'. */
export function dtypeName(text: string): string | undefined {
  const m = /^(?:torch\.)?(\w+)$/.exec(text.trim());
  if (!m) return undefined;
  return m[1] === 'half' ? 'float16' : m[1];
}
