// test/rule-claims/test_qat016_convert_mismatch.py: on torchao 0.18 a convert with another base config raises
// nothing and gives the convert config's PTQ of the trained weights.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pyCodes, spanOf } from './helpers/builder';

const HEAD =
  'import torch\nfrom torchao.quantization import quantize_, Int8DynamicActivationIntxWeightConfig, IntxWeightOnlyConfig\n' +
  'from torchao.quantization.granularity import PerGroup\nfrom torchao.quantization.qat import QATConfig, QATStep\n';
const A = 'Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32))';
const B = 'Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(16))';

test('QAT016: another group size or another config class at convert', () => {
  const src = `${HEAD}def run(model):\n    base = ${A}\n    quantize_(model, QATConfig(base, step="prepare"))\n    train(model)\n    quantize_(model, QATConfig(${B}, step=QATStep.CONVERT))\n`;
  const [f] = pyCodes(src, 'QAT016');
  assert.equal(spanOf(src, f), B);
  assert.match(f.message, /raises nothing/);
  const other = `${HEAD}quantize_(m, QATConfig(${A}))\nquantize_(m, QATConfig(IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)), step="convert"))\n`;
  assert.equal(pyCodes(other, 'QAT016').length, 1);
});

test('QAT016 is quiet for the same config, unknown configs, other models and either-branch prepares', () => {
  const quiet = [
    `${HEAD}base = ${A}\nquantize_(m, QATConfig(base, step="prepare"))\nquantize_(m, QATConfig(base, step="convert"))\n`,
    `${HEAD}quantize_(m, QATConfig(${A}))\nquantize_(m, QATConfig(${A}, step="convert"))\n`,
    `${HEAD}quantize_(m, QATConfig(make_config(), step="prepare"))\nquantize_(m, QATConfig(${B}, step="convert"))\n`,
    `${HEAD}quantize_(m, QATConfig(${A}))\nquantize_(other, QATConfig(${B}, step="convert"))\n`,
    `${HEAD}quantize_(m, QATConfig(${A}))\nm = load()\nquantize_(m, QATConfig(${B}, step="convert"))\n`,
    `${HEAD}if flag:\n    quantize_(m, QATConfig(${A}))\nelse:\n    quantize_(m, QATConfig(${B}))\nquantize_(m, QATConfig(${B}, step="convert"))\n`,
  ];
  for (const src of quiet) assert.deepEqual(pyCodes(src, 'QAT016'), [], src);
});
