"""Typed errors (KernelErrorData), cancellation, and that the kernel keeps serving after each."""

import time

import pytest
import yaml
from conftest import copy_example
from rpc_client import RpcError


def _write_config(config, mutate):
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    mutate(data)
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


@pytest.mark.parametrize(
    "mutate,path",
    [
        (lambda d: d["qconfig"]["activation"].update(quant_max=300), "qconfig.activation.quant_max"),
        (lambda d: d["qconfig"]["weight"].update(quant_min=-129), "qconfig.weight.quant_min"),
        (lambda d: d["qconfig"]["activation"].update(quant_min=255, quant_max=0), "qconfig.activation.quant_max"),
        (lambda d: d["train"].update(optimizer="rmsprop"), "train.optimizer"),
        (lambda d: d["model"].update(entry="missing.py:make_model"), "model.entry"),
        (
            lambda d: d.update(
                overrides=[
                    {"match": "conv1", "weight": {"observer": "MinMaxObserver", "qscheme": "per_channel_symmetric"}}
                ]
            ),
            "overrides.0.weight.qscheme",
        ),
        (lambda d: d.update(flow="eager", overrides=[{"match": "fc2", "precision": "fp32"}]), "overrides.0.precision"),
    ],
)
def test_config_invalid(kernel, validate, tmp_path, mutate, path):
    config = copy_example(tmp_path / "digits")
    _write_config(config, mutate)
    with pytest.raises(RpcError) as err:
        kernel.request("compare/layers", {"config": str(config)})
    assert err.value.code == -32001, err.value.message
    validate("KernelErrorData", err.value.data)
    assert err.value.data["kind"] == "configInvalid"
    assert err.value.data["path"] == path


def test_user_code_error_points_at_user_line(kernel, validate, tmp_path):
    config = copy_example(tmp_path / "digits")
    model_py = config.parent / "model.py"
    source = model_py.read_text(encoding="utf-8")
    # A print first: user output must not corrupt the RPC stream on stdout.
    source = source.replace(
        "    torch.manual_seed(0)\n",
        "    torch.manual_seed(0)\n    print('building the model')\n    raise ValueError('bad model')\n",
    )
    model_py.write_text(source, encoding="utf-8")
    line = source.splitlines().index("    raise ValueError('bad model')") + 1
    with pytest.raises(RpcError) as err:
        kernel.request("compare/layers", {"config": str(config)})
    assert err.value.code == -32002, err.value.message
    data = err.value.data
    validate("KernelErrorData", data)
    assert data["kind"] == "userCode"
    assert data["location"] == {"file": str(model_py), "line": line}
    assert "ValueError: bad model" in data["traceback"]


def test_cancel_then_keep_serving(kernel, validate, tmp_path):
    config = copy_example(tmp_path / "digits")
    # Far more QAT steps than could finish before the cancel arrives.
    request_id = kernel.request_async("compare/layers", {"config": str(config), "steps": 1_000_000})
    kernel.wait_progress(request_id)
    time.sleep(0.2)
    kernel.notify("$/cancelRequest", {"id": request_id})
    response = kernel.wait_response(request_id, timeout=120)
    assert response["error"]["code"] == -32800, response
    validate("KernelErrorData", response["error"]["data"])
    assert response["error"]["data"]["kind"] == "cancelled"
    assert kernel.request("kernel/info")["packages"]["torch"]["version"]
