"""Shared fixtures: one real kernel process for the session and one run per scenario on temp copies
of examples/digits (QAT takes seconds; every test of a scenario reads the same results, and methods
called after a run on the same config reuse the kernel's trained model)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rpc_client import KernelClient

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = REPO / "protocol"
EXAMPLE = REPO / "examples" / "digits"


@pytest.fixture(scope="session")
def rpc_schema() -> dict:
    return json.loads((PROTOCOL / "kernel-rpc.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def validate(rpc_schema):
    """validate("ProgressParams", obj): raises jsonschema.ValidationError when obj does not match."""

    def check(definition: str, instance) -> None:
        schema = {"$ref": f"#/definitions/{definition}", "definitions": rpc_schema["definitions"]}
        jsonschema.Draft7Validator(schema).validate(instance)

    return check


@pytest.fixture(scope="session")
def kernel():
    client = KernelClient()
    yield client
    # A kernel that trained many models exits in seconds on a quiet machine, but can take longer than close()'s
    # default 15 s on a loaded one; a kill then would fail the last test of the run.
    assert client.close(timeout=60) == 0, "".join(client.stderr_lines[-40:])


TINYLM = REPO / "examples" / "tinylm"
TINYLM_WIDTH, TINYLM_BLOCK, TINYLM_BATCH, TINYLM_TRAIN_BATCHES, TINYLM_VAL_BATCHES = 32, 32, 8, 300, 6

# examples/tinylm's own model and data, smaller: what the config's entries name.
TINYLM_SCRIPT = f"""
import torch
from data import loaders
from model import build, pretrain


def tiny_data():
    train, val = loaders(batch_size={TINYLM_BATCH}, block={TINYLM_BLOCK})
    return train[:{TINYLM_TRAIN_BATCHES}], val[:{TINYLM_VAL_BATCHES}]


def tiny_model():
    model = build(hidden={TINYLM_WIDTH}, layers=1, heads=2, block={TINYLM_BLOCK})
    return pretrain(model, tiny_data()[0], epochs=2, lr=5e-3)
"""


def copy_tinylm(dest: Path, script: str = TINYLM_SCRIPT, steps: int = 100) -> Path:
    """examples/tinylm copied to dest/tinylm with its config's entries on `script` (tiny.py: tiny_model, tiny_data)
    and `steps` QAT steps; the example's cached tokenizer is copied along when an earlier run trained it."""
    folder = dest / "tinylm"
    shutil.copytree(TINYLM, folder, ignore=shutil.ignore_patterns("out", "__pycache__"))
    cached = TINYLM / "out"
    for tokenizer in cached.glob("tokenizer-*.json") if cached.is_dir() else []:
        (folder / "out").mkdir(exist_ok=True)
        shutil.copy(tokenizer, folder / "out" / tokenizer.name)
    (folder / "tiny.py").write_text(script, encoding="utf-8")
    config = folder / "tinylm.qat.yaml"
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["model"]["entry"] = "tiny.py:tiny_model"
    data["data"]["entry"] = "tiny.py:tiny_data"
    data["train"].update(steps=steps, lr=5e-4)
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return config


@pytest.fixture(scope="session")
def tinylm(kernel, tmp_path_factory):
    """(config, qat/train result, qat/convert result) of one torchao run on the tiny copy of examples/tinylm; later
    requests on the config reuse the kernel's model."""
    config = copy_tinylm(tmp_path_factory.mktemp("tinylm"))
    train = kernel.request("qat/train", {"config": str(config)}, timeout=900)
    convert = kernel.request("qat/convert", {"config": str(config)}, timeout=900)
    return config, train, convert


def copy_cifar_pretrained(dest: Path, epochs: int) -> Path:
    """A copy of examples/cifar (without outputs) at `dest` whose MobileNetV2 is pre-trained in FP32 for `epochs`
    into the copy's out/, as the example does on first use; returns `dest`."""
    import importlib.util

    shutil.copytree(REPO / "examples" / "cifar", dest, ignore=shutil.ignore_patterns("out", "__pycache__"))
    sys.path.insert(0, str(dest))
    try:
        spec = importlib.util.spec_from_file_location("cifar_example_model", dest / "model.py")
        model = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(model)
        model.pretrain("mobilenetv2", epochs)
    finally:
        sys.path.remove(str(dest))
        sys.modules.pop("data", None)
    return dest


def copy_example(dest: Path) -> Path:
    """A copy of examples/digits (without outputs); returns its .qat.yaml."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("out", "__pycache__"))
    return dest / "digits.qat.yaml"


@pytest.fixture(scope="session")
def compare_run(kernel, tmp_path_factory):
    """(request id, result, config path) of one compare/layers run on a copy of the example."""
    config = copy_example(tmp_path_factory.mktemp("compare") / "digits")
    request_id = kernel.request_async("compare/layers", {"config": str(config)})
    result = kernel.result(request_id, timeout=300)
    return request_id, result, config


def non_dominated(candidates: list, keys) -> list:
    """Ids of search/mixed-precision candidates no other candidate beats on every key of `keys` (accuracy: ONNX
    Runtime's top-1, ties by the emulated top-1 then SQNR, None best; latencyMs and bytes: lower), written out
    apart from the kernel's pareto.py."""
    import math

    def score(c, k):
        if k == "accuracy":
            return (c["ortAccuracy"], c["accuracy"], math.inf if c["sqnr"] is None else c["sqnr"])
        return (-c[k],)

    def beats(a, b):
        return all(score(a, k) >= score(b, k) for k in keys) and any(score(a, k) > score(b, k) for k in keys)

    return [c["id"] for c in candidates if not any(beats(o, c) for o in candidates if o is not c)]


def edit_config(config: Path, mutate) -> Path:
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    mutate(data)
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return config


# The planted bad layer: conv2 gets 2-bit weights (qint8 storage, range -2..1); fc1 is kept fp16.
PLANTED_OVERRIDES = [
    {"match": "conv2", "weight": {"quant_min": -2, "quant_max": 1}},
    {"match": "fc1", "precision": "fp16"},
]


@pytest.fixture(scope="session")
def planted_run(kernel, tmp_path_factory):
    """(config, compare/layers result, analyze/sensitivity result) with the planted bad layer."""
    config = copy_example(tmp_path_factory.mktemp("planted") / "digits")
    edit_config(config, lambda d: d.update(overrides=PLANTED_OVERRIDES))
    compare = kernel.request("compare/layers", {"config": str(config)})
    sensitivity = kernel.request("analyze/sensitivity", {"config": str(config), "budget": 1.0})
    return config, compare, sensitivity


@pytest.fixture(scope="session")
def eager_run(kernel, tmp_path_factory):
    """(request id, compare/layers result, config) of examples/digits/eager.qat.yaml (flow: eager)."""
    config = copy_example(tmp_path_factory.mktemp("eager") / "digits").parent / "eager.qat.yaml"
    request_id = kernel.request_async("compare/layers", {"config": str(config)})
    return request_id, kernel.result(request_id, timeout=300), config
