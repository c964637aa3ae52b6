// QAT016: `quantize_(m, QATConfig(base_b, step="convert"))` after `quantize_(m, QATConfig(base_a, step="prepare"))`
// in the same function, on the same object m names, where every such prepare used a base config that differs from
// base_b: another config class, or the same class with another literal group size. torchao raises nothing:
// convert swaps the fake-quantized linears back and applies base_b to the trained float weights, so the int
// model is not the one the training simulated (test/rule-claims/test_qat016_convert_mismatch.py).
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { lines } from './helpers';
import { baseGroupSize, lastName, qatUses, spelled, type QatUse } from './torchaoQat';

function differs(input: RuleInput, a: QatUse, b: QatUse): boolean {
  if (!a.base || !b.base) return false;
  if (lastName(a.base) !== lastName(b.base)) return true;
  const ga = baseGroupSize(input, a.base);
  const gb = baseGroupSize(input, b.base);
  return ga !== undefined && gb !== undefined && ga !== gb;
}

export function qatConvertMismatch(input: RuleInput): StoredFinding[] {
  const uses = qatUses(input);
  const findings: StoredFinding[] = [];
  for (const conv of uses) {
    if (conv.step !== 'convert' || !conv.base) continue;
    const binding = conv.call.state?.vars.get(conv.model.dotted!)?.objs;
    const prepares = uses.filter(
      (p) =>
        p.step === 'prepare' &&
        p.call.run === conv.call.run &&
        p.call.from < conv.call.from &&
        p.model.dotted === conv.model.dotted &&
        sameList(p.call.state?.vars.get(p.model.dotted!)?.objs, binding),
    );
    if (!prepares.length || !prepares.every((p) => differs(input, p, conv))) continue;
    const trained = [...new Set(prepares.map((p) => spelled(input, p.base!)))].join(' or ');
    findings.push({
      code: 'QAT016',
      severity: 'warning',
      start: conv.base.from,
      end: conv.base.to,
      message:
        `${conv.model.dotted} was fake-quantized for ${trained} (${lines(
          input,
          prepares.map((p) => p.call.from),
        )}) but is ` +
        `converted with ${spelled(input, conv.base)}: torchao raises nothing and quantizes the trained float weights with ` +
        'the convert config, so the int model is not the one the training simulated. Pass the same base config to both steps.',
    });
  }
  return findings;
}

const sameList = (a: string[] | undefined, b: string[] | undefined) =>
  !!a && !!b && a.length === b.length && a.every((x) => b.includes(x));
