"""QAT on real initialisations: zero-init BatchNorm gamma (timm's zero_init_last) and pruned channels train,
compare and convert with a warning in the result; a NaN at a layer or a loss that overflows ends the run
with a nonFinite error naming the layer and the step (pipeline/health.py)."""

import copy
import math
import re
import textwrap
from pathlib import Path

import pytest
import torch
from conftest import copy_example, edit_config
from rpc_client import RpcError

from qat_kernel.pipeline import health, pt2e_flow, qconfig
from qat_kernel.pipeline.config import load_config

NON_FINITE = -32005

RESNET = '''
"""A small residual net whose blocks end in a BatchNorm with gamma = 0 (timm's zero_init_last)."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.act1 = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        nn.init.zeros_(self.bn2.weight)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        self.act2 = nn.ReLU()

    def forward(self, x):
        shortcut = x if self.down is None else self.down(x)
        x = self.act1(self.bn1(self.conv1(x)))
        x = self.bn2(self.conv2(x))
        return self.act2(x + shortcut)


class ResNetTiny(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.blocks = nn.Sequential(Block(16, 16), Block(16, 32, stride=2))
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def make_model():
    torch.manual_seed(0)
    return ResNetTiny()
'''

PRUNED = """
import torch
from torch import nn

from model import DigitsNet


def make_model():
    torch.manual_seed(0)
    model = DigitsNet()
    with torch.no_grad():
        model.conv2.weight[:8] = 0  # 8 of 32 output channels pruned
        model.bn2.weight[:4] = 0  # 4 of them with BatchNorm gamma 0 as well: 0 / 0 in the fold
        model.fc1.weight[::4] = 0  # 16 of 64 rows
    return model
"""

# An all-zero image in the third training batch makes PerImageScale divide 0 by 0.
NAN_AT_LAYER = """
import torch
from torch import nn


class PerImageScale(nn.Module):
    def forward(self, x):
        return x / x.amax(dim=(1, 2, 3), keepdim=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(PerImageScale(), nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.fc = nn.Linear(8 * 64, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def make_model():
    torch.manual_seed(0)
    return Net()
"""

NAN_AT_LAYER_EAGER = """
import torch
from torch.ao.quantization import DeQuantStub, QuantStub

from nan_model import Net


class QuantNet(Net):
    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.dequant = DeQuantStub()

    def forward(self, x):
        return self.dequant(super().forward(self.quant(x)))


def make_model():
    torch.manual_seed(0)
    return QuantNet()
"""

ZERO_IMAGE_DATA = """
from data import loaders as digits


def loaders():
    train, val = digits()
    x, y = train[2]
    x = x.clone()
    x[5] = 0
    train[2] = (x, y)
    return train, val
"""

MLP = """
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(torch.flatten(x, 1))))


def make_model():
    torch.manual_seed(0)
    return MLP()
"""


def _workspace(root: Path, files: dict, config: str = "digits.qat.yaml", **changes) -> Path:
    """A copy of examples/digits with `files` written into it and `changes` applied to the config's
    train section (`model.entry`/`data.entry` via entry=/data=); returns the config."""
    folder = copy_example(root / "ws").parent
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    entry, data = changes.pop("entry", None), changes.pop("data", None)

    def mutate(d):
        d["train"].update(changes)
        if entry:
            d["model"]["entry"] = entry
        if data:
            d["data"]["entry"] = data

    return edit_config(folder / config, mutate)


def _finite_layers(result) -> None:
    for layer in result["layers"]:
        for key in ("cosine", "sqnr", "mse", "maxAbs"):
            assert math.isfinite(layer[key]), (layer["module"], key, layer[key])


def _warning(result, start: str) -> str:
    found = [w for w in result.get("warnings", []) if w.startswith(start)]
    assert found, result.get("warnings")
    return found[0]


# --- zero-init BatchNorm gamma ------------------------------------------------------------------


@pytest.fixture(scope="module")
def zero_init(kernel, tmp_path_factory, validate):
    config = _workspace(tmp_path_factory.mktemp("zero_init"), {"model.py": RESNET}, fp32_epochs=0, steps=40, lr=0.01)
    result = kernel.request("qat/train", {"config": str(config), "checkpoint": False})
    validate("QatTrainResult", result)
    return config, result


def test_zero_init_gamma_trains_with_a_warning(zero_init):
    _, result = zero_init
    note = _warning(result, "BatchNorm gamma is 0")
    assert "48 of 48 channels of 2 BatchNorms" in note and "`blocks.0.bn2`, `blocks.1.bn2`" in note, note
    # The floor moves the FP32 model's output by less than float32 resolution around it.
    relative = float(re.search(r"relative ([0-9.e+-]+)\)", note).group(1))
    assert relative < 1e-5, note
    losses = [h["loss"] for h in result["history"]]
    assert all(math.isfinite(v) for v in losses)
    assert result["accuracy"]["fakeQuant"] > 0.3, result["accuracy"]  # it learns: 10 classes


def test_zero_init_gamma_compares_and_converts(zero_init, kernel, validate, tmp_path):
    config, _ = zero_init
    compare = kernel.request("compare/layers", {"config": str(config)})
    validate("CompareLayersResult", compare)
    _warning(compare, "BatchNorm gamma is 0")
    _finite_layers(compare)
    assert {"blocks.0.conv2", "blocks.1.conv2", "blocks.1.down.0"} <= {layer["module"] for layer in compare["layers"]}
    converted = kernel.request("qat/convert", {"config": str(config)})
    validate("QatConvertResult", converted)
    assert converted["accuracy"]["int8"] > 0.3, converted["accuracy"]
    import torch.ao.quantization.fx._decomposed  # noqa: F401 - registers the graph's Q/DQ ops

    logits = torch.export.load(converted["path"]).module()(torch.rand(4, 1, 8, 8))
    assert torch.isfinite(logits).all()


def test_zero_init_gamma_eager_takes_the_exact_fold(kernel, tmp_path, validate):
    model = (Path(__file__).resolve().parents[2] / "examples" / "digits" / "model_eager.py").read_text()
    model = model.replace(
        "    return QuantDigitsNet()", "    m = QuantDigitsNet()\n    nn.init.zeros_(m.bn2.weight)\n    return m"
    )
    config = _workspace(tmp_path, {"model_eager.py": model}, "eager.qat.yaml", fp32_epochs=0, steps=10)
    result = kernel.request("qat/train", {"config": str(config), "checkpoint": False})
    validate("QatTrainResult", result)
    note = _warning(result, "BatchNorm gamma is 0")
    assert "(`conv2`)" in note and "two-pass" in note, note
    assert all(math.isfinite(h["loss"]) for h in result["history"])


# --- pruned channels ----------------------------------------------------------------------------


def test_pruned_channels_train_and_compare(kernel, tmp_path, validate):
    config = _workspace(tmp_path, {"pruned.py": PRUNED}, entry="pruned.py:make_model", fp32_epochs=0, steps=10)
    result = kernel.request("compare/layers", {"config": str(config)})
    validate("CompareLayersResult", result)
    note = _warning(result, "all-zero (pruned) output channels")
    assert "`conv2` 8 of 32" in note and "`fc1` 16 of 64" in note, note
    _warning(result, "BatchNorm gamma is 0 or below 1e-06*sigma in 4 of")
    _finite_layers(result)


def _digits_plan():
    return qconfig.plan(load_config(str(Path(__file__).resolve().parents[2] / "examples/digits/digits.qat.yaml")))


class _ConvBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 64, 10)

    def forward(self, x):
        return self.fc(torch.flatten(torch.relu(self.bn(self.conv(x))), 1))


def test_pruned_channels_through_per_channel_observers_and_the_fold():
    """Zero rows get the weight observer's smallest scale (eps), stay zero in the folded int8 weight, and the
    INT8 graph computes what the fake-quant one does."""
    from torchao.quantization.pt2e import move_exported_model_to_eval

    from qat_kernel.pipeline.fused_groups import attr

    torch.manual_seed(0)
    model = _ConvBn()
    with torch.no_grad():
        model.conv.weight[:4] = 0
        model.bn.weight[3] = 0  # pruned and gamma 0: 0 / 0 without the floor
        model.bn.bias[:4] = torch.tensor([0.5, -0.5, 1.0, 2.0])
    notes: list = []
    prepared = pt2e_flow.prepare_qat(model, torch.randn(2, 1, 8, 8), _digits_plan(), notes)
    for _ in range(3):  # observe three batches, weights unchanged
        assert torch.isfinite(prepared(torch.rand(16, 1, 8, 8))).all()
    scales = [m.scale for m in prepared.modules() if hasattr(m, "scale") and m.scale.numel() == 8]
    assert len(scales) == 1
    eps = 2**-12  # the x86 recipe's weight observer eps (examples/digits qconfig)
    assert scales[0][:4].tolist() == [eps] * 4 and (scales[0][4:] > eps).all()
    move_exported_model_to_eval(prepared)
    converted = pt2e_flow.convert(copy.deepcopy(prepared))
    weights = [attr(converted, n.target) for n in converted.graph.nodes if n.op == "get_attr"]
    (weight,) = [t for t in weights if t.dtype == torch.int8 and t.dim() == 4]
    assert weight.flatten(1).abs().amax(1)[:4].tolist() == [0, 0, 0, 0]
    x = torch.rand(4, 1, 8, 8)
    with torch.no_grad():
        assert (prepared(x) - converted(x)).abs().max() < 0.05


# --- non-finite values during training ----------------------------------------------------------


@pytest.mark.parametrize(
    "flow,fp32_epochs,stage",
    [("pt2e", 0, "QAT"), ("pt2e", 1, "FP32 training"), ("eager", 0, "QAT")],
    ids=["pt2e-qat", "fp32", "eager-qat"],
)
def test_nan_names_the_layer_and_step(kernel, tmp_path, validate, flow, fp32_epochs, stage):
    files = {"nan_model.py": NAN_AT_LAYER, "nan_model_eager.py": NAN_AT_LAYER_EAGER, "zero_image.py": ZERO_IMAGE_DATA}
    config = _workspace(
        tmp_path,
        files,
        "digits.qat.yaml" if flow == "pt2e" else "eager.qat.yaml",
        entry="nan_model.py:make_model" if flow == "pt2e" else "nan_model_eager.py:make_model",
        data="zero_image.py:loaders",
        fp32_epochs=fp32_epochs,
        steps=10,
    )
    with pytest.raises(RpcError) as err:
        kernel.request("qat/train", {"config": str(config), "checkpoint": False})
    assert err.value.code == NON_FINITE, err.value.message
    data = err.value.data
    validate("KernelErrorData", data)
    assert (data["kind"], data["module"], data["step"]) == ("nonFinite", "features.0", 3), data
    assert err.value.message.startswith(f"{stage} step 3: `features.0` "), err.value.message
    assert "produced NaN" in err.value.message and "division by zero" in err.value.message
    model_py = config.parent / "nan_model.py"
    assert data["location"]["file"] == str(model_py)
    lines = model_py.read_text().splitlines()
    assert "x / x.amax" in lines[data["location"]["line"] - 1] or "def forward" in lines[data["location"]["line"] - 1]


def test_loss_that_becomes_inf(kernel, tmp_path, validate):
    config = _workspace(tmp_path, {"model.py": MLP}, fp32_epochs=0, steps=10, optimizer="sgd", lr=1e20)
    with pytest.raises(RpcError) as err:
        kernel.request("qat/train", {"config": str(config), "checkpoint": False})
    assert err.value.code == NON_FINITE, err.value.message
    validate("KernelErrorData", err.value.data)
    assert err.value.data["step"] == 2  # step 1's update makes the logits overflow the loss
    assert err.value.message.startswith("QAT step 2: the loss is inf although the model's outputs are finite")
    assert "Lower train.lr (now 1e+20)" in err.value.message
    assert kernel.request("kernel/info")["packages"]["torch"]["version"]  # still serving


def test_zero_gamma_without_the_floor_is_located_in_the_fold(monkeypatch):
    """Without the gamma floor, torchao's fold computes 0 / 0: the NaN loss is traced to the BN of the fold."""
    from qat_kernel.rpc.errors import NonFinite

    monkeypatch.setattr(health, "GAMMA_FLOOR", 0.0)
    torch.manual_seed(0)
    model = _ConvBn()
    with torch.no_grad():
        model.bn.weight[2] = 0
    prepared = pt2e_flow.prepare_qat(model, torch.randn(2, 1, 8, 8), _digits_plan())
    x, y = torch.rand(16, 1, 8, 8), torch.randint(0, 10, (16,))
    with pytest.raises(NonFinite) as err, health.guard(prepared, lambda m: m(x), x, "qat", 7) as check:
        check(torch.nn.functional.cross_entropy(prepared(x), y))
    assert err.value.data == {"module": "bn", "step": 7}
    assert err.value.message.startswith("QAT step 7: `bn` produced NaN")
    assert "conv+BN fold (div of the conv+BN fold)" in err.value.message


def test_library_assertion_on_nan_becomes_a_typed_error():
    """A NaN weight makes the weight observer assert inside the forward (torchao's "min ... should be less
    than max"); the guard turns that into NonFinite naming the parameter and the step."""
    from qat_kernel.rpc.errors import NonFinite

    torch.manual_seed(0)
    prepared = pt2e_flow.prepare_qat(_ConvBn(), torch.randn(2, 1, 8, 8), _digits_plan())
    with torch.no_grad():
        prepared.fc.weight[3, 5] = float("nan")
    x = torch.rand(16, 1, 8, 8)
    with pytest.raises(NonFinite) as err, health.guard(prepared, lambda m: m(x), x, "qat", 4, None):
        prepared(x)
    assert isinstance(err.value.__cause__, AssertionError) and "should be less than max" in str(err.value.__cause__)
    assert err.value.data == {"module": "fc", "step": 4}
    assert err.value.message.startswith(
        "QAT step 4: `fc.weight` is NaN in 1 of 5120 values; the optimizer update of step 3"
    )
