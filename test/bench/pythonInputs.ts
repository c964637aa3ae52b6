// Python inputs for the language-server benchmark: a ~2,000-line script made of the fixture scripts, and a
// ~4,300-line test module in the style of torch's and torchao's quantization tests. Each names one edit
// site; every edit writes a value not written before, so no edit is answered from a cache of an earlier text.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/paths';

export interface PyInput {
  name: string;
  text: string;
  lines: number;
  editLine: number;
  editChar: number;
  /** The text at the edit site before the first edit. */
  initial: string;
  /** The text the i-th edit writes (same length as `initial`). */
  value: (i: number) => string;
  /** What the edits change, for the printed description. */
  describe: string;
}

const rename = (src: string, copy: number) => {
  for (const name of new Set([...src.matchAll(/^(?:def|class)\s+(\w+)/gm)].map((m) => m[1])))
    src = src.replace(new RegExp(`(?<![\\w.])${name}\\b`, 'g'), `${name}_${copy}`);
  return src;
};

function editSite(out: string[], re: RegExp, token: string, target: number): { line: number; char: number } {
  const candidates = out.map((l, i) => (re.test(l) ? i : -1)).filter((i) => i >= 0);
  if (!candidates.length) throw new Error(`no line matching ${re} to edit in the benchmark input`);
  const line = candidates.reduce((a, b) => (Math.abs(b - target) < Math.abs(a - target) ? b : a));
  return { line, char: out[line].indexOf(token) };
}

/**
 * The fixture scripts of test/unit/fixtures-python, copy after copy (top-level defs and classes renamed per
 * copy) until `lines`. The edit is the quant_max of a quint8 FakeQuantize.with_args near the middle: values
 * alternate between out of range (>= 300, QAT007) and in range (< 256), each one new.
 */
export function buildFixtureScript(lines = 2000): PyInput {
  const dir = path.join(repoRoot, 'test', 'unit', 'fixtures-python');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.py'))
    .sort();
  const out = [
    '# Benchmark input: the fixture scripts of test/unit/fixtures-python, repeated with renamed definitions.',
  ];
  fill: for (let copy = 1; ; copy++) {
    for (const file of files) {
      const src = rename(readFileSync(path.join(dir, file), 'utf8').replace(/^# expect:.*\n/, ''), copy);
      const block = [`# ---- ${file}, copy ${copy} ----`, ...src.replace(/\s+$/, '').split('\n'), '', ''];
      if (out.length + block.length > lines) break fill;
      out.push(...block);
    }
  }
  while (out.length < lines) out.push('# (padding to the benchmark size)');
  const site = editSite(out, /FakeQuantize\.with_args\(.*quant_max=300\b/, 'quant_max=300', lines / 2);
  return {
    name: 'script',
    text: out.join('\n') + '\n',
    lines: out.length,
    editLine: site.line,
    editChar: site.char + 'quant_max='.length,
    initial: '300',
    value: (i) => String(i % 2 === 0 ? 100 + (i % 150) : 300 + (i % 600)),
    describe: 'quant_max of a FakeQuantize, in range and out of range in turn (QAT007 comes and goes)',
  };
}

/** One test class of the long test module (its names suffixed per copy). */
function testClass(k: number): string {
  return `class TestQuantize${k}(QuantizationTestCase):
    def setUp(self):
        self.example_inputs = (torch.randn(2, 3, 8, 8),)
        self.quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config())

    def _convert(self, model, is_qat=False):
        m = torch.export.export(model, self.example_inputs).module()
        m = (prepare_qat_pt2e if is_qat else prepare_pt2e)(m, self.quantizer)
        m(*self.example_inputs)
        return convert_pt2e(m)

    def test_conv_bn_relu(self):
        quantized = self._convert(ConvBnReLU().eval())
        move_exported_model_to_eval(quantized)
        tolerance = 0.0500
        self.assertTrue(torch.allclose(quantized(*self.example_inputs), quantized(*self.example_inputs), atol=tolerance))

    def test_qat_modes(self):
        m = torch.export.export(ConvBnReLU(), self.example_inputs).module()
        m = prepare_qat_pt2e(m, self.quantizer)
        with self.assertRaises(NotImplementedError):
            m.eval()
        move_exported_model_to_eval(m)
        move_exported_model_to_train(m)
        m(*self.example_inputs).sum().backward()

    def test_convert_order(self):
        m = prepare_qat_pt2e(torch.export.export(ConvBnReLU(), self.example_inputs).module(), self.quantizer)
        a = copy.deepcopy(m)
        move_exported_model_to_eval(a)
        a = convert_pt2e(a)
        b = convert_pt2e(copy.deepcopy(m))
        move_exported_model_to_eval(b)
        torch.testing.assert_close(a(*self.example_inputs), b(*self.example_inputs))

    def test_eager_qat(self):
        model = EagerModel()
        model.train()
        model.qconfig = tq.get_default_qat_qconfig("x86")
        tq.fuse_modules_qat(model, [["block.conv", "block.bn", "block.relu"]], inplace=True)
        prepared = tq.prepare_qat(model)
        for _ in range(2):
            prepared(*self.example_inputs)
        prepared.eval()
        quantized = tq.convert(prepared)
        self.assertEqual(quantized(*self.example_inputs).shape, (2, 3, 6, 6))

    def test_prepare_qat_needs_train(self):
        model = EagerModel().eval()
        model.qconfig = tq.get_default_qat_qconfig("x86")
        with self.assertRaises(AssertionError):
            tq.prepare_qat(model)

    def test_fuse_needs_eval(self):
        model = EagerModel()
        with self.assertRaisesRegex(AssertionError, "Fusion only for eval"):
            tq.fuse_modules(model, [["block.conv", "block.bn", "block.relu"]])
        model.eval()
        tq.fuse_modules(model, [["block.conv", "block.bn", "block.relu"]], inplace=True)
        for name, mod in model.named_modules():
            if isinstance(mod, nn.BatchNorm2d):
                self.fail(name)

`;
}

const MODULE_HEAD = `"""Benchmark input: a long quantization test module (test classes in the style of torchao's PT2E tests)."""
import copy
import unittest

import torch
import torch.ao.quantization as tq
from torch import nn
from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


class ConvBnReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class EagerModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.block = ConvBnReLU()
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.block(self.quant(x)))


class QuantizationTestCase(unittest.TestCase):
    pass


`;

/** A ~`lines`-line test module: test classes one after another; the edit is a tolerance literal in the middle one. */
export function buildTestModule(lines = 4300): PyInput {
  const out = MODULE_HEAD.split('\n');
  for (let k = 1; out.length < lines - 80; k++) out.push(...testClass(k).split('\n'));
  out.push('', 'if __name__ == "__main__":', '    unittest.main()');
  const site = editSite(out, /tolerance = 0\.0500$/, '0.0500', out.length / 2);
  return {
    name: 'test module',
    text: out.join('\n') + '\n',
    lines: out.length,
    editLine: site.line,
    editChar: site.char,
    initial: '0.0500',
    value: (i) => `0.${String(1000 + i).slice(-4)}`,
    describe: 'a tolerance literal inside a test method',
  };
}
