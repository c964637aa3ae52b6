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
