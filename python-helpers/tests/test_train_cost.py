"""benchmarks.train_cost (npm run bench train) on a copy of examples/cifar without checkpoints: both modes
report what they timed and seeding leaves untrained weights in out/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HELPERS = Path(__file__).resolve().parents[1]


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *args], cwd=HELPERS, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_workspace_and_train_cost_on_a_cifar_copy(tmp_path):
    configs = _run("benchmarks.workspace", "cifar", str(tmp_path / "cifar")).split()
    assert sorted(Path(c).name for c in configs) == ["mobilenetv2.qat.yaml", "resnet18.qat.yaml"]
    assert not (tmp_path / "cifar" / "out").exists()
    config = str(tmp_path / "cifar" / "mobilenetv2.qat.yaml")
    rows = {}
    for mode in ("fp32", "qat"):
        line = [l for l in _run("benchmarks.train_cost", config, mode, "2").splitlines() if l.startswith("{")]
        rows[mode] = json.loads(line[-1])
    assert (tmp_path / "cifar" / "out" / "mobilenetv2.fp32.pt").is_file()  # seeded, not pre-trained
    for mode, row in rows.items():
        assert row["mode"] == mode and row["steps"] == 2 and row["batch"] == 32
        assert row["samples"] == 64  # two timed steps of 32; the warm-up step is not counted
        assert row["epochSamples"] == 1257
        assert 0 < row["seconds"] and row["samplesPerSecond"] == row["samples"] / row["seconds"]
        assert row["epochSeconds"] > row["seconds"]
        assert row["rssMb"]["peak"] >= row["rssMb"]["loaded"] > 100
