"""What analyze/sensitivity and search/mixed-precision cost next to one validation pass, on one trained model.

Run: python -m benchmarks.search_cost <config.qat.yaml> [candidates] [samples]
Prints one JSON line: seconds of one fake-quant validation pass (the baseline), of analyze/sensitivity and
of search/mixed-precision (the model trained once before, so neither pays for QAT), their ratios to the
baseline, the search's candidates, front size and per-candidate seconds, and the process's peak RSS. With
`samples`, the validation pass, the sensitivity analysis and the search all use the first `samples` validation
samples; without it, all of them."""

from __future__ import annotations

import json
import resource
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
    samples = int(argv[2]) if len(argv) > 2 else None
    limit = {"samples": samples} if samples else {}
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ctx = RequestContext(0, "bench", {"config": config}, lambda method, params: None)
    trained, _ = session.get(session.load(config, ctx), ctx)

    def one_pass() -> float:
        started = time.perf_counter()
        with trained_model.evaluating(trained.qat, fake_quant=True) as model:
            predict(model, trained.val, ctx, samples)
        return time.perf_counter() - started

    one_pass()  # warm-up
    baseline = sorted(one_pass() for _ in range(5))[2]
    started = time.perf_counter()
    methods.call("analyze/sensitivity", {"config": config, **limit})
    sensitivity = time.perf_counter() - started
    started = time.perf_counter()
    result = methods.call("search/mixed-precision", {"config": config, "budget": {"candidates": candidates}, **limit})
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
                "threads": torch.get_num_threads(),
                # the process's peak: QAT of the model (when not cached), both analyses and every candidate's build
                "peakRssMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
