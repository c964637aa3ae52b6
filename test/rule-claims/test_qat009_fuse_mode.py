"""QAT009: fuse_modules over conv+bn asserts in train mode (conv+relu alone fuses in train mode); the fused
QAT modules of fuse_modules_qat on an eval model stay float through prepare/convert and prepare_qat refuses
them in eval mode, while fuse_modules folds BN away."""

import pytest
import torch
import torch.ao.nn.intrinsic as nni
import torch.ao.nn.intrinsic.qat as nniqat
import torch.ao.quantization as tq
from conftest import ConvBnRelu


def test_fuse_modules_with_bn_asserts_in_train_mode():
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        tq.fuse_modules(ConvBnRelu().train(), [["conv", "bn", "relu"]])


def test_fuse_modules_without_bn_works_in_train_mode():
    fused = tq.fuse_modules(ConvBnRelu().train(), [["conv", "relu"]])
    assert isinstance(fused.conv, nni.ConvReLU2d)


def test_a_fuse_model_helper_raises_the_same():
    class Net(ConvBnRelu):
        def fuse_model(self):
            tq.fuse_modules(self, [["conv", "bn", "relu"]], inplace=True)

    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        Net().fuse_model()  # a new module is in train mode
    Net().eval().fuse_model()


def test_fuse_modules_qat_on_an_eval_model_stays_float_under_ptq():
    fused = tq.fuse_modules_qat(ConvBnRelu().eval(), [["conv", "bn", "relu"]])
    assert isinstance(fused.conv, nni.ConvBnReLU2d)
    fused.qconfig = tq.get_default_qconfig("x86")
    prepared = tq.prepare(fused)
    prepared(torch.randn(2, 3, 8, 8))
    assert type(tq.convert(prepared).conv) is nni.ConvBnReLU2d, "left in float, not quantized"
    with pytest.raises(AssertionError, match="training mode"):
        tq.prepare_qat(fused)
    assert not isinstance(tq.fuse_modules(ConvBnRelu().eval(), [["conv", "bn", "relu"]]).conv, nniqat.ConvBnReLU2d)
