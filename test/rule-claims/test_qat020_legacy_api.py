"""QAT020: which old torchao QAT APIs warn (and that their one-to-one replacements behave the same), which
legacy Quantizers do not warn yet, and the QATConfig recipes that fake-quantize exactly as two of them."""

import warnings

import pytest
import torch
import torchao.quantization.qat as qat
from torch import nn
from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
from torchao.quantization.granularity import PerGroup


def _warnings(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = make()
    return made, [str(w.message) for w in caught if "is deprecated and will be removed" in str(w.message)]


def weight_config():
    return qat.IntxFakeQuantizeConfig(torch.int4, group_size=32)


@pytest.mark.parametrize(
    "name,make",
    [
        ("IntXQuantizationAwareTrainingConfig", lambda: qat.IntXQuantizationAwareTrainingConfig(None, weight_config())),
        ("intx_quantization_aware_training", lambda: qat.intx_quantization_aware_training(None, weight_config())),
        ("FromIntXQuantizationAwareTrainingConfig", lambda: qat.FromIntXQuantizationAwareTrainingConfig()),
        ("from_intx_quantization_aware_training", lambda: qat.from_intx_quantization_aware_training()),
        ("FakeQuantizeConfig", lambda: qat.FakeQuantizeConfig(torch.int4, group_size=32)),
        ("FakeQuantizer", lambda: qat.FakeQuantizer(weight_config())),
    ],
)
def test_deprecated_names_warn(name, make):
    _, deprecated = _warnings(make)
    assert deprecated and deprecated[0].startswith(f"'{name}' is deprecated")


@pytest.mark.parametrize(
    "make",
    [
        lambda: qat.Int8DynActInt4WeightQATQuantizer(groupsize=32),
        lambda: qat.Int4WeightOnlyQATQuantizer(groupsize=32),
        lambda: qat.Int4WeightOnlyEmbeddingQATQuantizer(group_size=32),
        lambda: qat.Float8ActInt4WeightQATQuantizer(),
        lambda: qat.ComposableQATQuantizer([]),
    ],
    ids=["8da4w", "4w", "embedding_4w", "fp8_4w", "composable"],
)
def test_legacy_quantizers_do_not_warn_yet(make):
    assert _warnings(make)[1] == []


def linear_pair():
    torch.manual_seed(0)
    a = nn.Sequential(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 8))
    b = nn.Sequential(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 8))
    b.load_state_dict(a.state_dict())
    return a, b


def test_replacements_of_the_deprecated_configs_are_the_same():
    x = torch.randn(4, 64)
    old, new = linear_pair()
    act = qat.IntxFakeQuantizeConfig(torch.int8, "per_token", is_symmetric=False)
    quantize_(old, qat.IntXQuantizationAwareTrainingConfig(act, qat.FakeQuantizeConfig(torch.int4, group_size=16)))
    quantize_(new, qat.QATConfig(activation_config=act, weight_config=weight_config_16(), step="prepare"))
    assert torch.equal(old(x), new(x))
    quantize_(old, qat.FromIntXQuantizationAwareTrainingConfig())
    quantize_(new, qat.QATConfig(step="convert"))
    assert [type(m) for m in old] == [type(m) for m in new] == [nn.Linear, nn.ReLU, nn.Linear]
    assert torch.equal(old(x), new(x))


def weight_config_16():
    return qat.IntxFakeQuantizeConfig(torch.int4, group_size=16)


def test_qatconfig_recipes_match_the_legacy_quantizers():
    x = torch.randn(4, 64)
    old, new = linear_pair()
    old = qat.Int8DynActInt4WeightQATQuantizer(groupsize=16).prepare(old)
    base = Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(16))
    quantize_(new, qat.QATConfig(base, step="prepare"))
    assert torch.equal(old(x), new(x))

    torch.manual_seed(0)
    old = nn.Sequential(nn.Embedding(10, 64))
    new = nn.Sequential(nn.Embedding(10, 64))
    new.load_state_dict(old.state_dict())
    old = qat.Int4WeightOnlyEmbeddingQATQuantizer(group_size=32).prepare(old)
    config = qat.IntxFakeQuantizeConfig(torch.int4, group_size=32, is_symmetric=True)
    quantize_(
        new, qat.QATConfig(weight_config=config, step="prepare"), filter_fn=lambda m, _: isinstance(m, nn.Embedding)
    )
    ids = torch.arange(10)
    assert isinstance(new[0], qat.FakeQuantizedEmbedding)
    assert torch.equal(old(ids), new(ids))
