"""A planted bad layer (overrides: conv2 gets 2-bit weights) must come out worst in both compare/layers
and analyze/sensitivity; a precision override keeps its layer float and says so."""

from conftest import PLANTED_OVERRIDES


def test_results_match_schema(planted_run, validate):
    _, compare, sensitivity = planted_run
    validate("CompareLayersResult", compare)
    validate("SensitivityResult", sensitivity)
    assert sensitivity["reused"] is True  # the model compare/layers trained


def test_overrides_apply_per_layer(planted_run):
    _, compare, _ = planted_run
    layers = {layer["module"]: layer for layer in compare["layers"]}
    assert list(layers) == ["conv1", "conv2", "fc2"]  # fc1 kept float
    assert layers["conv2"]["override"] == 0
    assert "override" not in layers["conv1"] and "override" not in layers["fc2"]
    # The whole fused group follows the override, not only the conv: still compared as one group.
    assert layers["conv2"]["group"] == ["conv2d", "batch_norm", "relu"]
    assert compare["keptFloat"] == [
        {
            "module": "fc1",
            "precision": "fp16",
            "override": 1,
            "note": "fp16 is not emulated yet: the layer runs in fp32",
        }
    ]


def test_planted_layer_ranks_worst_in_compare(planted_run):
    _, compare, _ = planted_run
    by_local = sorted(compare["layers"], key=lambda layer: layer["local"]["sqnr"])
    assert by_local[0]["module"] == "conv2", [(l["module"], l["local"]["sqnr"]) for l in by_local]
    by_quantization_alone = sorted(compare["layers"], key=lambda layer: layer["vsQatFloatLocal"]["sqnr"])
    assert by_quantization_alone[0]["module"] == "conv2"
    conv2 = by_local[0]
    # 2 bits vs 8: far below every healthy layer.
    assert conv2["local"]["sqnr"] < min(l["local"]["sqnr"] for l in by_local[1:]) - 6


def test_planted_layer_ranks_worst_in_sensitivity(planted_run):
    _, _, sensitivity = planted_run
    ranked = sensitivity["layers"]
    assert ranked[0]["module"] == "conv2" and ranked[0]["rank"] == 1
    assert ranked[0]["quantizedAlone"]["sqnr"] < min(l["quantizedAlone"]["sqnr"] for l in ranked[1:]) - 6
    # Keeping conv2 float recovers most of the output error.
    assert ranked[0]["keptFloat"]["sqnr"] > sensitivity["accuracy"]["fakeQuantSqnr"] + 6


def test_planted_override_is_in_the_config(planted_run):
    config, _, _ = planted_run
    import yaml

    assert yaml.safe_load(config.read_text())["overrides"] == PLANTED_OVERRIDES
