"""The model contract through the real kernel: a model shaped like Hugging Face's (keyword token ids and an
attention mask, a dict output with `logits` and its own `loss`, dict batches with `labels`), written by hand so it
runs in the kernel's own environment; the real transformers models go through every stage in the zoo suite."""

from __future__ import annotations

import textwrap

import pytest

MODEL = """
from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn


class Output(OrderedDict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc


class TokenClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(64, 32)
        self.proj = nn.Linear(32, 32)
        self.head = nn.Linear(32, 4)

    def forward(self, input_ids, attention_mask=None, labels=None):
        h = torch.relu(self.proj(self.embed(input_ids))) * attention_mask.unsqueeze(-1)
        logits = self.head(h.sum(1) / attention_mask.sum(1, keepdim=True))
        out = Output(logits=logits)
        if labels is not None:
            out["loss"] = F.cross_entropy(logits, labels)
        return out


def make_model():
    return TokenClassifier()
"""

DATA = """
import torch


def loaders(batch_size=16):
    g = torch.Generator().manual_seed(0)

    def split(n):
        out = []
        for _ in range(n):
            labels = torch.randint(0, 4, (batch_size,), generator=g)
            ids = labels[:, None] * 16 + torch.randint(0, 16, (batch_size, 12), generator=g)
            mask = torch.ones_like(ids)
            mask[:, 10:] = 0
            out.append({"input_ids": ids, "attention_mask": mask, "labels": labels})
        return out

    return split(8), split(4)
"""

CONFIG = """\
version: 1
model: {entry: "model.py:make_model"}
data: {entry: "data.py:loaders"}
qconfig:
  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8, qscheme: per_tensor_affine}
  weight: {observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric, ch_axis: 0}
train: {fp32_epochs: 2, epochs: 1, steps: 8, lr: 0.01, optimizer: adam}
compare: {samples: 32}
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    folder = tmp_path_factory.mktemp("contract")
    (folder / "model.py").write_text(textwrap.dedent(MODEL), encoding="utf-8")
    (folder / "data.py").write_text(textwrap.dedent(DATA), encoding="utf-8")
    config = folder / "tokens.qat.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    return config


def test_token_ids_and_dict_outputs_train_compare_export_and_run_in_onnx_runtime(kernel, workspace, validate):
    train = kernel.request("qat/train", {"config": str(workspace)}, timeout=600)
    validate("QatTrainResult", train)
    # The model's own loss was identified (cross-entropy on its logits) and the run says so.
    assert any("own loss is cross_entropy" in w for w in train.get("warnings", [])), train.get("warnings")
    assert train["accuracy"]["fp32"] > 0.5, train["accuracy"]  # the bands are learnable
    compare = kernel.request("compare/layers", {"config": str(workspace)}, timeout=600)
    assert {row["module"] for row in compare["layers"]} >= {"proj", "head"}
    exported = kernel.request("export/onnx", {"config": str(workspace)}, timeout=600)
    import onnx

    inputs = [(i.name, i.type.tensor_type.elem_type) for i in onnx.load(exported["path"]).graph.input]
    assert inputs == [("input_ids", onnx.TensorProto.INT64), ("attention_mask", onnx.TensorProto.INT64)]
    assert exported["verify"]["predictionsEqual"] >= 0.95, exported["verify"]
    parity = kernel.request("verify/parity", {"config": str(workspace), "artifacts": ["ort-int8"]}, timeout=600)
    row = {r["name"]: r for r in parity["rows"]}["ort-int8"]
    assert row["status"] == "ok" and row["vsTorchInt8"]["top1Agreement"] >= 0.95, row
    assert row["accuracy"] == pytest.approx(parity["torchInt8Accuracy"], abs=0.05)


def test_a_model_output_without_a_tensor_is_named_in_the_error(kernel, tmp_path):
    from rpc_client import RpcError

    (tmp_path / "model.py").write_text(
        "import torch\n\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = torch.nn.Linear(4, 2)\n\n    def forward(self, x):\n"
        "        return {'hidden': [self.fc(x)]}\n\n"
        "def make_model():\n    return M()\n",
        encoding="utf-8",
    )
    (tmp_path / "data.py").write_text(
        "import torch\n\ndef loaders():\n    b = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]\n    return b, b\n",
        encoding="utf-8",
    )
    config = tmp_path / "bad.qat.yaml"
    config.write_text(CONFIG.replace("train: {fp32_epochs: 2", "train: {fp32_epochs: 0"), encoding="utf-8")
    with pytest.raises(RpcError) as err:
        kernel.request("qat/train", {"config": str(config)}, timeout=300)
    assert err.value.data["kind"] == "configInvalid" and err.value.data["path"] == "model.output"
    assert "['hidden']" in err.value.message
