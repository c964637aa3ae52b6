// QCFG009: an observer name that the chosen flow does not provide (torch.ao.quantization for eager,
// torchao.quantization.pt2e for pt2e) or that the config schema does not accept, and observers that give
// no scale/zero-point for QAT (both flows train with fake quantization). Replaces the schema's generic
// enum error with a flow-aware one and a "did you mean".
import { FLOW_MODULE, FLOW_OBSERVERS, NOT_FOR_QAT } from '../../knowledge/quant';
import { configSchema } from '../../services/schema';
import { closest } from '../../util/levenshtein';
import type { Finding } from '../types';
import { replaceFix, stringValue, valueRange, type YamlRuleContext } from './context';

export const SCHEMA_OBSERVERS: string[] = configSchema.definitions.observer.properties.observer.enum;

/** The observers a config of this flow can name: in the schema, in the flow, and usable for QAT. */
export function observersFor(flow: string): string[] {
  const provided = FLOW_OBSERVERS[flow] ?? FLOW_OBSERVERS.pt2e;
  return SCHEMA_OBSERVERS.filter((o) => provided.has(o) && !NOT_FOR_QAT.has(o));
}

export function observerFlow(ctx: YamlRuleContext): Finding[] {
  const findings: Finding[] = [];
  const allowed = observersFor(ctx.flow);
  const module = FLOW_MODULE[ctx.flow] ?? FLOW_MODULE.pt2e;
  for (const { map } of ctx.observers) {
    const name = stringValue(map, 'observer');
    const at = valueRange(map, 'observer');
    if (!name || !at || allowed.includes(name)) continue;
    const other = Object.keys(FLOW_OBSERVERS).find((f) => f !== ctx.flow && FLOW_OBSERVERS[f].has(name));
    let message: string;
    if (NOT_FOR_QAT.has(name)) {
      findings.push({
        code: 'QCFG009',
        severity: 'error',
        start: at[0],
        end: at[1],
        message: `${name} gives no scale/zero-point for QAT fake quantization. To keep layers float, use an override with precision: fp32 (or fp16/bf16).`,
      });
      continue;
    }
    if (FLOW_OBSERVERS[ctx.flow]?.has(name))
      message = `${name} exists in ${module} but QAT Studio configs do not support it yet.`;
    else if (other)
      message = `${name} exists only in ${FLOW_MODULE[other]} (flow: ${other}), not in the ${ctx.flow} flow.`;
    else message = `${name} is not an observer or fake-quant class in ${module} (flow: ${ctx.flow}).`;
    const suggestion = closest(name, allowed);
    findings.push({
      code: 'QCFG009',
      severity: 'error',
      start: at[0],
      end: at[1],
      message: suggestion ? `${message} Did you mean ${suggestion}?` : `${message} Use one of: ${allowed.join(', ')}.`,
      fixes: suggestion ? [replaceFix(`Change to ${suggestion}`, at, suggestion, true)] : undefined,
    });
  }
  return findings;
}
