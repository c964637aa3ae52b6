"""flow: torchao's config (protocol/qat-config.schema.json and pipeline/torchao_flow.plan): what validates, what
is told with its YAML path, which modules a plan quantizes, and the models the flow refuses before prepare, each
naming the module and what to do. No kernel process: these are the checks the kernel runs before training."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from conftest import REPO

from qat_kernel.pipeline import torchao_flow
from qat_kernel.pipeline.config import load_config
from qat_kernel.rpc.errors import ConfigInvalid, Unsupported

EXAMPLE = REPO / "examples" / "tinylm" / "tinylm.qat.yaml"


def _config(tmp_path: Path, **top: Any) -> Path:
    data: dict[str, Any] = {"version": 1, "model": {"entry": "model.py:make"}, "flow": "torchao"}
    data.update(top)
    (tmp_path / "model.py").write_text("def make():\n    pass\n", encoding="utf-8")
    path = tmp_path / "t.qat.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_example_config_is_8da4w_group_32():
    cfg = load_config(str(EXAMPLE))
    plan = torchao_flow.plan(cfg)
    assert cfg.get("flow") == "torchao" and cfg.get("qconfig") is None
    assert (plan.scheme.name, plan.scheme.group_size, plan.embedding) == ("8da4w", 32, None)


def test_qconfig_is_required_by_the_other_flows_only(tmp_path: Path):
    load_config(str(_config(tmp_path)))  # torchao: no qconfig needed
    with pytest.raises(ConfigInvalid, match="'qconfig' is a required property"):
        load_config(str(_config(tmp_path, flow="pt2e")))


@pytest.mark.parametrize(
    "torchao,path,words",
    [
        ({"scheme": "int4"}, "torchao.scheme", "is not one of"),
        ({"group_size": 0}, "torchao.group_size", ""),
        ({"group_size": "per_row"}, "torchao.group_size", ""),
        ({"embedding": "8da4w"}, "torchao.embedding", "is not one of"),
        ({"groupsize": 32}, "", "Additional properties are not allowed ('groupsize' was unexpected)"),
        ({"exclude": "lm_head"}, "torchao.exclude", "is not of type 'array'"),
        ({"range_learning": "yes"}, "torchao.range_learning", "is not of type 'boolean'"),
    ],
)
def test_bad_values_are_told_with_their_path(tmp_path: Path, torchao: dict[str, Any], path: str, words: str):
    with pytest.raises(ConfigInvalid) as err:
        load_config(str(_config(tmp_path, torchao=torchao)))
    assert err.value.data.get("path", "") == path or (not path and "torchao" in err.value.message)
    assert words in err.value.message


def test_bad_override_scheme_and_pattern(tmp_path: Path):
    with pytest.raises(ConfigInvalid) as err:
        load_config(str(_config(tmp_path, overrides=[{"match": "fc", "scheme": "2bit"}])))
    assert err.value.data["path"] == "overrides.0.scheme"
    cfg = load_config(str(_config(tmp_path, torchao={"exclude": ["lm_head", "(unclosed"]})))
    with pytest.raises(ConfigInvalid) as err:
        torchao_flow.plan(cfg)
    assert err.value.data["path"] == "torchao.exclude.1"


class Tiny(torch.nn.Module):
    def __init__(self, width: int = 64, vocab: int = 100):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(width, width) for _ in range(2)])
        self.head = torch.nn.Linear(width, vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.head(x)


def _plan(tmp_path: Path, **top: Any) -> torchao_flow.TorchaoPlan:
    return torchao_flow.plan(load_config(str(_config(tmp_path, **top))))


def test_plan_picks_modules_by_patterns_and_overrides(tmp_path: Path):
    plan = _plan(
        tmp_path,
        torchao={"embedding": "int8-weight-only", "exclude": ["head"]},
        overrides=[
            {"match": "blocks\\.1", "scheme": "int8-weight-only"},
            {"match": "blocks\\.0", "group_size": 16},
            {"match": "nothing"},
        ],
    )
    chosen = {c.module: c for c in torchao_flow.choose_modules(Tiny(), plan)}
    assert chosen["head"].scheme is None and chosen["head"].why == "torchao.exclude"
    assert chosen["embed"].scheme is not None and chosen["embed"].scheme.name == "int8-weight-only"
    assert chosen["embed"].scheme.group_size is None  # the 8-bit schemes default to per channel
    first, second = chosen["blocks.0"].scheme, chosen["blocks.1"].scheme
    assert first is not None and first.name == "8da4w"
    assert (first.group_size, first.group_path) == (16, "overrides.1.group_size")
    assert second is not None and (second.name, second.group_size) == ("int8-weight-only", None)
    assert plan.unused_overrides() == [2]
    only = _plan(tmp_path, torchao={"include": ["blocks"]}, overrides=[{"match": "blocks\\.1", "precision": "fp32"}])
    kept = {c.module: c.why for c in torchao_flow.choose_modules(Tiny(), only) if c.scheme is None}
    assert kept == {"embed": "torchao.embedding", "head": "torchao.include", "blocks.1": "overrides.0"}


def test_group_size_that_does_not_divide_names_the_module(tmp_path: Path):
    model, ids = Tiny(width=48), torch.zeros(2, 4, dtype=torch.long)  # 48 = 32 + 16
    with pytest.raises(ConfigInvalid) as err:
        torchao_flow.TorchaoQat(model, (ids,), _plan(tmp_path, torchao={"group_size": 32}))
    message = err.value.message
    assert err.value.data["path"] == "torchao.group_size"
    assert "does not divide the in_features (48) of blocks.0 (Linear)" in message
    assert "use group_size 16" in message and "torchao.exclude: [blocks.0]" in message
    # the default group size points at the section that left it out
    with pytest.raises(ConfigInvalid) as err:
        torchao_flow.TorchaoQat(model, (ids,), _plan(tmp_path, torchao={}))
    assert err.value.data["path"] == "torchao"


def test_activation_scheme_on_an_embedding_is_refused(tmp_path: Path):
    plan = _plan(tmp_path, overrides=[{"match": "embed", "scheme": "8da4w"}])
    with pytest.raises(ConfigInvalid) as err:
        torchao_flow.TorchaoQat(Tiny(), (torch.zeros(2, 4, dtype=torch.long),), plan)
    assert err.value.data["path"] == "overrides.0.scheme" and "embed is an nn.Embedding" in err.value.message


def test_models_the_flow_cannot_quantize_are_unsupported(tmp_path: Path):
    from transformers.pytorch_utils import Conv1D

    class Gpt2Like(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = Conv1D(96, 32)  # GPT-2's projection: weight stored (in, out)
            self.lm_head = torch.nn.Linear(32, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lm_head(self.c_attn(x)[..., :32])

    with pytest.raises(Unsupported) as err:
        torchao_flow.TorchaoQat(Gpt2Like(), (torch.randn(2, 32),), _plan(tmp_path))
    assert err.value.data["unsupported"][0]["module"] == "c_attn" and "torchao.exclude" in err.value.message
    # kept float on purpose, it is accepted
    torchao_flow.TorchaoQat(Gpt2Like(), (torch.randn(2, 32),), _plan(tmp_path, torchao={"exclude": ["c_attn"]}))

    conv = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU())
    with pytest.raises(Unsupported) as err:
        torchao_flow.TorchaoQat(conv, (torch.randn(2, 1, 8, 8),), _plan(tmp_path))
    assert "use flow: pt2e" in err.value.message and err.value.data["unsupported"][0]["module"] == "0"


def test_fake_quant_and_converted_compute_the_same(tmp_path: Path):
    """torchao's QAT and its convert share qparams and rounding: the prepared model with fake quantization on and
    the converted one agree, and the switch turns fake quantization off."""
    torch.manual_seed(0)
    model = Tiny()
    reference = Tiny()
    reference.load_state_dict(model.state_dict())
    ids = torch.randint(0, 100, (2, 8))
    qat = torchao_flow.TorchaoQat(model, (ids,), _plan(tmp_path, torchao={"range_learning": True}), [])
    assert any(name.endswith("weight_fake_quantizer.scale") for name, _ in model.named_parameters())
    qat.eval_mode()
    with torch.no_grad():
        fake = qat.model(ids)
        with qat.switched(False):
            assert torch.equal(qat.model(ids), reference(ids))
        converted = qat.convert()(ids)
    assert torch.allclose(fake, converted, atol=1e-5), (fake - converted).abs().max()
    assert not torch.equal(fake, reference(ids))
