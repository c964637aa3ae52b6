# expect: QAT004@56
"""A test module in the style of torch's and torchao's quantization tests: a base TestCase with helpers, many
small test methods, modes switched per test, expected failures under assertRaises."""
import copy
import unittest

import torch
import torch.ao.quantization as tq
from torch import nn
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


class ConvBnReLU(nn.Module):
    def __init__(self, with_bn=True):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3) if with_bn else nn.Identity()
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
    example_inputs = (torch.randn(2, 3, 8, 8),)

    def _quantizer(self, is_qat=False):
        return X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=is_qat))

    def _pt2e(self, model, is_qat=False):
        m = torch.export.export(model, self.example_inputs).module()
        m = (prepare_qat_pt2e if is_qat else prepare_pt2e)(m, self._quantizer(is_qat))
        m(*self.example_inputs)
        return convert_pt2e(m)

    def _eager_qat(self, model):
        model.train()
        model.qconfig = tq.get_default_qat_qconfig("x86")
        tq.fuse_modules_qat(model, [["block.conv", "block.bn", "block.relu"]], inplace=True)
        return tq.prepare_qat(model)


class TestEager(QuantizationTestCase):
    def test_prepare_qat_requires_train(self):
        model = EagerModel().eval()
        model.qconfig = tq.get_default_qat_qconfig("x86")
        with self.assertRaises(AssertionError):
            tq.prepare_qat(model)

    def test_fuse_requires_eval(self):
        model = EagerModel()
        with self.assertRaisesRegex(AssertionError, "Fusion only for eval"):
            tq.fuse_modules(model, [["block.conv", "block.bn", "block.relu"]])

    def test_convert(self):
        prepared = self._eager_qat(EagerModel())
        prepared(*self.example_inputs)
        quantized = tq.convert(copy.deepcopy(prepared).eval())
        self.assertEqual(quantized(*self.example_inputs).shape, (2, 3, 6, 6))

    def test_state_dict(self):
        prepared = self._eager_qat(EagerModel())
        quantized = tq.convert(prepared.eval())
        state = quantized.state_dict()
        self.assertTrue(any("scale" in k for k in state))


class TestPT2E(QuantizationTestCase):
    def test_ptq(self):
        quantized = self._pt2e(ConvBnReLU().eval())
        move_exported_model_to_eval(quantized)
        self.assertEqual(quantized(*self.example_inputs).shape, (2, 3, 6, 6))

    def test_qat(self):
        quantized = self._pt2e(ConvBnReLU(), is_qat=True)
        move_exported_model_to_eval(quantized)
        quantized(*self.example_inputs)

    def test_exported_refuses_eval(self):
        m = torch.export.export(ConvBnReLU(), self.example_inputs).module()
        with self.assertRaises(NotImplementedError):
            m.eval()

    def test_no_bn(self):
        quantized = self._pt2e(ConvBnReLU(with_bn=False).eval())
        move_exported_model_to_eval(quantized)
        self.assertIsNotNone(quantized(*self.example_inputs))


if __name__ == "__main__":
    unittest.main()
