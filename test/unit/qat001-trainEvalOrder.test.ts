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

test('eager convert() of a model still in train mode is not reported: it gives the same int8 model', () => {
  // test/rule-claims/test_train_eval.py: on torch 2.13 the outputs of convert() after and without eval() are equal
  assert.deepEqual(
    codes(`from torch.ao.quantization import prepare_qat, convert
model.train(True)
prepared = prepare_qat(model)
int8 = convert(prepared)
int8(x)
`),
    [],
  );
});

test('QAT002: a convert_pt2e model called while its graph is still in train mode; the fix moves it to eval', () => {
  const src = `import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e, convert_pt2e
from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train
model = Net()
m = torch.export.export(model, (x,)).module()
m = prepare_qat_pt2e(m, quantizer)
move_exported_model_to_train(m)
m = convert_pt2e(m)
y = m(x)
`;
  assert.deepEqual(codes(src), ['QAT002']);
  const f = pythonFindings(src).find((x) => x.code === 'QAT002')!;
  assert.equal(spanOf(src, f), 'm');
  assert.match(f.message, /train mode \(line 7\)/);
  assert.match(f.message, /before or after convert_pt2e/);
  assert.deepEqual(codes(applyFix(src, f)), []);
  // torchao imposes no order: eval before convert and eval after it are both fine
  assert.deepEqual(codes(src.replace('move_exported_model_to_train(m)', 'move_exported_model_to_eval(m)')), []);
  assert.deepEqual(codes(src.replace('y = m(x)', 'move_exported_model_to_eval(m)\ny = m(x)')), []);
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

test('the train/eval state of an assertRaises body does not count, and nothing in it is reported', () => {
  const src = `import unittest
import torch
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e, convert_pt2e

class TestQAT(unittest.TestCase):
    def test_modes(self):
        m = torch.export.export(Net(), (torch.randn(2, 3),)).module()
        m = prepare_qat_pt2e(m, quantizer)
        move_exported_model_to_eval(m)
        with self.assertRaises(NotImplementedError):
            m.train()
        m = convert_pt2e(m)
        m(torch.randn(2, 3))
`;
  assert.deepEqual(
    pythonFindings(src).map((f) => f.code),
    [],
  );
  // without the with, m.train() raises (QAT015)
  const bare = src.replace(
    '        with self.assertRaises(NotImplementedError):\n            m.train()',
    '        m.train()',
  );
  assert.deepEqual(
    pythonFindings(bare).map((f) => f.code),
    ['QAT015'],
  );
});

test('QAT015: .eval() on an exported graph module; the fix uses move_exported_model_to_eval and imports it', () => {
  const src = `import torch
m = torch.export.export(model, (x,)).module()
m.eval()
`;
  const [f] = pythonFindings(src);
  assert.equal(f.code, 'QAT015');
  assert.equal(f.severity, 'error');
  const fixed = applyFix(src, f);
  assert.match(fixed, /^import torch\nfrom torchao\.quantization\.pt2e import move_exported_model_to_eval\n/);
  assert.match(fixed, /\nmove_exported_model_to_eval\(m\)\n/);
  assert.deepEqual(
    pythonFindings(fixed).map((x) => x.code),
    [],
  );
});

test('modes follow the file: helpers that call eval(), paths that disagree, loops', () => {
  const src = `import torch.ao.quantization as tq

def evaluate(model, batches):
    model.eval()
    return sum(model(x).sum() for x in batches)

def run(model, batches, fast):
    model.train()
    evaluate(model, batches)
    a = tq.prepare_qat(model)
    if fast:
        model.eval()
    b = tq.prepare_qat(model)
    for x in batches:
        model.train()
        model.eval()
    c = tq.prepare_qat(model)
    helper(model)
    d = tq.prepare_qat(model)
`;
  const lines = pythonFindings(src)
    .filter((f) => f.code === 'QAT001')
    .map((f) => src.slice(0, f.start).split('\n').length);
  // a: evaluate() left it in eval; b: eval on one path, eval from evaluate() on the other; c: the loop ran or
  // not, eval either way; d: helper() is unknown
  assert.deepEqual(lines, [10, 13, 17]);
});
