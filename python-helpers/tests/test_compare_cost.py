"""benchmarks.compare_cost (npm run bench compare) on a copy of the digits example: every method is timed in
the same interleaved rounds, ratios are to the two forwards (compare/stages' also to one forward of each of its
stages), and noisy figures are named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import copy_example

HELPERS = Path(__file__).resolve().parents[1]
METHODS = {"twoForwards", "oursPropagated", "oursFull", "numericDebugger", "stageForwards", "stages"}


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
        assert row["peakRssMb"] > 100
