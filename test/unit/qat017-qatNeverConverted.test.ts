// test/rule-claims/test_qat017_never_converted.py: a prepared model keeps FakeQuantizedLinear and float weights.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pyCodes, spanOf } from './helpers/builder';

const HEAD =
  'from torchao.quantization import quantize_, Int4WeightOnlyConfig\nfrom torchao.quantization.qat import QATConfig\n';

test('QAT017: a prepare in a file that never converts', () => {
  const src = `${HEAD}model = build()\nquantize_(model, QATConfig(Int4WeightOnlyConfig(group_size=32)))\ntrain(model)\nsave(model)\n`;
  const [f] = pyCodes(src, 'QAT017');
  assert.equal(spanOf(src, f), 'QATConfig(Int4WeightOnlyConfig(group_size=32))');
  assert.match(f.message, /never converts/);
});

test('QAT017 is quiet when the file converts, mentions convert, or may run a PTQ quantize_', () => {
  const quiet = [
    `${HEAD}quantize_(m, QATConfig(Int4WeightOnlyConfig(), step="prepare"))\nquantize_(m, QATConfig(Int4WeightOnlyConfig(), step="convert"))\n`,
    `${HEAD}def prepare(m):\n    quantize_(m, QATConfig(Int4WeightOnlyConfig()))\n# convert: see deploy.py\n`,
    `${HEAD}quantize_(m, QATConfig(Int4WeightOnlyConfig()))\nquantize_(m, Int4WeightOnlyConfig())\n`,
    `${HEAD}quantize_(m, QATConfig(Int4WeightOnlyConfig(), step=step))\n`,
  ];
  for (const src of quiet) assert.deepEqual(pyCodes(src, 'QAT017'), [], src);
});
