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
