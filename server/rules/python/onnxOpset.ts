// QAT008: torch.onnx.export of a converted (int8) model with settings that cannot give the file asked for,
// as checked on torch 2.13 / onnx 1.23 by test/rule-claims:
// - an eager-converted model with the default dynamo exporter: torch.export cannot trace its packed
//   quantized modules (TorchExportError), at any opset; dynamo=False (TorchScript) exports it;
// - an eager-converted model with dynamo=False and opset < 13: per-channel DequantizeLinear needs the axis
//   attribute of opset 13 ("Unsupported: ONNX export of DequantizeLinear in opset 12");
// - a PT2E-converted model with opset < 13: the exporter builds opset 18 and cannot convert the QDQ graph
//   down, so the file comes out at opset 18.
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { factsOf } from '../../analysis/state';
import { intLiteral } from '../../analysis/syntax';
import type { Fix } from './helpers';

export function onnxOpset(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const call of input.facts.calls) {
    if (call.qualified !== 'torch.onnx.export' || !call.state) continue;
    const model = call.args[0] ?? call.keywords.model;
    if (!model?.dotted) continue;
    const facts = factsOf(call.state, model.dotted);
    const kind = facts?.[0]?.converted?.kind;
    if (!kind || !facts!.every((f) => f.converted?.kind === kind) || kind === 'fx') continue;
    const opsetArg = call.keywords.opset_version;
    const opset = intLiteral(opsetArg?.text);
    const dynamo = call.keywords.dynamo?.text;
    if (kind === 'eager' && dynamo !== 'False') {
      const lastArg = [...call.args, ...Object.values(call.keywords)].sort((a, b) => b.to - a.to)[0];
      const fixes: Fix[] | undefined =
        dynamo === undefined && lastArg
          ? [
              {
                title: 'Export with dynamo=False',
                edits: [
                  { start: lastArg.to, end: lastArg.to, newText: ', dynamo=False' },
                  ...(opsetArg && opset !== undefined && opset < 13
                    ? [{ start: opsetArg.from, end: opsetArg.to, newText: '13' }]
                    : []),
                ],
                preferred: true,
              },
            ]
          : undefined;
      findings.push({
        code: 'QAT008',
        severity: 'error',
        start: model.from,
        end: model.to,
        message:
          `'${model.dotted}' is an eager-converted int8 model: torch.onnx.export's default (dynamo) exporter cannot trace its ` +
          'packed quantized modules and raises TorchExportError. Pass dynamo=False (the TorchScript exporter) with opset_version 13 or newer.',
        fixes,
      });
      continue;
    }
    if (!opsetArg || opset === undefined || opset >= 13) continue;
    const message =
      kind === 'eager'
        ? `opset_version ${opset} is too old for this quantized model: per-channel DequantizeLinear (the x86/fbgemm default weights) needs the axis ` +
          `attribute of opset 13, and the exporter raises "Unsupported: ONNX export of DequantizeLinear in opset ${opset}".`
        : `opset_version ${opset} is below 13, the first opset with per-channel QuantizeLinear/DequantizeLinear (X86InductorQuantizer's default weights): ` +
          `torch.onnx.export builds this graph at opset 18, cannot convert it down, and writes opset 18 instead of ${opset}.`;
    const to = kind === 'eager' ? '13' : '18';
    findings.push({
      code: 'QAT008',
      severity: kind === 'eager' ? 'error' : 'warning',
      start: opsetArg.from,
      end: opsetArg.to,
      message,
      fixes: [
        {
          title: `Use opset_version ${to}`,
          edits: [{ start: opsetArg.from, end: opsetArg.to, newText: to }],
          preferred: true,
        },
      ],
    });
  }
  return findings;
}
