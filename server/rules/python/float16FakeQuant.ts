// QAT006: FakeQuantize / an integer observer built with dtype=torch.float16 or a ±65504 range: torch's
// uniform observers take integer dtypes only ("Default Observer only works for ..." on torch 2.13), and 65504
// is float16's largest value, not a quantization range. fp16 is a cast: torch's float16_static_qconfig
// uses PlaceholderObserver.with_args(dtype=torch.float16).
import { FLOAT_OBSERVERS, FP16_MAX } from '../../knowledge/quant';
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { intLiteral } from '../../analysis/syntax';
import { dtypeName, observerCalls } from './observerCalls';
import type { Fix } from './helpers';

export function float16FakeQuant(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const { call, cls, classText, withArgs } of observerCalls(input)) {
    if (FLOAT_OBSERVERS.has(cls)) continue;
    const dtype = call.keywords.dtype;
    const isFp16 = !!dtype && dtypeName(dtype.text) === 'float16';
    const bound = [call.keywords.quant_min, call.keywords.quant_max].find(
      (a) => Math.abs(intLiteral(a?.text) ?? 0) === FP16_MAX,
    );
    const at = isFp16 ? dtype : bound;
    if (!at) continue;
    const prefix = classText.slice(0, -cls.length);
    const usable = prefix !== '' || input.ctx.module.names.lookup('PlaceholderObserver') !== undefined;
    const fixes: Fix[] | undefined = usable
      ? [
          {
            title: 'Use PlaceholderObserver with dtype=torch.float16',
            edits: [
              {
                start: call.from,
                end: call.to,
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
