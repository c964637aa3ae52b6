"""The deploy folder deploy/c-artifact writes (<config folder>/out/deploy-<target>/): where it is, its report,
and its runner compiled and run on this machine (verify/parity's c-runner row)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel.reads import REPORT_BYTES, read_regular_text
from qat_kernel.runtimes import provenance, targets

if TYPE_CHECKING:
    import numpy as np

    from qat_kernel.pipeline.config import Config

REPORT = "deploy-report.json"


def out_dir_for(cfg: Config, name: str) -> Path:
    return targets.out_dir(cfg, "deploy", name)


def host_runner(deploy_dir: Path) -> dict[str, Any] | None:
    """The runner source and header of a deploy folder (for verify/parity), or None."""
    report = deploy_dir / REPORT
    if not report.is_file():
        return None
    try:
        data = json.loads(read_regular_text(report, REPORT_BYTES))
        source, header = Path(data["runner"]), Path(data["header"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not a report deploy/c-artifact wrote
    if not (source.is_file() and header.is_file()):
        return None
    # The report names the files: only ones deploy/c-artifact wrote are compiled and run.
    built = provenance.built_here(source) and provenance.built_here(header)
    return {"source": source, "header": header, "outputSize": data["outputSize"], "builtHere": built}


def runner_fn(runner: dict[str, Any], work: Path) -> Callable[[np.ndarray], np.ndarray]:
    """The runner compiled for this machine, as numpy in -> numpy out."""
    from qat_kernel.runtimes.c import toolchain
    from qat_kernel.runtimes.targets import host_arch

    provenance.require(runner["source"], "deploy/c-artifact")
    provenance.require(runner["header"], "deploy/c-artifact")
    binary = work / "c-runner" / "runner"
    toolchain.compile_runner(runner["source"], host_arch(), binary)
    return lambda x: toolchain.run_runner(binary, x, runner["outputSize"], work / "c-runner")[0]
