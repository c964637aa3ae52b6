"""What compare/layers costs next to two plain forward passes and the Numeric Suite's PT2E flow.

Run: python -m benchmarks.compare_cost <config.qat.yaml> [samples,...] [repeats]
Prints one JSON line per sample count: median seconds of each method on the same validation samples
and the ratios to one FP32 forward + one INT8 forward of the same batches, and the process's peak RSS.
The methods are timed in interleaved rounds (A B C D, A B C D, ...) after one warm-up call each, so a
change of load hits all of them alike; a method whose calls spread wide is flagged noisy (the same
rule as every latency table: qat_kernel.runtimes.bench.stats).

- two forwards: the FP32 graph and the converted INT8 graph, each called once per batch;
- ours, propagated: compare_pt2e's metrics with the local and QAT-float columns switched off (what
  the Numeric Suite computes);
- ours, full: compare/layers as the kernel runs it (propagated and local, against FP32 and the QAT
  float model);
- torchao numeric debugger (the Numeric Suite for PT2E): prepare_for_propagation_comparison on the
  float and the INT8 model (both carrying debug handles from generate_numeric_debug_handle), one run
  each, extract_results_from_loggers, compare_results. Its models are prepared and converted here with
  the same quantizer, since the handles must exist before prepare; the comparison is what is timed;
- stage forwards: one forward of each stage compare/stages runs (FP32, fake-quant, PyTorch INT8, the QDQ
  export in ONNX Runtime, TVM's whole-model library, one plain run of the compiled C runner), the baseline of
- stages: compare/stages' capture (every layer in every stage, propagated and local, the metrics), without
  training, export, the builds and the accuracies.
The stages are built once per process before any round (compare_stages.build: TVM's two libraries, the C runner,
ORT's sessions), its seconds reported apart (buildSeconds, in no ratio). A stage that cannot be built here (no C
compiler, TVM cannot build the model) is left out of both the capture and its baseline; "stages" names those
timed."""

from __future__ import annotations

import copy
import gc
import json
import resource
import sys
import time


def _interleaved(fns: dict, repeats: int) -> dict:
    """{name: LatencyStats of its calls in ms}: one warm-up call each (first calls pay for lazy init),
    then `repeats` rounds calling each once."""
    from qat_kernel.runtimes.bench import stats

    for fn in fns.values():
        fn()
    times: dict = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            gc.collect()
            started = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - started) * 1e3)
    return {name: stats(t, 1) for name, t in times.items()}


def main(argv: list[str]) -> int:
    import torch

    from qat_kernel.jobs import compare_stages
    from qat_kernel.pipeline import session
    from qat_kernel.pipeline.training import first_inputs
    from qat_kernel.rpc.context import RequestContext

    config = argv[0]
    counts = [int(c) for c in (argv[1] if len(argv) > 1 else "64").split(",")]
    repeats = int(argv[2]) if len(argv) > 2 else 7
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    ctx = RequestContext(0, "bench", {"config": config}, lambda method, params: None)
    cfg = session.load(config, ctx)
    trained, _ = session.get(cfg, ctx)
    converted = session.convert(trained, ctx)
    folder = str(cfg.folder)
    onnx_model = _qdq_model(trained, converted, ctx)
    built = compare_stages.build(trained, onnx_model, folder, ctx)
    try:
        debugger = None
        for samples in counts:
            inputs = first_inputs(trained.val, samples)
            if debugger is None:
                debugger = _numeric_debugger_models(trained, inputs)
            row = _measure(trained, converted, debugger, onnx_model, built, inputs, folder, ctx, repeats)
            print(json.dumps(row), flush=True)
    finally:
        built.close()
    return 0


def _timed_stages(built) -> list[str]:
    """The stages compare/stages runs here (those built), in its order."""
    from qat_kernel.analysis import divergence

    missing = {"c": built.c.missing, "tvm": built.tvm.missing}
    return [st for st in divergence.STAGES if missing.get(st) is None]


def _qdq_model(trained, converted, ctx):
    """The model's QDQ ONNX export, as compare/stages runs it in ONNX Runtime."""
    import tempfile
    from pathlib import Path

    import onnx

    from qat_kernel.runtimes.onnx import qdq_export

    with tempfile.TemporaryDirectory() as folder:
        path = qdq_export.export_trained(trained, converted, Path(folder) / "model.onnx", qdq_export.DEFAULT_OPSET, ctx)
        return onnx.load(str(path))


def _measure(trained, converted, debugger, onnx_model, built, inputs, folder, ctx, repeats) -> dict:
    import torch
    from torchao.quantization.pt2e import (
        compare_results,
        extract_results_from_loggers,
        prepare_for_propagation_comparison,
    )

    from qat_kernel.analysis import comparison, divergence
    from qat_kernel.jobs import compare_stages
    from qat_kernel.pipeline.trained_model import evaluating
    from qat_kernel.runtimes.ort import sessions

    def two_forwards():
        with torch.no_grad():
            for x in inputs:
                trained.fp32_graph(*x)
                converted(*x)

    def ours_full():
        comparison.compare_pt2e(trained, inputs, folder, ctx)

    def ours_propagated():
        comparison.compare_pt2e(trained, inputs, folder, ctx, local=False, qat_reference=False)

    def numeric_debugger():
        ref_logged = prepare_for_propagation_comparison(debugger["fp32"])
        q_logged = prepare_for_propagation_comparison(debugger["int8"])
        with torch.no_grad():
            for x in inputs:
                ref_logged(*x)
                q_logged(*x)
        compare_results(extract_results_from_loggers(ref_logged), extract_results_from_loggers(q_logged))

    ort = sessions.session(onnx_model.SerializeToString())
    timed_stages = _timed_stages(built)
    c_input, c_out = _c_batch(trained, converted, inputs) if "c" in timed_stages else (None, 0)

    def stage_forwards():
        with torch.no_grad(), evaluating(trained.qat, fake_quant=True):
            for x in inputs:
                trained.fp32_graph(*x)
                trained.qat.model(*x)
                converted(*x)
                ort.run(None, sessions.feed(ort, x))
                if "tvm" in timed_stages:
                    built.tvm.forward(x)
        if c_input is not None:  # the runner reads every sample in one call, as the capture runs it
            built.c.run(c_input, c_out)

    def stages():
        compare_stages.capture(trained, onnx_model, inputs, folder, ctx, built)

    timed = _interleaved(
        {
            "twoForwards": two_forwards,
            "oursPropagated": ours_propagated,
            "oursFull": ours_full,
            "numericDebugger": numeric_debugger,
            "stageForwards": stage_forwards,
            "stages": stages,
        },
        repeats,
    )
    if _timed_stages(built) != timed_stages:  # a stage failed running: its baseline and capture would differ
        raise RuntimeError(f"stages {timed_stages} built, {_timed_stages(built)} left after running them")
    timings = {k: v["medianMs"] / 1e3 for k, v in timed.items()}
    base = timings["twoForwards"]
    return {
        "samples": sum(len(x) for x in inputs),
        "batches": len(inputs),
        "repeats": repeats,
        "threads": torch.get_num_threads(),
        "layers": len(comparison.compare_pt2e(trained, inputs, folder, ctx)),
        "seconds": timings,
        "ratios": {k: v / base for k, v in timings.items()},
        "stagesRatio": timings["stages"] / timings["stageForwards"],
        "stages": timed_stages,  # the stages in both the capture and its baseline
        "stageLabels": [divergence.LABELS[st] for st in timed_stages],
        # once per process, before the rounds (in no ratio): everything built, and TVM's and the C runner's parts
        "buildSeconds": built.seconds,
        "builds": {st: s.seconds for st, s in (("tvm", built.tvm), ("c", built.c)) if st in timed_stages},
        "noisy": [k for k, v in timed.items() if v["noisy"]],
        # the process's peak so far: training, both graphs and every method timed up to this row
        "peakRssMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _c_batch(trained, converted, inputs):
    """(every sample as one float array, the output size): what the C runner reads in one call."""
    import numpy as np
    import torch

    from qat_kernel.pipeline.model_io import Inputs, as_inputs

    joined = Inputs.concat([as_inputs(x, trained.io.names) for x in inputs]).numpy()
    with torch.no_grad():
        out = converted(*inputs[0])
    return joined.values[0], int(np.prod(out.shape[1:]))


def _numeric_debugger_models(trained, inputs) -> dict:
    """FP32 and INT8 graphs carrying numeric debug handles, quantized as the kernel's x86 recipe does."""
    import torch
    from torchao.quantization.pt2e import generate_numeric_debug_handle, move_exported_model_to_eval
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    float_model = copy.deepcopy(trained.fp32).eval()
    from qat_kernel.pipeline.pt2e_flow import dynamic_batch

    # a dynamic batch, as the kernel exports: the sample counts (and a last short batch) differ in batch size
    exported = torch.export.export(float_model, tuple(inputs[0]), dynamic_shapes=dynamic_batch(len(inputs[0].values)))
    generate_numeric_debug_handle(exported)
    reference = exported.module()
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    prepared = prepare_qat_pt2e(copy.deepcopy(reference), quantizer)
    with torch.no_grad():
        for x in inputs:
            prepared(*x)  # observers see real data, as after QAT
    move_exported_model_to_eval(prepared)
    return {"fp32": reference, "int8": convert_pt2e(prepared)}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
