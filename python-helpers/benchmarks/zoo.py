"""Every stage of one zoo model, timed: the row of `npm run bench zoo`'s model x stage table.

Run (in the zoo environment): python -m benchmarks.zoo <model> <folder>
Writes the model's workspace into <folder> (benchmarks/zoo_models.py), runs benchmarks.zoo_models.STAGES in this
process, as the kernel would serve them one after the other (later stages reuse the trained model), and prints one
JSON line: {model, title, stages: {method: {ok, seconds, kind?, message?}}, torch, cpu}. One model per process, so
a model's memory is its own."""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path


def main(model: str, folder: str) -> None:
    import torch

    from benchmarks.zoo_models import MODELS, STAGES, write_workspace
    from qat_kernel import methods
    from qat_kernel.rpc.errors import from_exception

    config = str(write_workspace(model, Path(folder)))
    stages: dict = {}
    for method, params in STAGES:
        started = time.monotonic()
        try:
            methods.call(method, {"config": config, **params})
            stages[method] = {"ok": True, "seconds": round(time.monotonic() - started, 1)}
        except Exception as exc:  # noqa: BLE001 - every failure becomes the typed error a user would see
            error = from_exception(exc, folder).to_rpc()
            stages[method] = {
                "ok": False,
                "seconds": round(time.monotonic() - started, 1),
                "kind": (error.get("data") or {}).get("kind"),
                "message": error["message"][:300],
            }
    print(
        json.dumps(
            {
                "model": model,
                "title": MODELS[model].title,
                "stages": stages,
                "torch": torch.__version__,
                "cpu": platform.processor() or platform.machine(),
                "threads": torch.get_num_threads(),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
