"""deploy/c-artifact: a folder to take to an embedded target.

  <stem>_qparams.h     each quantized layer's input/output scales and zero points, int8 weights, float
                       and int32 biases, from the converted PT2E model (deploy/layers, deploy/cgen)
  <stem>_runner.c      a portable C99 program (no TVM) that runs that network: int8 conv/linear
                       with int32 accumulation and requantization, lookup tables, and the ops PyTorch
                       keeps float between quantize nodes computed in float (runtimes/c/layers.py lists
                       them), every tensor in one static arena
  bin/<stem>_runner    it, compiled for the target (cross-compiled and static for another architecture)
  samples/             16 real validation inputs (input.f32) and PyTorch INT8's logits for them
                       (expected.f32), to check the runner on the board
  tvm/                 build/tvm's library for the target (model.so), and TVM's C backend output
                       (model_c.tar: kernels as C + the Relax VM executable; model_c.so compiled from it)
  README.md, deploy-report.json

With `verify` (default on) the compiled runner runs on the validation samples, natively or under
qemu-user (reported as emulated), with a trace of every quantized layer's output; both the logits
and each layer are compared with the PyTorch INT8 model. A missing compiler or qemu is a
packageMissing error with the apt command, raised before training.

Stages: load, target, fp32/export/qat/convert (training, when not reused), onnx, generate, compile,
tvm, verify."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports.deploy_c import summary
from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.trained_model import Trained
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid
from qat_kernel.runtimes import parity, provenance, targets
from qat_kernel.runtimes.c.folder import REPORT, out_dir_for
from qat_kernel.runtimes.onnx import qdq_export
from qat_kernel.runtimes.tvm import run as tvm_run

if TYPE_CHECKING:
    import numpy as np
    import torch

    from qat_kernel.runtimes.c.layers import Layer, Network

SAMPLE_COUNT = 16


def stem_of(cfg: Config) -> str:
    from qat_kernel.runtimes.c.cgen import c_stem

    return c_stem(cfg.path.name.split(".")[0])


def _layer_json(layer: Layer) -> dict[str, Any]:
    return layer.to_json()


def readme(stem: str, arch: str, binary: dict[str, Any] | None, tvm: dict[str, Any] | None) -> str:
    lines = [
        f"# {stem}: INT8 deployment folder ({arch})",
        "",
        f"`{stem}_qparams.h` holds the quantized network (scales, zero points, int8 weights, float and int32",
        f"biases); `{stem}_runner.c` runs it in plain C99 (no TVM, no allocation). Build and check it:",
        "",
        "```sh",
        f"cc -std=c99 -O2 -ffp-contract=off -o {stem}_runner {stem}_runner.c -lm",
        f"./{stem}_runner samples/input.f32 out.f32   # N x {{C,H,W}} float32 in, N x outputs float32 out",
        "```",
        "",
        "`samples/expected.f32` holds PyTorch INT8's logits for `samples/input.f32`. PyTorch computes each conv in "
        "float on dequantized values, the runner in int32: a value within a float ulp of a rounding tie can land one "
        "step away, and in a deep network later layers follow it, so compare class decisions and closeness; "
        f"`{stem}_runner IN OUT TRACE REPLAY` checks each layer on reference inputs (see the runner's comment).",
        "`-DQAT_INTEGER_BIAS` adds the int32 bias to the accumulator, as integer-only kernels do.",
        "",
    ]
    if binary:
        lines += [
            f"`bin/{Path(binary['path']).name}` is that runner built with `{binary['compiler']} "
            f"{' '.join(binary['flags'])}`.",
            "",
        ]
    if tvm:
        lines += [
            "`tvm/model.so` is the TVM (Relax) library for this target; it runs in TVM's runtime "
            "(`tvm.runtime.load_module`, `relax.VirtualMachine`).",
            "`tvm/model_c.tar` is TVM's C backend output for the same module (kernels in `lib0.c`, the VM "
            "executable in `devc.c`): C source, but it still needs TVM's runtime to run.",
            "",
        ]
    return "\n".join(lines)


def _verify(
    binary: dict[str, Any],
    arch: str,
    header_layers: Network,
    x: np.ndarray,
    labels: np.ndarray,
    torch_out: np.ndarray,
    converted: torch.fx.GraphModule,
    work: Path,
    ctx: RequestContext,
) -> dict[str, Any]:
    import numpy as np

    from qat_kernel.runtimes.c import toolchain

    started = time.monotonic()
    ctx.progress(
        "verify",
        f"running the runner on {len(x)} validation samples"
        + (" under qemu-user" if arch != toolchain.host_arch() else ""),
        0.2,
    )
    logits, trace, qemu = toolchain.run_runner(Path(binary["path"]), x, torch_out.shape[-1], work, arch, trace=True)
    assert trace is not None  # asked for
    ctx.check_cancelled()
    output = parity.torch_output_step(converted)
    step, kind = output["step"], output["kind"]
    result = {
        "samples": int(len(x)),
        "emulated": qemu is not None,
        "runner": qemu or "native",
        "binary": binary["path"],
        "outputKind": kind,
        "vsTorchInt8": parity.compare(logits, torch_out, step),
    }
    if step is not None:
        result["outputStep"] = float(np.min(step))
    if logits.ndim == 2 and logits.shape[-1] > 1:
        result["accuracy"] = {
            "runner": float((logits.argmax(-1) == labels).mean()),
            "torch": float((torch_out.argmax(-1) == labels).mean()),
        }
    from qat_kernel.runtimes.c import check
    from qat_kernel.runtimes.c.layers import traced

    quantized = traced(header_layers)
    ref = check.reference(converted, quantized, x)
    replayed = check.replay(Path(binary["path"]), x, torch_out.shape[-1], work / "replay", arch, ref)
    rows = check.rows(quantized, trace, ref, replayed)
    result["layers"] = rows
    result["seconds"] = round(time.monotonic() - started, 2)
    ctx.progress("verify", "runner checked against PyTorch INT8", 1.0)
    return result


def _one_float_input(trained: Trained) -> torch.Tensor:
    """The model's one float input example; the runner reads a single float32 tensor."""
    from qat_kernel.runtimes.c.layers import UnsupportedForC

    example = trained.example
    if len(example) != 1 or not example[0].is_floating_point():
        taken = ", ".join(f"{n} ({str(t.dtype).replace('torch.', '')})" for n, t in zip(trained.io.names, example))
        raise UnsupportedForC(
            f"deploy/c-artifact: the C runner reads one float32 input tensor; the model takes {taken}. An "
            "embedding lookup of token ids stays on the host: deploy the part after it, or use build/tvm or build/ort"
        )
    return example[0]


def deploy(
    ctx: RequestContext, *, config: str, target: str, want_verify: bool, want_tvm: bool, samples: int, steps: int | None
) -> dict[str, Any]:
    """The INT8 model as a dependency-free C header and runner, compiled and checked."""
    import numpy as np

    from qat_kernel.runtimes.c import cgen, toolchain
    from qat_kernel.runtimes.c import layers as layers_mod

    started = time.monotonic()
    cfg = opening.load(ctx, config, pt2e="deploy/c-artifact reads the PT2E converted graph; use flow: pt2e")
    name = target
    ctx.progress("target", f"resolving target {name}")
    resolved = None  # the TVM target, when the TVM build is asked for
    if want_tvm:
        spec, _source, resolved = targets.resolve_config(cfg, name)  # TVM's own toolchain checks
        arch = resolved.arch
        if resolved.device != "cpu":
            raise ConfigInvalid(
                f"targets: deploy/c-artifact builds for CPUs; {name} is {resolved.device}", path="targets"
            )
    else:
        spec, _source, _path = targets.config_target(cfg, name)
        arch = targets.arch_of(spec)
    toolchain.c_compiler(arch)
    if want_verify:
        toolchain.emulator(arch)
    ctx.check_cancelled()

    _, trained, reused, converted = opening.model(cfg, ctx, steps=steps, convert=True)
    example = _one_float_input(trained)
    ctx.progress("generate", "reading the layers of the converted model")
    input_q, layers = layers_mod.extract(converted, example, str(cfg.folder))
    stem = stem_of(cfg)
    out_dir = out_dir_for(cfg, name)
    notes: list[str] = []
    with atomic.staging(out_dir) as stage:
        try:
            header = stage / f"{stem}_qparams.h"
            header.write_text(
                cgen.header(stem, cfg.path.name, input_q, tuple(example.shape[1:]), layers), encoding="utf-8"
            )
            runner_src = stage / f"{stem}_runner.c"
            runner_src.write_text(cgen.runner(stem), encoding="utf-8")
            limit = samples
            inputs, labels, torch_out = parity.reference_outputs(trained, limit, converted, ctx)
            x = inputs.values[0]
            (stage / "samples").mkdir()
            x[:SAMPLE_COUNT].tofile(stage / "samples" / "input.f32")
            np.ascontiguousarray(torch_out[:SAMPLE_COUNT], dtype=np.float32).tofile(stage / "samples" / "expected.f32")

            ctx.progress("compile", f"compiling {runner_src.name} for {arch}")
            binary = toolchain.compile_runner(runner_src, arch, stage / "bin" / f"{stem}_runner", integer_bias=False)
            with tempfile.TemporaryDirectory(prefix="qat-size-") as tmp:
                footprint = toolchain.footprint(runner_src, arch, Path(tmp))
            footprint["arenaBytes"] = cgen.arena(tuple(example.shape[1:]), layers)[1] * 4
            ctx.check_cancelled()

            tvm_result = None
            if resolved is not None:
                tvm_result = _tvm(cfg, trained, converted, spec, resolved, stage / "tvm", x, ctx, notes)
            result: dict[str, Any] = {
                "target": name,
                "arch": arch,
                "stem": stem,
                "reused": reused,
                "outDir": str(out_dir),
                "reportPath": str(out_dir / REPORT),
                "header": str(out_dir / header.name),
                "runner": str(out_dir / runner_src.name),
                "readme": str(out_dir / "README.md"),
                "headerBytes": header.stat().st_size,
                "weightBytes": int(sum(la.weight.size for la in layers if la.weight is not None)),
                "outputSize": int(torch_out.shape[-1]),
                "input": {
                    "shape": list(example.shape[1:]),
                    "scale": input_q.scale,
                    "zeroPoint": input_q.zero_point,
                    "dtype": input_q.dtype,
                },
                "layers": [_layer_json(la) for la in layers],
                "footprint": footprint,
                "samples": {
                    "input": str(out_dir / "samples" / "input.f32"),
                    "expected": str(out_dir / "samples" / "expected.f32"),
                    "count": min(SAMPLE_COUNT, len(x)),
                },
            }
            if want_verify:
                with tempfile.TemporaryDirectory(prefix="qat-runner-") as tmp:
                    result["verify"] = _verify(binary, arch, layers, x, labels, torch_out, converted, Path(tmp), ctx)
            result["binary"] = {**binary, "path": str(out_dir / "bin" / Path(binary["path"]).name)}
            if tvm_result is not None:
                result["tvm"] = atomic.rebase(tvm_result, str(stage), str(out_dir))
            (stage / "README.md").write_text(readme(stem, arch, result["binary"], tvm_result), encoding="utf-8")
            result["notes"] = notes
            result["summary"] = summary(result)
            result["seconds"] = round(time.monotonic() - started, 2)
            atomic.write_json(stage / REPORT, result, indent=2)
            ctx.check_cancelled()
        finally:
            tvm_run.forget_vms(stage)
    # What verify/parity compiles and runs, and the TVM libraries beside it.
    provenance.record(out_dir / header.name, out_dir / runner_src.name, *sorted(out_dir.glob("tvm/*.so")))
    return result


def _tvm(
    cfg: Config,
    trained: Trained,
    converted: torch.fx.GraphModule,
    spec: str | dict[str, Any],
    resolved: targets.ResolvedTarget,
    folder: Path,
    x: np.ndarray,
    ctx: RequestContext,
    notes: list[str],
) -> dict[str, Any]:
    """build/tvm's library for the target and TVM's C backend output, into `folder`."""
    import numpy as np

    from qat_kernel.runtimes.tvm import c_backend as tvm_c
    from qat_kernel.runtimes.tvm.build import build_tvm as tvm_build_fn
    from qat_kernel.runtimes.tvm.run import load_tvm

    onnx_file, _ = qdq_export.qdq_onnx(cfg, trained, converted, ctx)
    ctx.progress("tvm", "TVM library (llvm) for the target", 0.0)
    report = tvm_build_fn(onnx_file, spec, folder, check_cancelled=ctx.check_cancelled)
    ctx.progress("tvm", "TVM C backend (target c)", 0.5)
    out: dict[str, Any] = {
        "library": report["artifact"],
        "libraryBytes": report["artifact_bytes"],
        "tvmTarget": report["target"],
        "opsPerPrecision": report["ops_per_precision"],
    }
    c_dir = folder / "c"
    c_source = tvm_c.build_c_source(onnx_file, c_dir, resolved.arch, resolved.cross_compiler)
    for key in ("source", "library"):
        if key in c_source:  # keep both libraries side by side in tvm/
            moved = folder / Path(c_source[key]).name
            os.replace(c_source[key], moved)
            c_source[key] = str(moved)
            provenance.record(moved)
    shutil.rmtree(c_dir, ignore_errors=True)
    if resolved.runnable_here and c_source.get("library"):
        diff = np.abs(load_tvm(c_source["library"])(x) - load_tvm(report["artifact"])(x))
        c_source["maxAbsDiffVsLlvm"] = float(diff.max())
    elif not resolved.runnable_here:
        notes.append(
            f"the TVM libraries are built for {resolved.arch}: they run in TVM's runtime on the board "
            "(or through TVM RPC), not here; the portable runner needs no TVM"
        )
    out["cSource"] = c_source
    ctx.progress("tvm", "TVM builds written", 1.0)
    return out
