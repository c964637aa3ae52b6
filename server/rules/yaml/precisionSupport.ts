// QCFG012: a `precision: fp16|bf16` override the flow or backend cannot run. Eager convert swaps modules for
// torch.ao.nn.quantized ones whose from_float asserts qint8 weights (fp16 exists there only in quantize_dynamic);
// QNNPACK is an int8-only kernel library.
import { isMap, isSeq } from 'yaml';
import type { Finding } from '../types';
import { pairOf, replaceFix, stringValue, valueRange, type YamlRuleContext } from './context';

const FLOAT_PRECISIONS = new Set(['fp16', 'bf16']);

export function precisionSupport(ctx: YamlRuleContext): Finding[] {
  const root = ctx.doc.contents;
  const overrides = isMap(root) ? pairOf(root, 'overrides')?.value : undefined;
  if (!isSeq(overrides)) return [];
  const findings: Finding[] = [];
  for (const item of overrides.items) {
    if (!isMap(item)) continue;
    const precision = stringValue(item, 'precision');
    const at = valueRange(item, 'precision');
    if (!precision || !at || !FLOAT_PRECISIONS.has(precision)) continue;
    let why: string | undefined;
    if (ctx.flow === 'eager') {
      why =
        'the eager flow has no static fp16/bf16 modules: convert swaps in int8 torch.ao.nn.quantized modules (fp16 exists only in quantize_dynamic). Use flow: pt2e or precision: fp32.';
    } else if (ctx.backend === 'qnnpack') {
      why = 'qnnpack is an int8-only kernel library. Use precision: fp32, or backend: xnnpack for fp16.';
    }
    if (!why) continue;
    findings.push({
      code: 'QCFG012',
      severity: 'warning',
      start: at[0],
      end: at[1],
      message: `precision ${precision} cannot run here: ${why}`,
      fixes: [replaceFix('Use precision: fp32', at, 'fp32', true)],
    });
  }
  return findings;
}
