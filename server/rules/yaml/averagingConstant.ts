// QCFG007: averaging_constant outside (0, 1]: min/max move by c × (new - old) each step, so c <= 0
// never learns the range and c > 1 overshoots.
import type { Finding } from '../types';
import { replaceFix, scalarValue, valueRange, type YamlRuleContext } from './context';

export function averagingConstant(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { map } of ctx.observers) {
    const c = scalarValue(map, 'averaging_constant');
    const at = valueRange(map, 'averaging_constant');
    if (typeof c !== 'number' || !at || (c > 0 && c <= 1)) continue;
    findings.push({
      code: 'QCFG007',
      severity: 'error',
      start: at[0],
      end: at[1],
      message: `averaging_constant ${c} must be in (0, 1]: the running min/max move by c × (new - old) each step.`,
      fixes: [replaceFix('Use 0.01 (torch default)', at, '0.01', true)],
    });
  }
  return findings;
}
