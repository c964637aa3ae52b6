"""benchmarks.compare_cost (npm run bench compare) on a copy of the digits example: every method is timed in
the same interleaved rounds, ratios are to the two forwards (compare/stages' capture also to one forward of each
stage it runs, TVM and the C runner included where they build here, their builds timed apart), and noisy figures
are named."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from conftest import copy_example

from qat_kernel.analysis import divergence
from qat_kernel.rpc.errors import PackageMissing
from qat_kernel.runtimes import targets
from qat_kernel.runtimes.c import toolchain
from qat_kernel.runtimes.tvm import stage as tvm_stage

HELPERS = Path(__file__).resolve().parents[1]
METHODS = {"twoForwards", "oursPropagated", "oursFull", "numericDebugger", "stageForwards", "stages"}


def _expected_stages() -> list[str]:
    """The stages compare/stages builds for the digits CNN here: the C runner where a C compiler is installed,
    TVM where it imports on a CPU build/tvm has a preset for (x86-64, aarch64)."""
    stages = ["fp32", "fakeQuant", "int8", "ort"]
    try:
        toolchain.c_compiler(targets.host_arch())
        stages.append("c")
    except PackageMissing:
        pass
    if importlib.util.find_spec("tvm") is not None and targets.host_arch() in tvm_stage.PRESETS:
        stages.append("tvm")
    return stages


def test_compare_cost_on_a_digits_copy(tmp_path):
    config = copy_example(tmp_path / "digits")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.compare_cost", str(config), "16,32", "3"],
        cwd=HELPERS,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["samples"] for r in rows] == [16, 32]
    for row in rows:
        assert row["repeats"] == 3 and row["layers"] == 4
        assert set(row["seconds"]) == METHODS == set(row["ratios"])
        assert all(s > 0 for s in row["seconds"].values())
        assert row["ratios"]["twoForwards"] == 1.0
        for name, ratio in row["ratios"].items():
            assert ratio == row["seconds"][name] / row["seconds"]["twoForwards"]
        assert set(row["noisy"]) <= METHODS
        assert row["stagesRatio"] == row["seconds"]["stages"] / row["seconds"]["stageForwards"]
        # the capture and its baseline run the same stages; the builds are timed once, in no ratio
        assert row["stages"] == _expected_stages()
        assert row["stageLabels"] == [divergence.LABELS[st] for st in row["stages"]]
        assert row["buildSeconds"] > 0
        assert set(row["builds"]) == {"c", "tvm"} & set(row["stages"]) and all(s > 0 for s in row["builds"].values())
        assert sum(row["builds"].values()) <= row["buildSeconds"]
        assert row["peakRssMb"] > 100
    assert rows[0]["buildSeconds"] == rows[1]["buildSeconds"]  # built once for both sample counts
