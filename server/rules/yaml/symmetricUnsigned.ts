// QCFG006: a symmetric qscheme with an unsigned dtype. torch fixes zero_point at the middle of the range
// (128 for quint8), so non-negative tensors (post-ReLU activations) use only half of the levels.
import { DEFAULT_DTYPE, UNSIGNED_DTYPES, isSymmetric } from '../../knowledge/quant';
import type { Fix, Finding } from '../types';
import { pairOf, replaceFix, stringValue, valueRange, type YamlRuleContext } from './context';

export function symmetricUnsigned(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { map, role } of ctx.observers) {
    const qscheme = stringValue(map, 'qscheme');
    const dtype = stringValue(map, 'dtype') ?? DEFAULT_DTYPE[role];
    const at = valueRange(map, 'qscheme');
    if (!qscheme || !at || !isSymmetric(qscheme) || !UNSIGNED_DTYPES.has(dtype)) continue;
    const affine = qscheme.replace('_symmetric', '_affine');
    const fixes: Fix[] = [replaceFix(`Use qscheme ${affine}`, at, affine, true)];
    const dtypeAt = valueRange(map, 'dtype');
    // Switching to qint8 is only safe when no explicit quant range would then fall outside it.
    if (dtype === 'quint8' && dtypeAt && !pairOf(map, 'quant_min') && !pairOf(map, 'quant_max')) {
      fixes.push(replaceFix('Use dtype qint8', dtypeAt, 'qint8'));
    }
    findings.push({
      code: 'QCFG006',
      severity: 'warning',
      start: at[0],
      end: at[1],
      message:
        `${qscheme} with unsigned ${dtype}: zero_point is pinned to the middle of the range, so non-negative ` +
        `values use only half of the levels. Use ${affine} or a signed dtype (qint8).`,
      fixes,
    });
  }
  return findings;
}
