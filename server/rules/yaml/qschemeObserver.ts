// QCFG004: a per-channel qscheme on a per-tensor observer, or the reverse: torch's observer constructors
// raise NotImplementedError for both (MinMaxObserver/HistogramObserver: per-tensor only; PerChannel*:
// per-channel only). Also per-channel activations, which neither the x86 quantizer nor eager kernels take.
import {
  OBSERVER_TWIN,
  PER_CHANNEL_OBSERVERS,
  PER_TENSOR_OBSERVERS,
  QSCHEME_TWIN,
  isPerChannel,
} from '../../knowledge/quant';
import type { Finding } from '../types';
import { replaceFix, stringValue, valueRange, type YamlRuleContext } from './context';

export function qschemeObserver(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { map, role } of ctx.observers) {
    const observer = stringValue(map, 'observer');
    const qscheme = stringValue(map, 'qscheme');
    const at = valueRange(map, 'qscheme');
    const obsAt = valueRange(map, 'observer');
    if (!qscheme || !at || !QSCHEME_TWIN[qscheme]) continue;
    if (role === 'activation' && isPerChannel(qscheme)) {
      const fixes = [replaceFix(`Use qscheme ${QSCHEME_TWIN[qscheme]}`, at, QSCHEME_TWIN[qscheme], true)];
      if (observer && obsAt && PER_CHANNEL_OBSERVERS.has(observer))
        fixes[0].edits.push({ start: obsAt[0], end: obsAt[1], newText: OBSERVER_TWIN[observer] });
      findings.push({
        code: 'QCFG004',
        severity: 'error',
        start: at[0],
        end: at[1],
        message: `Activations are quantized per tensor: ${qscheme} is supported neither by the x86 quantizer (pt2e) nor by eager kernels.`,
        fixes,
      });
      continue;
    }
    if (!observer || !obsAt) continue;
    const perChannel = isPerChannel(qscheme);
    if (perChannel ? !PER_TENSOR_OBSERVERS.has(observer) : !PER_CHANNEL_OBSERVERS.has(observer)) continue;
    const twin = OBSERVER_TWIN[observer];
    findings.push({
      code: 'QCFG004',
      severity: 'error',
      start: at[0],
      end: at[1],
      message: `${observer} only supports ${perChannel ? 'per-tensor' : 'per-channel'} qschemes; ${qscheme} makes its constructor raise NotImplementedError.`,
      fixes: [
        replaceFix(`Use qscheme ${QSCHEME_TWIN[qscheme]}`, at, QSCHEME_TWIN[qscheme], true),
        { title: `Use observer ${twin}`, edits: [{ start: obsAt[0], end: obsAt[1], newText: twin }] },
      ],
    });
  }
  return findings;
}
