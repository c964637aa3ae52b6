// QCFG005: ch_axis on a spec whose qscheme is per-tensor: the axis is never used, and per-tensor observers
// do not take the argument at all.
import { PER_CHANNEL_OBSERVERS, isPerChannel } from '../../knowledge/quant';
import type { Finding } from '../types';
import { pairOf, rangeOf, removePairEdit, stringValue, type YamlRuleContext } from './context';

export function chAxis(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { map } of ctx.observers) {
    const pair = pairOf(map, 'ch_axis');
    const at = rangeOf(pair?.key);
    if (!at) continue;
    const qscheme = stringValue(map, 'qscheme');
    const observer = stringValue(map, 'observer');
    // Without a qscheme, a per-channel observer defaults to per_channel_affine.
    const perChannel = qscheme ? isPerChannel(qscheme) : !!observer && PER_CHANNEL_OBSERVERS.has(observer);
    if (perChannel || (!qscheme && !observer)) continue;
    const remove = removePairEdit(ctx.text, map, 'ch_axis');
    findings.push({
      code: 'QCFG005',
      severity: 'warning',
      start: at[0],
      end: rangeOf(pair?.value)?.[1] ?? at[1],
      message: `ch_axis has no effect: ${qscheme ? `qscheme ${qscheme}` : `observer ${observer}`} is per-tensor. Use a per_channel_* qscheme or remove ch_axis.`,
      fixes: remove ? [{ title: 'Remove ch_axis', edits: [remove], preferred: true }] : undefined,
    });
  }
  return findings;
}
