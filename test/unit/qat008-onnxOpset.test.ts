import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

const src = (opset: number) => `import torch
from torch.ao.quantization import convert
q = convert(prepared)
torch.onnx.export(q, (x,), "q.onnx", opset_version=${opset})
`;

test('QAT008: a converted model exported below opset 13, with a fix', () => {
  const text = src(11);
  const [f] = pyCodes(text, 'QAT008');
  assert.equal(spanOf(text, f), '11');
  assert.equal(f.severity, 'warning');
  assert.deepEqual(pyCodes(applyFix(text, f), 'QAT008'), []);
});

test('QAT008 is quiet at opset >= 13 and for float models', () => {
  assert.deepEqual(pyCodes(src(13), 'QAT008'), []);
  assert.deepEqual(pyCodes('import torch\ntorch.onnx.export(model, (x,), "f.onnx", opset_version=11)\n', 'QAT008'), []);
});
