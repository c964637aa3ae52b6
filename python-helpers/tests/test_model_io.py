"""The model contract (pipeline/model_io.py, pipeline/losses.py) on models shaped like the ones users bring: keyword
token inputs with an attention mask, dict outputs with `logits` and `loss` (as Hugging Face's ModelOutput), tuple
outputs, dict batches with `labels`; plain torch modules here, the real timm/transformers models in the zoo suite."""

from __future__ import annotations

import copy
from collections import OrderedDict

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from qat_kernel.pipeline import losses
from qat_kernel.pipeline.model_io import batches as as_batches
from qat_kernel.pipeline.model_io import model_io
from qat_kernel.rpc.errors import ConfigInvalid


class Cfg:
    def __init__(self, data: dict):
        self.data, self.folder = data, "."

    def get(self, dotted, default=None):
        node = self.data
        for key in dotted.split("."):
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
        return node


class Output(OrderedDict):
    """Like transformers' ModelOutput: a dict whose keys are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc


class TokenClassifier(nn.Module):
    """forward(input_ids, attention_mask, labels=None) -> {loss?, logits}: a sequence classifier."""

    def __init__(self, vocab=50, classes=4, causal=False):
        super().__init__()
        self.embed, self.causal = nn.Embedding(vocab, 16), causal
        self.head = nn.Linear(16, vocab if causal else classes)

    def forward(self, input_ids, attention_mask=None, labels=None):
        h = self.embed(input_ids) * attention_mask.unsqueeze(-1)
        logits = self.head(h) if self.causal else self.head(h.mean(1))
        out = Output(logits=logits)
        if labels is not None:
            if self.causal:
                out["loss"] = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
            else:
                out["loss"] = F.cross_entropy(logits, labels)
            out.move_to_end("loss", last=False)
        return out


def _batches(causal=False, n=3):
    g = torch.Generator().manual_seed(0)
    out = []
    for _ in range(n):
        ids = torch.randint(0, 50, (4, 8), generator=g)
        labels = ids if causal else torch.randint(0, 4, (4,), generator=g)
        out.append({"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels})
    return out


def test_dict_batches_with_labels_bind_keyword_inputs_and_find_the_models_own_loss():
    for causal, kind in ((False, "cross_entropy"), (True, "next_token")):
        model, batches, cfg = TokenClassifier(causal=causal), _batches(causal), Cfg({})
        io = model_io(cfg, model, batches)
        assert io.names == ["input_ids", "attention_mask"] and io.keyword
        loss = losses.resolve(cfg, model, io, batches[0])
        assert loss.kind == kind and "own loss" in loss.note
        own = type(model).forward(model, **batches[0]).loss
        io.bind(model)
        tensors, target = io.split(batches[0])
        prediction = model(*tensors)
        assert torch.allclose(loss(prediction, target), own, atol=1e-6)
        right, counted = loss.correct(prediction, target)
        assert counted == (4 * 7 if causal else 4) and 0 <= right <= counted


def test_a_next_token_batch_without_labels_takes_its_token_ids_as_the_target():
    # (inputs[0] on Inputs raised TypeError: Inputs are sliced by samples, not indexed)
    model = TokenClassifier(causal=True)
    unlabelled = [{k: v for k, v in b.items() if k != "labels"} for b in _batches(causal=True)]
    io = model_io(Cfg({}), model, unlabelled)
    pairs = list(as_batches(unlabelled, io, losses.Loss("next_token").target_of))
    assert len(pairs) == 3
    for (_, target), raw in zip(pairs, unlabelled):
        assert torch.equal(target, raw["input_ids"])


def test_a_bound_forward_survives_deepcopy_and_torch_export():
    model, batches = TokenClassifier(), _batches()
    io = model_io(Cfg({}), model, batches)
    io.bind(model)
    twin = copy.deepcopy(model)
    assert twin.forward.__self__ is twin
    with torch.no_grad():
        twin.head.weight.zero_()
    example = io.example(batches)
    assert [tuple(t.shape) for t in example] == [(2, 8), (2, 8)]
    assert not torch.equal(model(*example), twin(*example))
    exported = torch.export.export(model, example).module()
    assert torch.allclose(exported(*example), model(*example))
    # Module paths stay the user's (no wrapper prefix).
    stacks = {v[0] for n in exported.graph.nodes for v in (n.meta.get("nn_module_stack") or {}).values()}
    assert "head" in stacks and not any(s.startswith("model.") for s in stacks)


def test_example_input_specs_by_name_and_by_position():
    cfg = Cfg(
        {
            "model": {
                "example_input": {
                    "input_ids": {"shape": [1, 8], "dtype": "int64", "range": [0, 50]},
                    "attention_mask": {"shape": [1, 8], "dtype": "int64", "fill": 1},
                }
            }
        }
    )
    io = model_io(cfg)
    ids, mask = io.example(None)
    assert ids.dtype == torch.int64 and ids.shape == (2, 8) and 0 <= int(ids.min()) and int(ids.max()) < 50
    assert torch.equal(mask, torch.ones(2, 8, dtype=torch.int64))
    io = model_io(Cfg({"model": {"example_input": [{"shape": [2, 3]}, {"shape": [2], "dtype": "int32"}]}}))
    assert not io.keyword and [t.dtype for t in io.example(None)] == [torch.float32, torch.int32]
    assert model_io(Cfg({"model": {"example_input": [2, 1, 8, 8]}})).names == ["input"]


def test_outputs_tuples_and_named_keys():
    io = model_io(Cfg({}), None, [(torch.zeros(2, 3), torch.zeros(2))])
    t = torch.ones(2, 3)
    assert io.prediction(t) is t and io.prediction((t, 5)) is t and io.prediction({"logits": t, "x": 1}) is t
    assert model_io(Cfg({"model": {"output": 1}}), None, [(t, t)]).prediction((5, t)) is t
    assert model_io(Cfg({"model": {"output": "scores"}}), None, [(t, t)]).prediction(Output(scores=t)) is t
    with pytest.raises(ConfigInvalid) as err:
        model_io(Cfg({"model": {"output": "logits"}}), None, [(t, t)]).prediction(Output(hidden=t))
    assert err.value.data["path"] == "model.output" and "['hidden']" in err.value.message


def test_batches_the_contract_cannot_read_are_explained():
    io = model_io(Cfg({}), TokenClassifier(), _batches())
    with pytest.raises(ConfigInvalid, match=r"has no attention_mask"):
        io.split({"input_ids": torch.zeros(2, 8, dtype=torch.long), "labels": torch.zeros(2)})
    with pytest.raises(ConfigInvalid, match=r"a batch is a float32 tensor"):
        io.split(torch.zeros(2, 8))
    tuple_io = model_io(Cfg({}), None, [(torch.zeros(2, 3), torch.zeros(2, 5), torch.zeros(2))])
    assert tuple_io.names == ["input0", "input1"] and not tuple_io.keyword
    with pytest.raises(ConfigInvalid, match=r"1 input\(s\), the model takes 2"):
        tuple_io.split((torch.zeros(2, 3), torch.zeros(2)))


def test_losses_line_up_classes_last_or_first_and_skip_ignored_targets():
    ce = losses.Loss("cross_entropy")
    tokens, labels = torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))
    labels[0, 0] = losses.IGNORE_INDEX
    assert ce.correct(tokens, labels)[1] == 9
    segmentation, masks = torch.randn(2, 7, 4, 4), torch.randint(0, 7, (2, 4, 4))
    expected = F.cross_entropy(segmentation, masks)
    assert torch.allclose(ce(segmentation, masks), expected)
    with pytest.raises(ConfigInvalid, match=r"train.loss: cross_entropy needs class scores"):
        ce(torch.randn(2, 7), torch.randn(2, 7))


def test_a_model_loss_the_kernel_cannot_compute_is_a_config_error():
    class Odd(TokenClassifier):
        def forward(self, input_ids, attention_mask=None, labels=None):
            out = super().forward(input_ids, attention_mask)
            if labels is not None:
                out["loss"] = out["logits"].pow(2).mean()
            return out

    model, batches = Odd(), _batches()
    io = model_io(Cfg({}), model, batches)
    with pytest.raises(ConfigInvalid, match=r"neither cross_entropy nor next_token") as err:
        losses.resolve(Cfg({}), model, io, batches[0])
    assert err.value.data["path"] == "train.loss"
