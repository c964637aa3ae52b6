// QAT008: torch.onnx.export of a quantized model with opset_version < 13: per-channel
// QuantizeLinear/DequantizeLinear (the axis attribute) needs opset 13.
import type { Finding } from '../types';
import { convertedModels } from './converted';
import { allCalls, intLiteral, qualify, textOf, type PythonRuleContext } from './syntax';

export function onnxOpset(ctx: PythonRuleContext): Finding[] {
  const converted = convertedModels(ctx);
  const findings: Finding[] = [];
  for (const call of allCalls(ctx)) {
    if (qualify(ctx, call.callee) !== 'torch.onnx.export') continue;
    const model = call.args[0] ?? call.keywords.get('model');
    const opsetNode = call.keywords.get('opset_version');
    const opset = intLiteral(ctx, opsetNode);
    if (model?.name !== 'VariableName' || !opsetNode || opset === undefined || opset >= 13) continue;
    const source = converted.get(textOf(ctx, model));
    if (!source || source.at > call.node.from) continue;
    findings.push({
      code: 'QAT008',
      severity: 'warning',
      start: opsetNode.from,
      end: opsetNode.to,
      message: `opset_version ${opset} is too old for a quantized model: per-channel QuantizeLinear/DequantizeLinear (axis) needs opset 13 or newer.`,
      fixes: [
        {
          title: 'Use opset_version 13',
          edits: [{ start: opsetNode.from, end: opsetNode.to, newText: '13' }],
          preferred: true,
        },
      ],
    });
  }
  return findings;
}
