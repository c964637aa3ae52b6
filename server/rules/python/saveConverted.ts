// QAT012: torch.save(model) of an eager/FX-converted int8 model: it pickles, loads, and then fails in
// forward (the packed quantized modules do not survive pickling intact). Save the state_dict instead.
import type { Finding } from '../types';
import { convertedModels } from './converted';
import { allCalls, qualify, textOf, type PythonRuleContext } from './syntax';

export function saveConverted(ctx: PythonRuleContext): Finding[] {
  const converted = convertedModels(ctx);
  const findings: Finding[] = [];
  for (const call of allCalls(ctx)) {
    if (qualify(ctx, call.callee) !== 'torch.save') continue;
    const obj = call.args[0] ?? call.keywords.get('obj');
    if (obj?.name !== 'VariableName') continue;
    const name = textOf(ctx, obj);
    const source = converted.get(name);
    if (source?.kind !== 'eager' || source.at > call.node.from) continue;
    findings.push({
      code: 'QAT012',
      severity: 'warning',
      start: obj.from,
      end: obj.to,
      message:
        `torch.save('${name}') pickles a converted int8 model: it loads, but forward then fails. ` +
        `Save ${name}.state_dict() and load it into a model prepared and converted the same way.`,
      fixes: [
        {
          title: `Save ${name}.state_dict()`,
          edits: [{ start: obj.from, end: obj.to, newText: `${name}.state_dict()` }],
          preferred: true,
        },
      ],
    });
  }
  return findings;
}
