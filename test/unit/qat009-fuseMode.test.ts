import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

test('QAT009: fuse_modules with a BatchNorm on a train-mode model is an error; fixes insert eval() or use fuse_modules_qat', () => {
  const src =
    'import torch.ao.quantization as tq\nmodel.train()\ntq.fuse_modules(model, [["conv", "bn", "relu"]], inplace=True)\n';
  const [f] = pyCodes(src, 'QAT009');
  assert.equal(f.severity, 'error');
  assert.equal(spanOf(src, f), 'tq.fuse_modules(model, [["conv", "bn", "relu"]], inplace=True)');
  assert.deepEqual(pyCodes(applyFix(src, f, 0), 'QAT009'), []);
  assert.match(applyFix(src, f, 1), /tq\.fuse_modules_qat\(model/);
});

test('QAT009: fuse_modules_qat on an eval-mode model that never trains again', () => {
  const src =
    'from torch.ao.quantization import fuse_modules, fuse_modules_qat\nmodel.eval()\nm = fuse_modules_qat(model, [["conv", "bn"]])\n';
  const [f] = pyCodes(src, 'QAT009');
  assert.equal(f.severity, 'warning');
  assert.match(applyFix(src, f), /m = fuse_modules\(model/);
});

test('QAT009 is quiet on correct fusion and conv+relu in train mode', () => {
  assert.deepEqual(
    pyCodes(
      'import torch.ao.quantization as tq\nmodel.eval()\ntq.fuse_modules(model, [["conv", "bn"]])\nmodel.train()\ntq.fuse_modules_qat(model, [["conv", "bn"]])\n',
      'QAT009',
    ),
    [],
  );
  assert.deepEqual(
    pyCodes(
      'import torch.ao.quantization as tq\nmodel.train()\ntq.fuse_modules(model, [["conv", "relu"]])\n',
      'QAT009',
    ),
    [],
  );
  assert.deepEqual(
    pyCodes(
      'import torch.ao.quantization as tq\nmodel.eval()\nm = tq.fuse_modules_qat(model, [["conv", "bn"]])\nm.train()\n',
      'QAT009',
    ),
    [],
  );
});

test("QAT009 through the file's own fuse_model(): a new module is in train mode", () => {
  const src = `import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()

    def fuse_model(self):
        self._fuse()

    def _fuse(self):
        torch.ao.quantization.fuse_modules(self, [["conv1", "bn1", "relu1"]], inplace=True)

def main():
    model = Net()
    model.fuse_model()
    ok = Net()
    ok.eval()
    ok.fuse_model()
`;
  const [f, ...rest] = pyCodes(src, 'QAT009');
  assert.deepEqual(rest, []);
  assert.equal(spanOf(src, f), 'model.fuse_model()');
  assert.match(f.message, /runs fuse_modules over \[\["conv1", "bn1", "relu1"\]\] \(line 15\)/);
  assert.match(f.message, /train mode \(line 18\)/);
  assert.deepEqual(pyCodes(applyFix(src, f), 'QAT009'), []);
});
