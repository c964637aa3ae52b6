// Name resolution for the Python rules: aliases, `from torch import nn`, module aliases, star imports of known
// modules, locals that shadow, and what a local alias stands for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pyCodes } from './helpers/builder';

const evalThenPrepare = (header: string, call: string) => `${header}
def main(model):
    model.eval()
    return ${call}(model)
`;

test('prepare_qat resolves through every import style', () => {
  for (const [header, call] of [
    ['import torch.ao.quantization as tq', 'tq.prepare_qat'],
    ['from torch.ao import quantization as q', 'q.prepare_qat'],
    ['from torch.ao.quantization import prepare_qat as prep', 'prep'],
    ['from torch.ao.quantization import *', 'prepare_qat'],
    ['import torch\ntq = torch.ao.quantization', 'tq.prepare_qat'],
    ['import torch.ao.quantization as tq\nprepare = tq.prepare_qat', 'prepare'],
    ['import torch', 'torch.ao.quantization.prepare_qat'],
  ]) {
    assert.equal(pyCodes(evalThenPrepare(header, call), 'QAT001').length, 1, `${header} / ${call}`);
  }
});

test('names that are not the library are left alone', () => {
  for (const [header, call] of [
    ['from mylib import prepare_qat', 'prepare_qat'],
    ['import torch.ao.quantization as tq\ntq = load_plugin()', 'tq.prepare_qat'],
    ['from torch.ao.quantization import *\ndef prepare_qat(m):\n    return m', 'prepare_qat'],
    ['from torchvision.models import *', 'prepare_qat'],
  ]) {
    assert.deepEqual(pyCodes(evalThenPrepare(header, call), 'QAT001'), [], `${header} / ${call}`);
  }
  // a parameter shadows the import
  const shadow = `from torch.ao.quantization import prepare_qat
def main(model, prepare_qat):
    model.eval()
    return prepare_qat(model)
`;
  assert.deepEqual(pyCodes(shadow, 'QAT001'), []);
});

test('a local alias bound to one of two functions is neither', () => {
  const src = `import torch
def fuse(model, is_qat):
    fuse_modules = torch.ao.quantization.fuse_modules_qat if is_qat else torch.ao.quantization.fuse_modules
    model.train()
    fuse_modules(model, [["conv", "bn", "relu"]], inplace=True)
`;
  assert.deepEqual(pyCodes(src, 'QAT009'), []);
  const plain = src.replace(
    'torch.ao.quantization.fuse_modules_qat if is_qat else torch.ao.quantization.fuse_modules',
    'torch.ao.quantization.fuse_modules',
  );
  assert.equal(pyCodes(plain, 'QAT009').length, 1);
});
