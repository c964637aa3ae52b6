// QAT006: FakeQuantize / an integer observer built with dtype=torch.float16 or a ±65504 range: torch's
// uniform observers accept integer dtypes only (FakeQuantize checks the range with torch.iinfo), and 65504
// is float16's largest value, not a quantization range. fp16 is a cast: torch's float16_static_qconfig
// uses PlaceholderObserver.with_args(dtype=torch.float16).
import { FLOAT_OBSERVERS, FP16_MAX } from '../../knowledge/quant';
import type { Fix, Finding } from '../types';
import { dtypeName, observerCalls } from './observerCalls';
import { imports, intLiteral, textOf, type PythonRuleContext } from './syntax';

export function float16FakeQuant(ctx: PythonRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { call, cls, classNode } of observerCalls(ctx)) {
    if (FLOAT_OBSERVERS.has(cls)) continue;
    const dtype = call.keywords.get('dtype');
    const isFp16 = dtype && dtypeName(textOf(ctx, dtype)) === 'float16';
    const bound = ['quant_min', 'quant_max']
      .map((k) => call.keywords.get(k))
      .find((n) => Math.abs(intLiteral(ctx, n) ?? 0) === FP16_MAX);
    const at = isFp16 ? dtype : bound;
    if (!at) continue;
    const prefix = textOf(ctx, classNode).slice(0, -cls.length);
    const usable = prefix !== '' || imports(ctx).aliases.has('PlaceholderObserver');
    const withArgs = call.callee[call.callee.length - 1] === 'with_args';
    const fixes: Fix[] | undefined = usable
      ? [
          {
            title: 'Use PlaceholderObserver with dtype=torch.float16',
            edits: [
              {
                start: call.node.from,
                end: call.node.to,
                newText: `${prefix}PlaceholderObserver${withArgs ? '.with_args' : ''}(dtype=torch.float16)`,
              },
            ],
            preferred: true,
          },
        ]
      : undefined;
    findings.push({
      code: 'QAT006',
      severity: 'error',
      start: at.from,
      end: at.to,
      message:
        `${cls} with ${isFp16 ? 'dtype=torch.float16' : `a ±${FP16_MAX} range`} is a float16 "fake quantize": torch observers ` +
        'and FakeQuantize take integer dtypes only, and 65504 is the float16 maximum, not a quantization range. ' +
        "For fp16 use PlaceholderObserver.with_args(dtype=torch.float16) (torch's float16_static_qconfig), or leave the module unquantized.",
      fixes,
    });
  }
  return findings;
}
