// QAT020: torchao's old QAT APIs (test/rule-claims/test_qat020_legacy_api.py). torchao 0.18 warns that
// IntXQuantizationAwareTrainingConfig, FromIntXQuantizationAwareTrainingConfig (and their lower-case aliases),
// FakeQuantizeConfig and FakeQuantizer "are deprecated and will be removed in a future release"; each has a
// one-to-one replacement that the fix writes. The Quantizer classes (Int8DynActInt4WeightQATQuantizer,
// Int4WeightOnlyQATQuantizer, Int4WeightOnlyEmbeddingQATQuantizer, Float8ActInt4WeightQATQuantizer,
// ComposableQATQuantizer) do not warn yet; torchao's QAT docs call them legacy and say they "may be removed
// soon". For the two with a QATConfig that fake-quantizes identically (checked by the claim), the fix writes it
// as comments above the call, as QAT004 does for PT2E.
import type { RuleInput } from '../../analysis/document';
import type { StoredEdit, StoredFinding } from '../../analysis/findings';
import { lineStartOf } from '../../analysis/syntax';
import type { CallInfo } from '../../analysis/walker';
import { ensureImported, type Fix } from './helpers';
import { lastName } from './torchaoQat';

const QAT = 'torchao.quantization.qat';
const WARNS = new Set([
  'IntXQuantizationAwareTrainingConfig',
  'intx_quantization_aware_training',
  'FromIntXQuantizationAwareTrainingConfig',
  'from_intx_quantization_aware_training',
  'FakeQuantizeConfig',
  'FakeQuantizer',
]);
const LEGACY = new Set([
  'Int8DynActInt4WeightQATQuantizer',
  'Int4WeightOnlyQATQuantizer',
  'Int4WeightOnlyEmbeddingQATQuantizer',
  'Float8ActInt4WeightQATQuantizer',
  'ComposableQATQuantizer',
]);

function inQat(c: CallInfo): string | undefined {
  const q = c.qualified;
  if (!q || !(q.startsWith(`${QAT}.`) || q.startsWith('torchao.quantization.prototype.qat.'))) return undefined;
  const name = lastName(c)!;
  return WARNS.has(name) || LEGACY.has(name) ? name : undefined;
}

/** The call rewritten, for the configs with a one-to-one replacement. */
function rewrite(input: RuleInput, c: CallInfo, name: string): Fix | undefined {
  const kw = Object.keys(c.keywords);
  const txt = (a: { from: number; to: number }) => input.text.slice(a.from, a.to);
  let newText: string | undefined;
  let imported: string;
  if (name === 'FakeQuantizeConfig' || name === 'FakeQuantizer') {
    imported = `Intx${name}`;
    newText = imported + input.text.slice(c.calleeSpan.to, c.to);
  } else {
    imported = 'QATConfig';
    if (/^from_?intx/i.test(name)) {
      if (c.args.length || kw.length) return undefined;
      newText = 'QATConfig(step="convert")';
    } else {
      if (c.args.length > 2 || kw.some((k) => k !== 'activation_config' && k !== 'weight_config')) return undefined;
      const act = c.args[0] ?? c.keywords.activation_config;
      const w = c.args[1] ?? c.keywords.weight_config;
      const parts = [act && `activation_config=${txt(act)}`, w && `weight_config=${txt(w)}`, 'step="prepare"'];
      newText = `QATConfig(${parts.filter(Boolean).join(', ')})`;
    }
  }
  const edits: StoredEdit[] = [{ start: c.from, end: c.to, newText }, ...ensureImported(input, QAT, imported)];
  return { title: `Use ${newText.length > 60 ? imported : newText}`, edits, preferred: true };
}

/** QATConfig recipes that fake-quantize exactly as the legacy quantizer does (the claim compares outputs). */
function recipe(c: CallInfo, name: string): string[] | undefined {
  const gs = (c.keywords.groupsize ?? c.keywords.group_size ?? c.args[0])?.text ?? '256';
  const onlyGroup = Object.keys(c.keywords).every((k) => k === 'groupsize' || k === 'group_size') && c.args.length <= 1;
  if (!onlyGroup) return undefined;
  if (name === 'Int8DynActInt4WeightQATQuantizer')
    return [
      'from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_',
      'from torchao.quantization.granularity import PerGroup',
      'from torchao.quantization.qat import QATConfig',
      '',
      `base_config = Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(${gs}))`,
      'quantize_(model, QATConfig(base_config, step="prepare"))',
      '# ... train ...',
      'quantize_(model, QATConfig(base_config, step="convert"))',
    ];
  if (name === 'Int4WeightOnlyEmbeddingQATQuantizer')
    return [
      'from torchao.quantization import quantize_',
      'from torchao.quantization.qat import IntxFakeQuantizeConfig, QATConfig',
      '',
      `weight_config = IntxFakeQuantizeConfig(torch.int4, group_size=${gs}, is_symmetric=True)`,
      'is_embedding = lambda m, _: isinstance(m, torch.nn.Embedding)',
      'quantize_(model, QATConfig(weight_config=weight_config, step="prepare"), filter_fn=is_embedding)',
      '# ... train ...',
      'quantize_(model, QATConfig(step="convert"), filter_fn=is_embedding)',
    ];
  return undefined;
}

export function qatLegacyApi(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const c of input.facts.calls) {
    if (c.inRaises) continue;
    const name = inQat(c);
    if (!name) continue;
    if (WARNS.has(name)) {
      const fix = rewrite(input, c, name);
      const instead = /^from_?intx/i.test(name)
        ? 'QATConfig(step="convert")'
        : name.startsWith('Fake')
          ? `Intx${name}`
          : 'QATConfig(activation_config=..., weight_config=..., step="prepare")';
      findings.push({
        code: 'QAT020',
        severity: 'information',
        start: c.calleeSpan.from,
        end: c.calleeSpan.to,
        message: `${name} is deprecated in torchao 0.18 (it warns that it will be removed); ${instead} does the same.`,
        fixes: fix ? [fix] : undefined,
      });
      continue;
    }
    const steps = recipe(c, name);
    const at = lineStartOf(input.text, c.stmt.from);
    findings.push({
      code: 'QAT020',
      severity: 'information',
      start: c.calleeSpan.from,
      end: c.calleeSpan.to,
      message:
        `${name} is torchao's legacy Quantizer API: its QAT docs say these "may be removed soon" and recommend ` +
        'quantize_ with QATConfig.',
      detail: steps
        ? `The same fake quantization with QATConfig:\n\n\`\`\`python\n${steps.join('\n')}\n\`\`\``
        : undefined,
      fixes: steps
        ? [
            {
              title: 'Insert the QATConfig steps as comments above',
              edits: [
                {
                  start: at,
                  end: at,
                  newText: ['QATConfig equivalent:', ...steps].map((l) => `${c.indent}#${l ? ` ${l}` : ''}\n`).join(''),
                },
              ],
            },
          ]
        : undefined,
    });
  }
  return findings;
}
