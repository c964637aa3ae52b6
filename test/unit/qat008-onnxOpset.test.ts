import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

// test/rule-claims/test_onnx_export.py checks each claim on torch 2.13 / onnx 1.23.
const src = (opset: number, extra = ', dynamo=False') => `import torch
from torch.ao.quantization import convert
q = convert(prepared)
torch.onnx.export(q, (x,), "q.onnx", opset_version=${opset}${extra})
`;

test('QAT008: an eager-converted model exported with dynamo=False below opset 13, with a fix', () => {
  const text = src(11);
  const [f] = pyCodes(text, 'QAT008');
  assert.equal(spanOf(text, f), '11');
  assert.equal(f.severity, 'error');
  assert.match(f.message, /Unsupported: ONNX export of DequantizeLinear in opset 11/);
  assert.deepEqual(pyCodes(applyFix(text, f), 'QAT008'), []);
});

test('QAT008: an eager-converted model with the default (dynamo) exporter fails at any opset; the fix passes dynamo=False', () => {
  for (const opset of [11, 17]) {
    const text = src(opset, '');
    const [f] = pyCodes(text, 'QAT008');
    assert.equal(spanOf(text, f), 'q');
    assert.match(f.message, /TorchExportError/);
    assert.deepEqual(pyCodes(applyFix(text, f), 'QAT008'), []);
  }
});

test('QAT008: a PT2E-converted model below opset 13 comes out at opset 18', () => {
  const text = `import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e
q = convert_pt2e(prepared)
torch.onnx.export(q, (x,), "q.onnx", opset_version=12)
`;
  const [f] = pyCodes(text, 'QAT008');
  assert.equal(spanOf(text, f), '12');
  assert.match(f.message, /writes opset 18 instead of 12/);
  assert.deepEqual(pyCodes(applyFix(text, f), 'QAT008'), []);
});

test('QAT008 is quiet at opset >= 13 with dynamo=False, and for float models', () => {
  assert.deepEqual(pyCodes(src(13), 'QAT008'), []);
  assert.deepEqual(pyCodes('import torch\ntorch.onnx.export(model, (x,), "f.onnx", opset_version=11)\n', 'QAT008'), []);
});
