import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

test('QAT011: batch-1 example with a dynamic batch dim, through a variable; the fix uses batch 2', () => {
  const src =
    'import torch\nfrom torch.export import Dim\nx = torch.randn(1, 3, 224, 224)\nep = torch.export.export(model, (x,), dynamic_shapes=({0: Dim("batch")},))\n';
  const [f] = pyCodes(src, 'QAT011');
  assert.equal(spanOf(src, f), '1');
  assert.equal(f.start, src.indexOf('randn(1') + 6);
  assert.deepEqual(pyCodes(applyFix(src, f), 'QAT011'), []);
  const inline =
    'from torch.export import export\nep = export(m, (torch.zeros((1, 8)),), dynamic_shapes={"x": {0: batch}})\n';
  assert.equal(pyCodes(inline, 'QAT011').length, 1);
});

test('QAT011 is quiet for static shapes and batch >= 2', () => {
  assert.deepEqual(
    pyCodes('import torch\nx = torch.randn(1, 3)\nep = torch.export.export(model, (x,))\n', 'QAT011'),
    [],
  );
  assert.deepEqual(
    pyCodes(
      'import torch\nx = torch.randn(2, 3)\nep = torch.export.export(model, (x,), dynamic_shapes=({0: b},))\n',
      'QAT011',
    ),
    [],
  );
});
