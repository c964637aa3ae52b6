import pytest
from rpc_client import RpcError


def test_kernel_info_versions(kernel, validate):
    info = kernel.request("kernel/info")
    validate("KernelInfoResult", info)
    for name in ("torch", "torchao", "onnx", "onnxruntime"):
        assert info["packages"][name]["version"], info["packages"][name]
    assert info["packages"]["torch"]["version"].startswith("2.13")


def test_unknown_method(kernel):
    with pytest.raises(RpcError) as err:
        kernel.request("no/such/method")
    assert err.value.code == -32601


def test_invalid_params(kernel):
    with pytest.raises(RpcError) as err:
        kernel.request("compare/layers", {"config": "x.qat.yaml", "samples": 0})
    assert err.value.code == -32602
