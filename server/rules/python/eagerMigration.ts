// QAT004 (information, once per file): eager / FX QAT is deprecated in torch (torch 2.13's
// torch.ao.quantization raises a DeprecationWarning saying it will be removed); the maintained path is torchao
// PT2E. The message is one sentence; the migration recipe is the hover's detail and a quick fix that writes it
// as comments above the call. The document keeps only the first of these (see index.ts).
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { lineStartOf } from '../../analysis/syntax';

const EAGER_QAT = /^torch\.ao\.quantization(\.quantize_fx)?\.(prepare_qat|prepare_qat_fx|quantize_qat)$/;

/** The PT2E QAT steps with the pinned torchao's import paths (pipeline/pt2e_flow.py uses the same). */
export const PT2E_RECIPE = [
  'from torchao.quantization.pt2e import move_exported_model_to_eval',
  'from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e',
  'from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (',
  '    X86InductorQuantizer, get_default_x86_inductor_quantization_config)',
  '',
  'm = torch.export.export(model, (example_input,)).module()',
  'quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))',
  'm = prepare_qat_pt2e(m, quantizer)',
  '# ... train m as before ...',
  'm = convert_pt2e(m)',
  'move_exported_model_to_eval(m)  # before inference, instead of m.eval()',
];

export function eagerMigration(input: RuleInput): StoredFinding[] {
  const call = input.facts.calls.find((c) => !c.inRaises && c.qualified && EAGER_QAT.test(c.qualified));
  if (!call) return [];
  const name = call.callee![call.callee!.length - 1];
  const at = lineStartOf(input.text, call.stmt.from);
  const comment = ['PT2E QAT (torchao), the maintained replacement:', ...PT2E_RECIPE]
    .map((l) => `${call.indent}#${l ? ` ${l}` : ''}\n`)
    .join('');
  return [
    {
      code: 'QAT004',
      severity: 'information',
      start: call.calleeSpan.from,
      end: call.calleeSpan.to,
      message: `${name} is eager/FX QAT, deprecated in torch; the maintained flow is torchao PT2E.`,
      detail:
        'torch.ao.quantization warns that eager and FX quantization will be removed. The PT2E steps:\n\n' +
        `\`\`\`python\n${PT2E_RECIPE.join('\n')}\n\`\`\``,
      fixes: [
        { title: 'Insert the PT2E QAT steps as comments above', edits: [{ start: at, end: at, newText: comment }] },
      ],
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
