import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pythonFindings } from '../../server/services/pythonDiagnostics';
import { applyFix, spanOf } from './helpers/builder';

// QAT001 and QAT002 share the train/eval tracking, so they share a file.
const codes = (src: string) =>
  pythonFindings(src)
    .map((f) => f.code)
    .filter((c) => c === 'QAT001' || c === 'QAT002');

test('QAT001 fires when prepare_qat gets a model last put in eval mode; the fix inserts train()', () => {
  const src = `from torch.ao.quantization import prepare_qat, convert
def main(model):
    model.eval()
    model = prepare_qat(model)
`;
  const f = pythonFindings(src).find((x) => x.code === 'QAT001')!;
  assert.equal(spanOf(src, f), 'prepare_qat(model)');
  assert.match(f.message, /last put in eval mode \(line 3\)/);
  const fixed = applyFix(src, f);
  assert.match(fixed, /model\.eval\(\)\n {4}model\.train\(\)\n {4}model = prepare_qat\(model\)/);
  assert.deepEqual(codes(fixed), []);
});

test('QAT001 is quiet when train() comes after eval()', () => {
  assert.deepEqual(
    codes(`import torch.ao.quantization as tq
def main(model):
    model.eval()
    model.train()
    model = tq.prepare_qat(model)
    model.eval()
    q = tq.convert(model)
`),
    [],
  );
});

test('QAT002 fires on convert of a model still in train mode, also through train(True)', () => {
  const src = `from torch.ao.quantization import prepare_qat, convert
model.train(True)
prepared = prepare_qat(model)
int8 = convert(prepared)
`;
  assert.deepEqual(codes(src), ['QAT002']);
  const f = pythonFindings(src).find((x) => x.code === 'QAT002')!;
  assert.match(f.message, /Call prepared\.eval\(\) before converting/);
  assert.deepEqual(codes(applyFix(src, f)), []);
});

test('QAT002 knows the PT2E mode helpers', () => {
  const bad = `from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e, convert_pt2e
from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train
move_exported_model_to_train(m)
m = convert_pt2e(m)
`;
  assert.deepEqual(codes(bad), ['QAT002']);
  assert.deepEqual(codes(bad.replace('move_exported_model_to_train(m)', 'move_exported_model_to_eval(m)')), []);
});

test('scopes are separate and unrelated convert() calls are ignored', () => {
  assert.deepEqual(
    codes(`from torch.ao.quantization import prepare_qat
def a(model):
    model.eval()
def b(model):
    return prepare_qat(model)
img.train()
img = img.convert("RGB")
x = convert(img)
`),
    [],
  );
});

test('train(False) counts as eval', () => {
  assert.deepEqual(
    codes(`import torch
model.train(False)
model = torch.ao.quantization.prepare_qat(model)
`),
    ['QAT001'],
  );
});

test('never throws on partial input', () => {
  for (const src of ['model.eval(\nprepare_qat(', 'def f(:\n  model.train(', '', 'convert(']) {
    assert.doesNotThrow(() => pythonFindings(src));
  }
});
