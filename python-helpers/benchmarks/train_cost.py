"""What one training epoch costs, FP32 and QAT, on a config's model and data, through the kernel's own loops.

Run: python -m benchmarks.train_cost <config.qat.yaml> <fp32|qat> <steps>
Prints one JSON line: {mode, steps, batch, samples, seconds, samplesPerSecond, epochSamples, epochSeconds,
threads, rssMb: {loaded, peak}}.

- fp32: the model in train mode, the config's optimizer, `steps` optimizer steps through
  training.train_epochs' step;
- qat: the same model through pt2e_flow.Pt2eQat (torch.export + prepare_qat_pt2e with the config's
  qconfig and overrides: fake quant on weights and activations), then `steps` steps of training.train_steps,
  as a QAT run does.

One warm-up step comes first (the first step pays for autograd's and the fake quants' lazy set-up); the
timed steps follow it. epochSeconds is the epoch's sample count over the measured rate. Run each mode in its
own process: peak RSS (ru_maxrss) only grows, so a second mode in the same process would read the first's.

The cifar example's make_* functions load a cached FP32 checkpoint and pre-train one when it is missing; for a
copy of the example without one, seeded untrained weights are written first (the cost of a step does not
depend on the weights)."""

from __future__ import annotations

import itertools
import json
import resource
import sys
import time
from pathlib import Path


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def seed_untrained_checkpoints(folder: Path) -> None:
    """Untrained weights for an example whose model.py caches FP32 checkpoints (examples/cifar's BUILDERS)."""
    import importlib.util

    import torch

    model_py = folder / "model.py"
    spec = importlib.util.spec_from_file_location("bench_example_model", model_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, build in getattr(module, "BUILDERS", {}).items():
        path = module.checkpoint(name) if hasattr(module, "checkpoint") else folder / "out" / f"{name}.fp32.pt"
        if not Path(path).exists():
            torch.manual_seed(0)
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            torch.save(build().state_dict(), path)


def main(argv: list[str]) -> int:
    import torch

    from qat_kernel.pipeline import pt2e_flow, qconfig, runner, session, usercode
    from qat_kernel.pipeline.training import make_optimizer, train_epochs, train_steps
    from qat_kernel.rpc.context import RequestContext

    config, mode, steps = argv[0], argv[1], int(argv[2])
    if mode not in ("fp32", "qat"):
        raise SystemExit(f"mode must be fp32 or qat, not {mode!r}")
    ctx = RequestContext(0, "bench", {"config": config}, lambda method, params: None)
    cfg = session.load(config, ctx)
    seed_untrained_checkpoints(cfg.folder)
    with usercode.workspace(cfg.folder):
        user = runner.load_user_objects(cfg)
    model, train = user.model, list(user.train)
    batches = list(itertools.islice(itertools.cycle(train), steps + 1))
    epoch_samples = sum(len(y) for _, y in train)
    if mode == "qat":
        qat = pt2e_flow.Pt2eQat(model, user.example, qconfig.plan(cfg))
        model = qat.model
    else:
        model.train()
    optimizer = make_optimizer(cfg.get("train.optimizer", "adam"), model.parameters(), cfg.get("train.lr", 1e-3))
    loaded = _rss_mb()

    def run(part):
        if mode == "qat":
            train_steps(model, optimizer, part, len(part), ctx, "qat", loss_fn=user.loss)
        else:
            train_epochs(model, optimizer, part, 1, ctx, "fp32", user.loss)

    run(batches[:1])
    started = time.perf_counter()
    run(batches[1:])
    seconds = time.perf_counter() - started
    samples = sum(len(y) for _, y in batches[1:])
    rate = samples / seconds
    print(
        json.dumps(
            {
                "mode": mode,
                "steps": steps,
                "batch": len(batches[1][1]),
                "samples": samples,
                "seconds": seconds,
                "samplesPerSecond": rate,
                "epochSamples": epoch_samples,
                "epochSeconds": epoch_samples / rate,
                "threads": torch.get_num_threads(),
                "rssMb": {"loaded": loaded, "peak": _peak_rss_mb()},
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
