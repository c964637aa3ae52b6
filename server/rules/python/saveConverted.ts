// QAT012: torch.save(model) of an eager-converted int8 model (on every path): it pickles and loads, and then
// the forward of its quantized convs fails ("'Conv2d' object has no attribute '_backward_hooks'" on torch
// 2.13; a Linear-only model survives). The state_dict round-trips.
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { mustAll } from '../../analysis/state';

export function saveConverted(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const call of input.facts.calls) {
    if (call.qualified !== 'torch.save' || !call.state) continue;
    const obj = call.args[0] ?? call.keywords.obj;
    if (!obj?.dotted || !mustAll(call.state, obj.dotted, (f) => f.converted?.kind === 'eager')) continue;
    const name = obj.dotted;
    findings.push({
      code: 'QAT012',
      severity: 'warning',
      start: obj.from,
      end: obj.to,
      message:
        `torch.save('${name}') pickles the whole converted int8 model: on torch 2.13 its quantized conv modules load without ` +
        `'_backward_hooks' and forward then fails (AttributeError; a Linear-only model survives). Save ${name}.state_dict() ` +
        'and load it into a model prepared and converted the same way.',
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
