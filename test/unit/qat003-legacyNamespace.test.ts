import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

test('QAT003: torch.quantization in imports and in code, each with a rename fix', () => {
  const src =
    'import torch.quantization as tq\nfrom torch.quantization.quantize_fx import prepare_qat_fx\nq = torch.quantization.default_qat_qconfig\nfrom torch.nn.intrinsic.qat import freeze_bn_stats\n';
  const hits = pyCodes(src, 'QAT003');
  assert.deepEqual(
    hits.map((f) => spanOf(src, f)),
    ['torch.quantization', 'torch.quantization', 'torch.nn.intrinsic', 'torch.quantization'],
  );
  assert.equal(hits[0].severity, 'warning');
  let fixed = src;
  for (let f = pyCodes(fixed, 'QAT003')[0]; f; f = pyCodes(fixed, 'QAT003')[0]) fixed = applyFix(fixed, f);
  assert.equal(
    fixed,
    'import torch.ao.quantization as tq\nfrom torch.ao.quantization.quantize_fx import prepare_qat_fx\nq = torch.ao.quantization.default_qat_qconfig\nfrom torch.ao.nn.intrinsic.qat import freeze_bn_stats\n',
  );
});

test('QAT003 is quiet on torch.ao and on look-alikes', () => {
  assert.deepEqual(
    pyCodes(
      'import torch.ao.quantization\nfrom torch.ao.nn.intrinsic.qat import freeze_bn_stats\nmy.torch.quantization = 1\nquantization = torch.ao.quantization\n',
      'QAT003',
    ),
    [],
  );
});

test('QAT003 through names: nn.quantized after `from torch import nn`, and aliases of torch', () => {
  const src =
    'from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        self.add = nn.quantized.FloatFunctional()\n';
  const [f] = pyCodes(src, 'QAT003');
  assert.equal(spanOf(src, f), 'nn.quantized');
  assert.match(f.message, /nn\.quantized is torch\.nn\.quantized/);
  const fixed = applyFix(src, f);
  assert.match(fixed, /^from torch import nn\nimport torch\n/);
  assert.match(fixed, /self\.add = torch\.ao\.nn\.quantized\.FloatFunctional\(\)/);
  assert.deepEqual(pyCodes(fixed, 'QAT003'), []);
  assert.equal(pyCodes('import torch as t\nq = t.quantization.default_qat_qconfig\n', 'QAT003').length, 1);
});
