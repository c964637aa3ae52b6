"""qat/train under torchrun: 2 CPU processes on gloo (DistributedDataParallel) reach the accuracy of a
one-process run, progress is relayed, the kernel keeps the trained model, cancel and user errors."""

import subprocess
import time

import pytest
import torch
from conftest import copy_example, edit_config

EPOCHS = 2


def _two_epochs(data: dict) -> None:
    data["train"].pop("steps", None)
    data["train"]["epochs"] = EPOCHS


@pytest.fixture(scope="module")
def runs(kernel, tmp_path_factory, validate):
    single = copy_example(tmp_path_factory.mktemp("single") / "digits")
    edit_config(single, _two_epochs)
    one = kernel.result(kernel.request_async("qat/train", {"config": str(single)}), timeout=600)
    multi = copy_example(tmp_path_factory.mktemp("ddp") / "digits")
    edit_config(
        multi, lambda d: (_two_epochs(d), d["train"].update(distributed={"nproc_per_node": 2, "backend": "gloo"}))
    )
    request_id = kernel.request_async("qat/train", {"config": str(multi)})
    two = kernel.result(request_id, timeout=600)
    validate("QatTrainResult", one)
    validate("QatTrainResult", two)
    return one, two, request_id, multi


def test_two_processes_match_one_in_accuracy(runs):
    one, two, _, _ = runs
    assert two["distributed"] == {"processes": 2, "backend": "gloo"}
    assert "distributed" not in one
    # Each process takes every other batch: an epoch is half the steps, each step two batches.
    assert (one["epochs"], one["steps"]) == (EPOCHS, 40)
    assert (two["epochs"], two["steps"]) == (EPOCHS, 20)
    assert [h["step"] for h in two["history"]] == [10, 20]
    # The FP32 phase is the same seeded training (one thread per process here: the last bits differ).
    assert abs(two["accuracy"]["fp32"] - one["accuracy"]["fp32"]) <= 0.01
    assert two["accuracy"]["fakeQuant"] >= 0.9
    assert abs(two["accuracy"]["fakeQuant"] - one["accuracy"]["fakeQuant"]) <= 0.02, (one["accuracy"], two["accuracy"])


def test_rank_zero_progress_is_relayed(runs, kernel, validate):
    _, two, request_id, _ = runs
    progress = kernel.progress(request_id)
    for params in progress:
        validate("ProgressParams", params)
    assert any("starting 2 processes" in p["message"] for p in progress)
    steps = [p["train"]["step"] for p in progress if p["stage"] == "qat" and "train" in p]
    assert steps == list(range(1, 21))  # rank 0 only, once per step
    epochs = [p["train"] for p in progress if p["stage"] == "epoch"]
    assert [e["epoch"] for e in epochs] == [1, 2]
    assert epochs[-1]["accuracy"] == two["accuracy"]["fakeQuant"]
    assert {o["module"] for o in epochs[-1]["observers"]} >= {"conv1", "fc2"}


def test_checkpoint_holds_the_reference(runs):
    _, two, _, config = runs
    saved = torch.load(two["checkpoint"], weights_only=True)
    assert (saved["epoch"], saved["step"], saved["world_size"]) == (EPOCHS, 20, 2)
    assert "conv1.weight" in saved["fp32_state_dict"]
    assert sorted(p.name for p in (config.parent / "out").iterdir()) == ["digits.qat.pt", "tensorboard"]
    assert two["tensorboard"].startswith(str(config.parent / "out" / "tensorboard" / "digits"))


def test_kernel_keeps_the_model_the_processes_trained(runs, kernel, validate):
    _, two, _, config = runs
    request_id = kernel.request_async("eval/accuracy", {"config": str(config)})
    result = kernel.result(request_id, timeout=300)
    validate("EvalAccuracyResult", result)
    assert "qat" not in {p["stage"] for p in kernel.progress(request_id)}  # no training again
    assert result["fakeQuant"] == two["accuracy"]["fakeQuant"]
    assert result["fp32"] == two["accuracy"]["fp32"]


def _workers_alive(config) -> list[str]:
    out = subprocess.run(["pgrep", "-af", "qat_kernel.jobs.qat_train_worker"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if str(config) in line]


def test_cancel_stops_every_process_and_keeps_the_checkpoint(kernel, tmp_path):
    config = copy_example(tmp_path / "digits")
    edit_config(config, lambda d: d["train"].update(distributed={"nproc_per_node": 2}))
    request_id = kernel.request_async("qat/train", {"config": str(config), "steps": 1_000_000})
    kernel.wait_progress(request_id, timeout=300, where=lambda p: p["stage"] == "epoch")
    kernel.notify("$/cancelRequest", {"id": request_id})
    response = kernel.wait_response(request_id, timeout=120)
    assert response["error"]["data"]["kind"] == "cancelled", response
    saved = torch.load(config.parent / "out" / "digits.qat.pt", weights_only=True)
    assert saved["epoch"] >= 1 and saved["step"] == saved["epoch"] * 10
    deadline = time.monotonic() + 30
    while _workers_alive(config) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _workers_alive(config) == []


def test_user_code_error_in_a_process_is_typed(kernel, tmp_path):
    config = copy_example(tmp_path / "digits")
    edit_config(config, lambda d: d["train"].update(distributed={"nproc_per_node": 2}))
    model = config.parent / "model.py"
    model.write_text(model.read_text() + "\n\ndef broken():\n    raise ValueError('no model today')\n")
    edit_config(config, lambda d: d["model"].update(entry="model.py:broken"))
    response = kernel.wait_response(kernel.request_async("qat/train", {"config": str(config)}), timeout=300)
    error = response["error"]
    assert error["data"]["kind"] == "userCode", error
    assert "no model today" in error["message"]
    assert error["data"]["location"]["file"] == str(model)
