// test/rule-claims/test_qat020_legacy_api.py: which names warn on torchao 0.18, and that the replacements match.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

test('QAT020: deprecated configs are rewritten to QATConfig / IntxFakeQuantizeConfig', () => {
  const src =
    'import torch\nfrom torchao.quantization import quantize_\n' +
    'from torchao.quantization.qat import IntXQuantizationAwareTrainingConfig, FromIntXQuantizationAwareTrainingConfig, FakeQuantizeConfig\n' +
    'w = FakeQuantizeConfig(torch.int4, group_size=32)\nquantize_(m, IntXQuantizationAwareTrainingConfig(act, w))\n' +
    'quantize_(m, FromIntXQuantizationAwareTrainingConfig())\n';
  const found = pyCodes(src, 'QAT020');
  assert.deepEqual(
    found.map((f) => spanOf(src, f)),
    ['FakeQuantizeConfig', 'IntXQuantizationAwareTrainingConfig', 'FromIntXQuantizationAwareTrainingConfig'],
  );
  let fixed = src;
  for (let f = pyCodes(fixed, 'QAT020')[0]; f; f = pyCodes(fixed, 'QAT020')[0]) fixed = applyFix(fixed, f);
  assert.match(fixed, /w = IntxFakeQuantizeConfig\(torch\.int4, group_size=32\)/);
  assert.match(fixed, /quantize_\(m, QATConfig\(activation_config=act, weight_config=w, step="prepare"\)\)/);
  assert.match(fixed, /quantize_\(m, QATConfig\(step="convert"\)\)/);
  assert.match(fixed, /^from torchao\.quantization\.qat import QATConfig$/m);
});

test('QAT020: legacy quantizers get the QATConfig steps as comments where they are the same', () => {
  const src =
    'from torchao.quantization.qat import Int8DynActInt4WeightQATQuantizer, Int4WeightOnlyQATQuantizer\n' +
    'def main(model):\n    q = Int8DynActInt4WeightQATQuantizer(groupsize=32)\n    model = q.prepare(model)\n' +
    '    Int4WeightOnlyQATQuantizer(groupsize=32)\n';
  const [a, b] = pyCodes(src, 'QAT020');
  assert.equal(a.severity, 'information');
  const fixed = applyFix(src, a);
  assert.match(
    fixed,
    / {4}# base_config = Int8DynamicActivationIntxWeightConfig\(weight_dtype=torch\.int4, weight_granularity=PerGroup\(32\)\)\n/,
  );
  assert.equal(b.fixes, undefined);
  assert.deepEqual(pyCodes('from torchao.quantization.qat import QATConfig\nQATConfig(base)\n', 'QAT020'), []);
});
