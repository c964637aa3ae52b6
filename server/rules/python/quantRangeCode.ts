// QAT007: quant_min / quant_max literals in an observer or FakeQuantize call that do not fit the explicit
// dtype (FakeQuantize asserts "quant_max out of bound"), do not include 0 (torch asserts "quantization range
// must include 0"), or are not ordered ("qmin must be strictly less than qmax").
import { DTYPE_RANGES, FP16_MAX } from '../../knowledge/quant';
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { intLiteral } from '../../analysis/syntax';
import { dtypeName, observerCalls } from './observerCalls';

export function quantRangeCode(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const { call } of observerCalls(input)) {
    const dtype = call.keywords.dtype && dtypeName(call.keywords.dtype.text);
    const range = dtype ? DTYPE_RANGES[dtype] : undefined;
    const nodes = [call.keywords.quant_min, call.keywords.quant_max];
    const values = nodes.map((n) => intLiteral(n?.text));
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
