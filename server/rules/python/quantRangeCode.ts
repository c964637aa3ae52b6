// QAT007: quant_min / quant_max literals in an observer or FakeQuantize call that do not fit the explicit
// dtype, do not include 0 (torch's validate_qmin_qmax asserts it), or are not ordered.
import { DTYPE_RANGES, FP16_MAX } from '../../knowledge/quant';
import type { Finding } from '../types';
import { dtypeName, observerCalls } from './observerCalls';
import { intLiteral, textOf, type PythonRuleContext } from './syntax';

export function quantRangeCode(ctx: PythonRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const { call } of observerCalls(ctx)) {
    const dtypeNode = call.keywords.get('dtype');
    const dtype = dtypeNode && dtypeName(textOf(ctx, dtypeNode));
    const range = dtype ? DTYPE_RANGES[dtype] : undefined;
    const nodes = [call.keywords.get('quant_min'), call.keywords.get('quant_max')];
    const values = nodes.map((n) => intLiteral(ctx, n));
    // ±65504 is QAT006's finding.
    if (values.some((v) => v !== undefined && Math.abs(v) === FP16_MAX)) continue;
    nodes.forEach((node, i) => {
      const v = values[i];
      if (!node || v === undefined) return;
      const key = i ? 'quant_max' : 'quant_min';
      if (range && (v < range[0] || v > range[1])) {
        findings.push({
          code: 'QAT007',
          severity: 'error',
          start: node.from,
          end: node.to,
          message: `${key}=${v} is outside the range of ${dtype} (${range[0]}..${range[1]}).`,
          fixes: [
            {
              title: `Use ${range[i]}`,
              edits: [{ start: node.from, end: node.to, newText: String(range[i]) }],
              preferred: true,
            },
          ],
        });
      } else if (i === 0 ? v > 0 : v < 0) {
        findings.push({
          code: 'QAT007',
          severity: 'error',
          start: node.from,
          end: node.to,
          message: `${key}=${v}: the quantized range must include 0 (torch asserts quant_min <= 0 <= quant_max).`,
        });
      }
    });
    const [lo, hi] = values;
    if (lo !== undefined && hi !== undefined && lo >= hi) {
      findings.push({
        code: 'QAT007',
        severity: 'error',
        start: nodes[0]!.from,
        end: nodes[0]!.to,
        message: `quant_min=${lo} must be smaller than quant_max=${hi}.`,
      });
    }
  }
  return findings;
}
