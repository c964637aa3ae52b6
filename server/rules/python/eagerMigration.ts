// QAT004 (information, once per file): eager / FX QAT is deprecated in torch (torch 2.13's
// torch.ao.quantization raises a DeprecationWarning saying it will be removed); the maintained path is torchao
// PT2E. The document keeps only the first of these (see index.ts).
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';

const EAGER_QAT = /^torch\.ao\.quantization(\.quantize_fx)?\.(prepare_qat|prepare_qat_fx|quantize_qat)$/;

export function eagerMigration(input: RuleInput): StoredFinding[] {
  const call = input.facts.calls.find((c) => !c.inRaises && c.qualified && EAGER_QAT.test(c.qualified));
  if (!call) return [];
  const name = call.callee![call.callee!.length - 1];
  return [
    {
      code: 'QAT004',
      severity: 'information',
      start: call.calleeSpan.from,
      end: call.calleeSpan.to,
      message:
        `${name} is eager/FX QAT, deprecated in torch (torch.ao.quantization warns it will be removed). ` +
        'The maintained flow is torchao PT2E: m = torch.export.export(model, (x,)).module(); ' +
        'm = prepare_qat_pt2e(m, X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))); ' +
        'train; m = convert_pt2e(m); move_exported_model_to_eval(m) before inference.',
    },
  ];
}

/** One QAT004 per file: the first in the text. */
export function firstMigrationHint(findings: StoredFinding[]): StoredFinding[] {
  const hints = findings.filter((f) => f.code === 'QAT004');
  if (hints.length < 2) return findings;
  const first = hints.reduce((a, b) => (b.start < a.start ? b : a));
  return findings.filter((f) => f.code !== 'QAT004' || f === first);
}
