// QCFG001: quant_min/quant_max must fit the dtype, and quant_min must be below quant_max.
import type { Finding } from '../types';
import { pairOf, rangeOf, scalarValue, type YamlRuleContext } from './context';

export const DTYPE_RANGES: Record<string, [number, number]> = {
  quint8: [0, 255],
  qint8: [-128, 127],
  qint32: [-2147483648, 2147483647],
  quint4x2: [0, 15],
};

export function quantRange(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { map } of ctx.observers) {
    const dtype = scalarValue(map, 'dtype');
    const range = typeof dtype === 'string' ? DTYPE_RANGES[dtype] : undefined;
    const bounds: Record<string, number | undefined> = {};
    for (const key of ['quant_min', 'quant_max']) {
      const pair = pairOf(map, key);
      const value = scalarValue(map, key);
      const at = rangeOf(pair?.value);
      if (typeof value !== 'number' || !at) continue;
      bounds[key] = value;
      if (range && (value < range[0] || value > range[1])) {
        findings.push({
          code: 'QCFG001', severity: 'error', start: at[0], end: at[1],
          message: `${key} ${value} is outside the range of ${dtype} (${range[0]}..${range[1]}).`,
        });
      }
    }
    const { quant_min: lo, quant_max: hi } = bounds;
    if (lo !== undefined && hi !== undefined && lo >= hi) {
      const at = rangeOf(pairOf(map, 'quant_min')?.value)!;
      findings.push({
        code: 'QCFG001', severity: 'error', start: at[0], end: at[1],
        message: `quant_min ${lo} must be smaller than quant_max ${hi}.`,
      });
    }
  }
  return findings;
}
