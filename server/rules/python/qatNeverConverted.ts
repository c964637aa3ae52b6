// QAT017: a torchao QAT prepare (`quantize_(m, QATConfig(..., step="prepare"))`, or the default step) in a file
// that never converts: no `convert` anywhere in it (code, strings or comments: `step="convert"`,
// `QATStep.CONVERT`, `quantizer.convert(...)`, a "convert later" note all count), no deprecated
// FromIntXQuantizationAwareTrainingConfig, and no quantize_ call that could be a PTQ step (every quantize_
// has a QATConfig to go with it). The model keeps its FakeQuantizedLinear modules: it runs in float with
// simulated rounding and is no smaller or faster (test/rule-claims/test_qat017_never_converted.py).
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { qatUses } from './torchaoQat';

export function qatNeverConverted(input: RuleInput): StoredFinding[] {
  if (input.ctx.flags.qatConverts) return [];
  return qatUses(input)
    .filter((u) => u.step === 'prepare')
    .map((u) => ({
      code: 'QAT017',
      severity: 'warning' as const,
      start: u.config.from,
      end: u.config.to,
      message:
        `${u.model.dotted} is prepared for QAT here and this file never converts it: its linears stay FakeQuantizedLinear, ` +
        'float weights with simulated rounding, no smaller and no faster. After training, convert: ' +
        'quantize_(model, QATConfig(base_config, step="convert")) with the base config the prepare used.',
    }));
}
