"""Every sample message in protocol/fixtures/rpc matches its definition in the RPC schema."""

import json

import pytest
from conftest import PROTOCOL

DEFINITIONS = {
    "kernel-info.result": "KernelInfoResult",
    "compare-layers.params": "CompareLayersParams",
    "compare-layers.result": "CompareLayersResult",
    "progress": "ProgressParams",
    "progress-train-step": "ProgressParams",
    "progress-epoch": "ProgressParams",
    "qat-train.params": "QatTrainParams",
    "qat-train.result": "QatTrainResult",
    "eval-accuracy.params": "EvalAccuracyParams",
    "eval-accuracy.result": "EvalAccuracyResult",
    "export-onnx.params": "ExportOnnxParams",
    "export-onnx.result": "ExportOnnxResult",
    "sensitivity.params": "SensitivityParams",
    "sensitivity.result": "SensitivityResult",
    "build-tvm.params": "BuildTvmParams",
    "build-tvm.result": "BuildTvmResult",
    "build-tvm-rpc.result": "BuildTvmResult",
    "build-ort.params": "BuildOrtParams",
    "build-ort.result": "BuildOrtResult",
    "build-inductor.params": "BuildInductorParams",
    "build-inductor.result": "BuildInductorResult",
    "verify-parity.params": "VerifyParityParams",
    "verify-parity.result": "VerifyParityResult",
    "deploy-c-artifact.params": "DeployCParams",
    "deploy-c-artifact.result": "DeployCResult",
    "bench-run.params": "BenchRunParams",
    "bench-run.result": "BenchRunResult",
    "graph-export.params": "GraphExportParams",
    "graph-export.result": "GraphExportResult",
    "qat-convert.params": "QatConvertParams",
    "qat-convert.result": "QatConvertResult",
    "histograms.params": "HistogramsParams",
    "histograms.result": "HistogramsResult",
}
FIXTURES = sorted((PROTOCOL / "fixtures" / "rpc").glob("*.json"))


def _definition(stem: str) -> str:
    return "KernelErrorData" if stem.startswith("error-") else DEFINITIONS[stem]


def test_fixtures_exist():
    assert FIXTURES


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_validates(path, validate):
    validate(_definition(path.stem), json.loads(path.read_text(encoding="utf-8")))


def test_every_method_has_params_and_result_fixtures(rpc_schema):
    """Each method's params/result definitions are exercised by a fixture."""
    covered = set(DEFINITIONS.values())
    for method, spec in rpc_schema["properties"]["methods"]["properties"].items():
        for part in ("params", "result"):
            name = spec["properties"][part]["$ref"].rsplit("/", 1)[-1]
            assert name in covered or name == "KernelInfoParams", f"{method} {part}: no fixture for {name}"


def test_methods_in_schema_are_served():
    import json

    from qat_kernel.methods import METHODS

    schema = json.loads((PROTOCOL / "kernel-rpc.schema.json").read_text(encoding="utf-8"))
    assert set(schema["properties"]["methods"]["properties"]) == set(METHODS)
