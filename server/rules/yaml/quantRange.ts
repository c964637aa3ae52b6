// QCFG001: quant_min/quant_max must fit the dtype, include 0 (torch's validate_qmin_qmax asserts it),
// and quant_min must be below quant_max.
import { DEFAULT_DTYPE, DTYPE_RANGES, FP16_MAX } from '../../knowledge/quant';
import type { Finding } from '../types';
import { replaceFix, scalarValue, stringValue, valueRange, type YamlRuleContext } from './context';

export function quantRange(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { map, role } of ctx.observers) {
    const dtype = stringValue(map, 'dtype') ?? DEFAULT_DTYPE[role];
    const range = DTYPE_RANGES[dtype];
    const bounds: Record<string, number | undefined> = {};
    for (const [i, key] of (['quant_min', 'quant_max'] as const).entries()) {
      const value = scalarValue(map, key);
      const at = valueRange(map, key);
      if (typeof value !== 'number' || !at) continue;
      bounds[key] = value;
      // ±65504 is the float16 limit, not a range: QCFG011 explains that one.
      if (Math.abs(value) === FP16_MAX) continue;
      if (range && (value < range[0] || value > range[1])) {
        findings.push({
          code: 'QCFG001',
          severity: 'error',
          start: at[0],
          end: at[1],
          message: `${key} ${value} is outside the range of ${dtype} (${range[0]}..${range[1]}).`,
          fixes: [
            replaceFix(`Use ${range[i]}, the ${i ? 'largest' : 'smallest'} ${dtype} value`, at, String(range[i]), true),
          ],
        });
      } else if (i === 0 ? value > 0 : value < 0) {
        findings.push({
          code: 'QCFG001',
          severity: 'error',
          start: at[0],
          end: at[1],
          message: `${key} ${value}: the quantized range must include 0 (torch asserts quant_min <= 0 <= quant_max).`,
          fixes: [replaceFix('Use 0', at, '0')],
        });
      }
    }
    const { quant_min: lo, quant_max: hi } = bounds;
    if (lo !== undefined && hi !== undefined && lo >= hi) {
      const at = valueRange(map, 'quant_min')!;
      findings.push({
        code: 'QCFG001',
        severity: 'error',
        start: at[0],
        end: at[1],
        message: `quant_min ${lo} must be smaller than quant_max ${hi}.`,
      });
    }
  }
  return findings;
}
