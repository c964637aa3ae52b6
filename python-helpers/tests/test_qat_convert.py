"""qat/convert saves the INT8 model as an artifact that loads back and computes the same outputs."""

from pathlib import Path

import torch
from conftest import copy_example


def test_pt2e_int8_artifact_round_trips(kernel, compare_run, validate):
    _, _, config = compare_run
    result = kernel.request("qat/convert", {"config": str(config)})
    validate("QatConvertResult", result)
    path = Path(result["path"])
    assert path == config.parent / "out" / "digits.int8.pt2" and result["format"] == "exported-program"
    # (Whether the trained model is reused depends on what other tests evicted from the kernel's cache.)
    assert result["accuracy"]["int8"] >= result["accuracy"]["fp32"] - 0.02
    assert result["size"]["ratio"] >= 3.5 and result["size"]["fileBytes"] == path.stat().st_size
    # Only what the INT8 graph reads is stored (convert_pt2e leaves the FP32 parameters attached).
    assert result["size"]["fileBytes"] < result["size"]["fp32Bytes"], result["size"]
    assert not list(path.parent.glob(".*.tmp"))
    # The artifact alone (no user code, no pickle); its Q/DQ ops live in torch's quantized_decomposed library.
    import torch.ao.quantization.fx._decomposed  # noqa: F401

    loaded = torch.export.load(str(path)).module()
    x = torch.randn(5, 1, 8, 8, generator=torch.Generator().manual_seed(3))
    again = kernel.request("qat/convert", {"config": str(config), "path": "out/copy.pt2"})
    other = torch.export.load(again["path"]).module()
    assert torch.equal(loaded(x), other(x)), "two saves of one model differ"
    logits = loaded(x)
    assert logits.shape == (5, 10) and torch.isfinite(logits).all()


def test_eager_int8_state_dict_loads_without_pickle(kernel, tmp_path, validate):
    import yaml

    config = copy_example(tmp_path / "digits")
    eager = config.parent / "eager.qat.yaml"
    data = yaml.safe_load(eager.read_text(encoding="utf-8"))
    data.setdefault("train", {})["steps"] = 5
    eager.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    result = kernel.request("qat/convert", {"config": str(eager)})
    validate("QatConvertResult", result)
    assert result["format"] == "state-dict" and result["path"].endswith("eager.int8.pt")
    state = torch.load(result["path"], weights_only=True)
    assert any(k.startswith("conv1.") for k in state), list(state)[:5]
