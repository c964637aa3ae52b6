# expect: none
"""Tests in the style of torchao's test_quantize_pt2e_qat.py: an exported model refuses .train()/.eval(),
the torchao helpers switch its mode, allow_exported_model_train_eval re-enables the methods, and the order of
move_exported_model_to_eval and convert_pt2e does not matter."""
import copy
import unittest

import torch
from torch import nn
from torchao.quantization.pt2e import (
    allow_exported_model_train_eval,
    move_exported_model_to_eval,
    move_exported_model_to_train,
)
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x):
        return self.dropout(self.bn(self.conv(x)))


class TestQATModes(unittest.TestCase):
    def setUp(self):
        self.example_inputs = (torch.randn(2, 3, 5, 5),)
        self.quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))

    def _prepared(self):
        m = torch.export.export(M(), self.example_inputs).module()
        return prepare_qat_pt2e(m, self.quantizer)

    def test_train_eval_raise(self):
        m = self._prepared()
        with self.assertRaises(NotImplementedError):
            m.eval()
        with self.assertRaises(NotImplementedError):
            m.train()
        move_exported_model_to_eval(m)
        m(*self.example_inputs)

    def test_allow_train_eval(self):
        m = self._prepared()
        allow_exported_model_train_eval(m)
        m.eval()
        m(*self.example_inputs)
        m.train()
        m(*self.example_inputs)

    def test_convert_order(self):
        m = self._prepared()
        m1 = copy.deepcopy(m)
        move_exported_model_to_eval(m1)
        m1 = convert_pt2e(m1)
        m2 = convert_pt2e(copy.deepcopy(m))
        move_exported_model_to_eval(m2)
        torch.testing.assert_close(m1(*self.example_inputs), m2(*self.example_inputs))

    def test_train_again(self):
        m = self._prepared()
        move_exported_model_to_eval(m)
        move_exported_model_to_train(m)
        m(*self.example_inputs).sum().backward()


if __name__ == "__main__":
    unittest.main()
