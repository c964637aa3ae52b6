// QCFG008: eps <= 0. eps is the smallest scale an observer returns; 0 lets the scale reach 0 on a constant
// tensor, and fake-quant then divides by it.
import { FLOAT32_EPS } from '../../knowledge/quant';
import type { Finding } from '../types';
import { replaceFix, scalarValue, valueRange, type YamlRuleContext } from './context';

export function eps(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { map } of ctx.observers) {
    const value = scalarValue(map, 'eps');
    const at = valueRange(map, 'eps');
    if (typeof value !== 'number' || !at || value > 0) continue;
    findings.push({
      code: 'QCFG008',
      severity: 'error',
      start: at[0],
      end: at[1],
      message: `eps ${value} must be > 0: it is the smallest scale, and a zero scale makes fake-quant divide by zero.`,
      fixes: [replaceFix('Use float32 eps (torch default)', at, String(FLOAT32_EPS), true)],
    });
  }
  return findings;
}
