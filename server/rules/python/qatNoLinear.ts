// QAT019: a QAT prepare (no filter_fn) on a model whose class is defined in this file and whose __init__
// assigns only torch.nn modules, with convolutions and no Linear or Embedding. quantize_'s default filter
// takes nn.Linear only, and QATConfig fake-quantizes Linear and Embedding: the convolutions are left as they
// are, no error, no warning, and the training that follows is plain float training
// (test/rule-claims/test_qat019_conv_only.py). Classes that build modules another way (loops, setattr,
// helpers, in-file bases) are left alone.
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { modulesOf, qatUses } from './torchaoQat';

export function qatNoLinear(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const use of qatUses(input)) {
    if (use.step !== 'prepare' || use.filtered) continue;
    const mods = modulesOf(input, use);
    if (!mods?.complete || !mods.leaves.some((l) => /^Conv(Transpose)?[123]d$/.test(l.m))) continue;
    if (mods.leaves.some((l) => /Linear|Embedding|MultiheadAttention|Transformer|RNN|LSTM|GRU/.test(l.m))) continue;
    findings.push({
      code: 'QAT019',
      severity: 'warning',
      start: use.config.from,
      end: use.config.to,
      message:
        `${mods.cls} has convolutions and no nn.Linear or nn.Embedding: QATConfig fake-quantizes only those, so this ` +
        'prepare leaves the model unchanged (no error) and training it is plain float training. For convolutions use PT2E ' +
        'QAT (prepare_qat_pt2e with X86InductorQuantizer).',
    });
  }
  return findings;
}
