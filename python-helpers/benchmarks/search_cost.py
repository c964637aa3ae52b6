"""What analyze/sensitivity and search/mixed-precision cost next to one validation pass, on one trained model.

Run: python -m benchmarks.search_cost <config.qat.yaml> [candidates]
Prints one JSON line: seconds of one fake-quant validation pass (the baseline), of analyze/sensitivity and
of search/mixed-precision (the model trained once before, so neither pays for QAT), their ratios to the
baseline, and the search's candidates, front size and per-candidate seconds."""

from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    import torch

    from qat_kernel import methods
    from qat_kernel.pipeline import session, trained_model
    from qat_kernel.pipeline.training import predict
    from qat_kernel.rpc.context import RequestContext

    config = argv[0]
    candidates = int(argv[1]) if len(argv) > 1 else 24
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ctx = RequestContext(0, "bench", {"config": config}, lambda method, params: None)
    trained, _ = session.get(session.load(config, ctx), ctx)

    def one_pass() -> float:
        started = time.perf_counter()
        with trained_model.evaluating(trained.qat, fake_quant=True) as model:
            predict(model, trained.val, ctx)
        return time.perf_counter() - started

    one_pass()  # warm-up
    baseline = sorted(one_pass() for _ in range(5))[2]
    started = time.perf_counter()
    methods.call("analyze/sensitivity", {"config": config})
    sensitivity = time.perf_counter() - started
    started = time.perf_counter()
    result = methods.call("search/mixed-precision", {"config": config, "budget": {"candidates": candidates}})
    search = time.perf_counter() - started
    n = len(result["candidates"])
    print(
        json.dumps(
            {
                "layers": len(result["layers"]),
                "samples": result["samples"],
                "candidates": n,
                "front": len(result["front"]),
                "seconds": {"onePass": baseline, "sensitivity": sensitivity, "search": search},
                "ratios": {"sensitivity": sensitivity / baseline, "search": search / baseline},
                "searchPerCandidate": search / n,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
