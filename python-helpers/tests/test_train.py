"""qat/train: progress per step and per epoch (accuracy, observer scale/zero-point), atomic per-epoch
checkpoints, cancel keeps the last one, and later methods reuse the trained model."""

import pytest
import torch
from conftest import copy_example, edit_config
from rpc_client import RpcError

from qat_kernel import tbevents

STEPS = 40  # two epochs of the 20 digits batches


@pytest.fixture(scope="module")
def train_run(kernel, tmp_path_factory, validate):
    config = copy_example(tmp_path_factory.mktemp("train") / "digits")
    edit_config(
        config, lambda d: d["train"].update(steps=STEPS, scheduler="cosine", freeze_bn_after=1, freeze_observer_after=1)
    )
    request_id = kernel.request_async("qat/train", {"config": str(config)})
    result = kernel.result(request_id)
    validate("QatTrainResult", result)
    return request_id, result, config


def test_history_and_accuracy(train_run):
    _, result, _ = train_run
    assert (result["epochs"], result["steps"]) == (2, STEPS)
    assert [h["epoch"] for h in result["history"]] == [1, 2]
    assert [h["step"] for h in result["history"]] == [20, 40]
    assert result["accuracy"]["fakeQuant"] >= result["accuracy"]["fp32"] - 0.01
    assert result["history"][-1]["accuracy"] == result["accuracy"]["fakeQuant"]


def test_progress_per_step_and_epoch(train_run, kernel, validate):
    request_id, result, config = train_run
    progress = kernel.progress(request_id)
    for params in progress:
        validate("ProgressParams", params)
    steps = [p["train"] for p in progress if p["stage"] == "qat" and "train" in p]
    assert [s["step"] for s in steps] == list(range(1, STEPS + 1))
    assert steps[0]["lr"] > steps[-1]["lr"]  # cosine schedule
    epochs = [p["train"] for p in progress if p["stage"] == "epoch"]
    assert [e["epoch"] for e in epochs] == [1, 2]
    for epoch in epochs:
        assert 0 < epoch["accuracy"] <= 1
        assert epoch["checkpoint"] == result["checkpoint"]
        roles = {(o["module"], o["role"]) for o in epoch["observers"]}
        assert {("conv1", "weight"), ("conv1", "activation"), ("fc2", "weight")} <= roles
    conv1 = next(o for o in epochs[0]["observers"] if (o["module"], o["role"]) == ("conv1", "weight"))
    assert len(conv1["scale"]) == 16 and len(conv1["zeroPoint"]) == 16  # per channel
    assert any("frozen after epoch 1" in p["message"] for p in progress)


def test_observers_frozen_after_epoch_one(train_run, kernel):
    request_id, _, _ = train_run
    epochs = [p["train"] for p in kernel.progress(request_id) if p["stage"] == "epoch"]
    # freeze_observer_after: 1 -> scales do not move during epoch 2.
    assert epochs[0]["observers"] == epochs[1]["observers"]


def test_checkpoint_is_the_last_epoch(train_run):
    _, result, config = train_run
    checkpoint = config.parent / "out" / "digits.qat.pt"
    assert result["checkpoint"] == str(checkpoint)
    saved = torch.load(checkpoint, weights_only=False)
    assert (saved["epoch"], saved["step"], saved["flow"]) == (2, STEPS, "pt2e")
    assert any(k.startswith("activation_post_process") for k in saved["state_dict"])
    assert sorted(p.name for p in checkpoint.parent.iterdir()) == ["digits.qat.pt", "tensorboard"]


def test_compare_after_train_reuses_the_model(train_run, kernel, validate):
    _, trained, config = train_run
    request_id = kernel.request_async("compare/layers", {"config": str(config)})
    result = kernel.result(request_id)
    validate("CompareLayersResult", result)
    assert result["reused"] is True
    assert "qat" not in {p["stage"] for p in kernel.progress(request_id)}


def test_a_model_is_measured_by_its_id_after_its_config_changed(kernel, tmp_path, validate):
    """Before / After measures the model a fix was suggested from by its id: the config file may already hold the
    fix (an editor's auto-save), and the model it names is still the one trained before it."""
    config = copy_example(tmp_path / "digits")
    first = kernel.request("eval/accuracy", {"config": str(config)})
    validate("EvalAccuracyResult", first)
    model = first["model"]
    edit_config(config, lambda d: d.update(overrides=[{"match": "fc2", "precision": "fp32"}]))
    request_id = kernel.request_async("eval/accuracy", {"config": str(config), "model": model})
    again = kernel.result(request_id)
    validate("EvalAccuracyResult", again)
    assert (again["model"], again["reused"]) == (model, True)
    assert {k: again[k] for k in ("fp32", "qatFloat", "fakeQuant", "int8")} == {
        k: first[k] for k in ("fp32", "qatFloat", "fakeQuant", "int8")
    }
    assert "qat" not in {p["stage"] for p in kernel.progress(request_id)}
    converted = kernel.request("qat/convert", {"config": str(config), "model": model})
    validate("QatConvertResult", converted)
    assert (converted["model"], converted["accuracy"]["int8"]) == (model, first["int8"])
    # The config as it is now is another model.
    fixed = kernel.request("eval/accuracy", {"config": str(config)})
    assert fixed["model"] != model and fixed["reused"] is False
    with pytest.raises(RpcError) as err:
        kernel.request("eval/accuracy", {"config": str(config), "model": "000000-1"})
    assert err.value.code == -32007, err.value.message
    validate("KernelErrorData", err.value.data)
    assert err.value.data["kind"] == "modelGone"


def test_cancel_keeps_the_last_checkpoint(kernel, tmp_path):
    config = copy_example(tmp_path / "digits")
    request_id = kernel.request_async("qat/train", {"config": str(config), "steps": 1_000_000})
    first = kernel.wait_progress(request_id, timeout=120, where=lambda p: p["stage"] == "epoch")
    kernel.notify("$/cancelRequest", {"id": request_id})
    response = kernel.wait_response(request_id, timeout=120)
    assert response["error"]["data"]["kind"] == "cancelled", response
    checkpoint = config.parent / "out" / "digits.qat.pt"
    assert first["train"]["checkpoint"] == str(checkpoint)
    saved = torch.load(checkpoint, weights_only=False)
    assert saved["epoch"] >= 1 and saved["step"] == saved["epoch"] * 20
    assert sorted(p.name for p in checkpoint.parent.iterdir()) == ["digits.qat.pt", "tensorboard"]  # no temp files
    # The epochs before the cancel are in the run's event file, readable to its last record.
    (run,) = (config.parent / "out" / "tensorboard" / "digits").iterdir()
    (events,) = run.iterdir()
    steps = [e["step"] for e in tbevents.read_events(events) if "scalars" in e]
    assert steps and steps == [20 * (i + 1) for i in range(len(steps))]


def test_observer_drift_is_sampled_over_the_run(train_run):
    _, result, _ = train_run
    drift = result["drift"]
    steps = drift["steps"]
    assert steps[0] == 1 and steps[-1] == STEPS and steps == sorted(set(steps)) and len(steps) >= 10
    assert drift["epochs"] == [1 if s <= 20 else 2 for s in steps]
    act = next(l for l in drift["layers"] if (l["module"], l["role"]) == ("conv1", "activation"))
    weight = next(l for l in drift["layers"] if (l["module"], l["role"]) == ("conv1", "weight"))
    for series in (act, weight):
        assert all(len(series[k]) == len(steps) for k in ("scaleMin", "scaleMean", "scaleMax", "zeroPoint"))
        assert all(
            0 < lo <= mean <= hi for lo, mean, hi in zip(series["scaleMin"], series["scaleMean"], series["scaleMax"])
        )
    assert weight["scaleMin"][-1] < weight["scaleMax"][-1]  # per channel: a spread

    # Observers move during epoch 1 and, frozen after it (freeze_observer_after: 1), not in epoch 2.
    # (conv1's input is the image, whose range [0, 1] is known from the first batch.)
    def values(series, epoch):
        return {v for v, e in zip(series["scaleMean"], drift["epochs"]) if e == epoch}

    activations = [l for l in drift["layers"] if l["role"] == "activation"]
    assert len(values(act, 1)) == 1
    assert any(len(values(l, 1)) > 1 for l in activations if l["module"] != "conv1")
    assert all(len(values(l, 2)) == 1 for l in drift["layers"])
    final = next(o for o in result["observers"] if (o["module"], o["role"]) == ("conv1", "activation"))
    assert act["scaleMean"][-1] == pytest.approx(final["scale"][0])


def test_tensorboard_events_per_epoch(train_run):
    """The run's TensorBoard file: per epoch the loss and accuracy of the result's history, and every
    layer's scale, its drift since the first step and zero point, matching the observers reported."""
    _, result, config = train_run
    folder = config.parent / "out" / "tensorboard" / "digits"
    (run,) = folder.iterdir()
    assert result["tensorboard"] == str(run)
    (path,) = run.iterdir()
    assert path.name.startswith("events.out.tfevents.")
    events = tbevents.read_events(path)  # every record's CRC checked
    assert events[0]["file_version"] == "brain.Event:2"
    epochs = [e for e in events if "scalars" in e]
    assert [e["step"] for e in epochs] == [h["step"] for h in result["history"]]
    for event, epoch in zip(epochs, result["history"]):
        s = event["scalars"]
        assert s["train/loss"] == pytest.approx(epoch["loss"], rel=1e-6)  # float32 in the file
        assert s["accuracy/fake_quant"] == pytest.approx(epoch["accuracy"], rel=1e-6)
        assert s["accuracy/fp32"] == pytest.approx(result["accuracy"]["fp32"], rel=1e-6)
    last = epochs[-1]["scalars"]
    for o in result["observers"]:
        tag = f"{o['module']}/{o['role']}"
        if o["role"] == "weight" or len(o["scale"]) == 1:
            assert last[f"scale/{tag}"] == pytest.approx(sum(o["scale"]) / len(o["scale"]), rel=1e-5)
            assert last[f"zero_point/{tag}"] == o["zeroPoint"][0]
    first = {(l["module"], l["role"]): l["scaleMean"][0] for l in result["drift"]["layers"]}
    for (module, role), start in first.items():
        drift = last[f"scale_drift/{module}/{role}"]
        assert drift == pytest.approx(last[f"scale/{module}/{role}"] / start - 1, rel=1e-4, abs=1e-6)
    # Observers move in epoch 1 (some layer's scale drifts) and are frozen in epoch 2.
    assert any(abs(v) > 1e-6 for k, v in epochs[0]["scalars"].items() if k.startswith("scale_drift/"))
    assert {k: v for k, v in epochs[0]["scalars"].items() if k.startswith("scale/")} == {
        k: v for k, v in last.items() if k.startswith("scale/")
    }
