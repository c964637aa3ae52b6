// Which variables hold a converted (int8) model: assigned from convert / convert_fx / convert_pt2e /
// quantize_qat, or converted in place. Shared by QAT008 and QAT012.
import { allCalls, memo, qualify, textOf, type PythonRuleContext } from './syntax';

export interface Converted {
  kind: 'eager' | 'pt2e';
  at: number;
}

const CONVERTERS =
  /^(torch\.(ao\.)?quantization(\.quantize_fx)?\.(convert|convert_fx|quantize_qat|quantize)|torchao\.quantization\.pt2e(\.quantize_pt2e)?\.convert_pt2e)$/;

export function convertedModels(ctx: PythonRuleContext): Map<string, Converted> {
  return memo(ctx, 'converted', () => {
    const out = new Map<string, Converted>();
    for (const call of allCalls(ctx)) {
      const name = qualify(ctx, call.callee);
      if (!CONVERTERS.test(name)) continue;
      const kind = name.endsWith('convert_pt2e') ? 'pt2e' : 'eager';
      const assign = call.node.parent;
      const target = assign?.name === 'AssignStatement' ? assign.firstChild : null;
      if (target?.name === 'VariableName') out.set(textOf(ctx, target), { kind, at: call.node.from });
      const inplace = call.keywords.get('inplace');
      const first = call.args[0];
      if (inplace && textOf(ctx, inplace) === 'True' && first?.name === 'VariableName')
        out.set(textOf(ctx, first), { kind, at: call.node.from });
    }
    return out;
  });
}
