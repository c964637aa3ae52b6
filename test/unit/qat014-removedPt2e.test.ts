import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyFix, pyCodes, spanOf } from './helpers/builder';

// test/rule-claims/test_qat014_removed_pt2e.py checks each removal and replacement on torch 2.13 / torchao 0.18.

test('QAT014: removed torch.ao PT2E modules in imports, each with a fix to torchao', () => {
  const src = `import torch
from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e
from torch.ao.quantization.quantizer.x86_inductor_quantizer import X86InductorQuantizer
import torch.ao.quantization.quantizer.x86_inductor_quantizer as xiq
`;
  const found = pyCodes(src, 'QAT014');
  assert.deepEqual(
    found.map((f) => spanOf(src, f)),
    [
      'torch.ao.quantization.quantize_pt2e',
      'torch.ao.quantization.quantizer.x86_inductor_quantizer',
      'torch.ao.quantization.quantizer.x86_inductor_quantizer',
    ],
  );
  assert.ok(found.every((f) => f.severity === 'error'));
  assert.match(found[0].message, /ModuleNotFoundError/);
  let fixed = src;
  for (let f = pyCodes(fixed, 'QAT014')[0]; f; f = pyCodes(fixed, 'QAT014')[0]) fixed = applyFix(fixed, f);
  assert.equal(
    fixed,
    `import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import X86InductorQuantizer
import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
`,
  );
});

test('QAT014: moved names and removed functions, in imports and in code', () => {
  const src = `import torch
from torch._export import capture_pre_autograd_graph
from torch.ao.quantization import get_default_qconfig, move_exported_model_to_eval
import torch.ao.quantization as tq

m = capture_pre_autograd_graph(model, (x,))
tq.move_exported_model_to_eval(m)
p = torch.export.export_for_training(model, (x,)).module()
`;
  const found = pyCodes(src, 'QAT014');
  assert.deepEqual(found.map((f) => spanOf(src, f)).sort(), [
    'capture_pre_autograd_graph',
    'capture_pre_autograd_graph',
    'move_exported_model_to_eval',
    'torch.export.export_for_training',
    'tq.move_exported_model_to_eval',
  ]);
  let fixed = src;
  for (let f = pyCodes(fixed, 'QAT014')[0]; f; f = pyCodes(fixed, 'QAT014')[0]) fixed = applyFix(fixed, f);
  assert.equal(
    fixed,
    `import torch
from torch.ao.quantization import get_default_qconfig
import torch.ao.quantization as tq
from torchao.quantization.pt2e import move_exported_model_to_eval

m = torch.export.export(model, (x,)).module()
move_exported_model_to_eval(m)
p = torch.export.export(model, (x,)).module()
`,
  );
});

test('QAT014 leaves fallbacks for older torch alone', () => {
  const src = `try:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
except ImportError:
    from torch.ao.quantization.quantize_pt2e import prepare_pt2e
if TORCH_VERSION < (2, 6):
    from torch._export import capture_pre_autograd_graph
`;
  assert.deepEqual(pyCodes(src, 'QAT014'), []);
});

test('QAT014: names the new module lacks get no fix (XNNPACKQuantizer went to ExecuTorch)', () => {
  const src =
    'from torch.ao.quantization.quantizer import (\n    XNNPACKQuantizer,\n    get_symmetric_quantization_config,\n)\n';
  const [f] = pyCodes(src, 'QAT014');
  assert.equal(f.fixes, undefined);
  assert.match(f.message, /ExecuTorch/);
  const ok = 'from torch.ao.quantization.quantizer import QuantizationSpec, Quantizer\n';
  assert.match(
    applyFix(ok, pyCodes(ok, 'QAT014')[0]),
    /^from torchao\.quantization\.pt2e\.quantizer import QuantizationSpec/,
  );
});

test('a fallback def in `except ImportError` keeps the imported helper', () => {
  const src = `import torch
try:
    from torchao.quantization.pt2e import move_exported_model_to_train
except ImportError:
    def move_exported_model_to_train(model):
        model.train()
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e
model = Net()
model.eval()
q = convert_pt2e(torch.export.export(model, (x,)).module())
move_exported_model_to_train(q)
q(x)
`;
  assert.equal(pyCodes(src, 'QAT002').length, 1);
});
