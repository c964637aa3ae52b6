"""Per-kernel roofline of a TVM INT8 build: where the time goes, next to this CPU's int8 peak.

Builds a QDQ ONNX model with TVM INT8 (our fold, schedule.py's rule: "vnni" by default) and runs it in the
Relax VM with an instrument (VirtualMachine.set_instrument) that times every kernel call: the VM's own
builtins (shapes, allocation) are not kernels and are left out. Each call in one run of the model is one row
(a PrimFunc used by several layers of the same shape gives several rows), timed over `runs` runs after a
warm-up, median ms. Per row:

- kind: "vnni" (vnni.py's vpdpbusd kernels), "avx2" (vnni.py's vpmaddwd kernels on CPUs without VNNI), "dw"
  (depthwise.py's channel-blocked depthwise convs), "packed"
  (schedule.py's int32 multiply-add conv/matmul kernels, depthwise convs of builds without depthwise.py) or "other"
  (quantize, pooling, epilogues not fused into a conv, ...);
- MACs from the call's argument shapes: data [N, C, H, W] (or [M, K]; the argument before the weight: a
  fused residual may come first), weight, output [N, O, H', W'] (or [M, O], the last argument):
  N*O*H'*W' * (input channels per group) * kh * kw, and M*O*K for a matmul. The weight's layout says the
  channels per group and kh, kw: vnni [O/L, C/4, kh, kw, L, 4] (ungrouped: C from the data, not
  the padded C/4*4), packed and dw [O/16, C/g, kh, kw, 16], plain OIHW [O, C/g, kh, kw]. Useful MACs only: the
  zero channels a kernel pads to its lanes are not counted;
- GMAC/s = MACs / median time, and that as a share of the VNNI peak (benchmarks/int8_peak: vpdpbusd on every
  CPU, best of 3 rounds) measured in the same run, before and after the kernels (the better of the two: other
  load lowers it; a share over 100 % means the peak was measured while other work took the cores), the AVX2
  peak where the CPU has no VNNI.

The instrument is a Python call before and after each kernel (a few microseconds): small kernels read slower
than they are; the per-run sum of kernel times is printed next to the untimed whole-model median for that.

Run: python -m benchmarks.tvm_kernels <side> [resnet18|mobilenet_v2] [runs] [work folder] [--rule R] [--onnx F]
     [--depthwise on|off]
     (--onnx: time that QDQ ONNX model instead of exporting one; side is then its input side; --depthwise: build
     with or without depthwise.py's kernels, default the build's choice)"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def kernel_kind(name: str, shapes: list) -> str:
    """ "vnni", "packed" or "other" for a kernel named `name` called with argument `shapes` [(shape, dtype)]."""
    if "vnni" in name:
        return "vnni"
    if "conv2d_avx2" in name or "matmul_avx2" in name:
        return "avx2"
    if "depthwise" in name:
        return "dw"
    if ("conv2d" in name or "matmul" in name or "dense" in name) and call_macs(shapes) > 0:
        return "packed"
    return "other"


def _weight_index(shapes: list) -> int | None:
    """Index of the weight among a kernel's arguments: the first packed (5-d) or vnni (6-d) integer tensor,
    else the first int8 [O, C/g, kh, kw] or [K, O] one that fits the output (a fused residual or a second
    input may come before the data, so the data is the argument before the weight)."""
    out = shapes[-1][0]
    for i, (w, dtype) in enumerate(shapes[1:-1], start=1):
        if dtype.startswith("int") and len(w) in (5, 6):
            return i
    for i, (w, dtype) in enumerate(shapes[1:-1], start=1):
        if dtype == "int8" and len(w) == 4 and len(out) == 4 and w[0] == out[1]:
            return i
        if dtype == "int8" and len(w) == 2 and len(out) == 2 and w[1] == out[1]:
            return i
    return None


def call_macs(shapes: list) -> int:
    """Multiply-accumulates of one conv2d / matmul kernel call from its (shape, dtype) arguments (0 if not one):
    an integer weight, the data just before it, the output last (see the module doc for the weight layouts)."""
    if len(shapes) < 3:
        return 0
    i = _weight_index(shapes)
    if i is None:
        return 0
    (x, x_dtype), (w, _), (out, _) = shapes[i - 1], shapes[i], shapes[-1]
    if not x_dtype.startswith(("int", "uint")):
        return 0
    outputs = int(np.prod(out))
    if len(x) == 2 and len(w) == 2 and len(out) == 2:  # matmul [M, K] x [K, O]
        return outputs * int(x[1]) if w[0] == x[1] else 0
    if len(x) == 2 and len(w) == 6 and len(out) == 2:  # vnni.py's dense form: [M, K], packed as a 1x1 conv
        return outputs * int(x[1])
    if len(x) != 4 or len(out) != 4 or len(w) == 2:
        return 0
    kh, kw = int(w[2]), int(w[3])
    per_group = int(x[1]) if len(w) == 6 else int(w[1])  # vnni kernels are ungrouped, their C/4 is padded
    return outputs * per_group * kh * kw


def time_kernels(artifact, inputs: dict, runs: int, warmup: int = 2) -> dict:
    """{batch: {"calls": [{name, kind, shapes, macs, ms}], "kernel_ms": sum of medians, "model_ms": median of
    the whole model without the instrument}} for the library at `artifact` (a TVM build's model.so)."""
    import tvm
    from tvm import relax

    from qat_kernel.runtimes.tvm.run import _default_threads

    _default_threads()
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(artifact)), tvm.cpu(0))
    main = vm["main"]
    state = {"calls": None, "t0": 0.0}

    def instrument(_func, symbol, before, _ret, *args):
        if symbol.startswith("vm.") or state["calls"] is None:
            return 0
        if before:
            state["t0"] = time.perf_counter()
        else:
            ms = (time.perf_counter() - state["t0"]) * 1e3
            shapes = [(tuple(int(d) for d in a.shape), str(a.dtype)) for a in args if hasattr(a, "shape")]
            state["calls"].append((symbol, shapes, ms))
        return 0

    out = {}
    for b, x in inputs.items():
        t = tvm.runtime.tensor(np.ascontiguousarray(x), tvm.cpu(0))
        for _ in range(warmup):
            main(t)
        whole = []
        for _ in range(runs):
            t0 = time.perf_counter()
            main(t)
            whole.append((time.perf_counter() - t0) * 1e3)
        vm.set_instrument(instrument)
        per_run = []
        for _ in range(runs):
            state["calls"] = []
            main(t)
            per_run.append(state["calls"])
        state["calls"] = None
        vm.set_instrument(lambda *_a: 0)
        calls = []
        for i, (name, shapes, _) in enumerate(per_run[0]):
            ms = statistics.median(r[i][2] for r in per_run)
            macs = call_macs(shapes)
            calls.append({"name": name, "kind": kernel_kind(name, shapes), "shapes": shapes, "macs": macs, "ms": ms})
        out[b] = {
            "calls": calls,
            "kernel_ms": sum(c["ms"] for c in calls),
            "model_ms": statistics.median(whole),
        }
    return out


def roofline(timed: dict, peak_gmacs: float | None) -> dict:
    """timed (time_kernels) with gmacs and peakShare on every MAC row, and per batch the time by kind."""
    for entry in timed.values():
        for c in entry["calls"]:
            c["gmacs"] = c["macs"] / (c["ms"] / 1e3) / 1e9 if c["macs"] and c["ms"] > 0 else None
            c["peakShare"] = c["gmacs"] / peak_gmacs if c["gmacs"] is not None and peak_gmacs else None
        by_kind: dict = {}
        for c in entry["calls"]:
            k = by_kind.setdefault(c["kind"], {"calls": 0, "ms": 0.0, "macs": 0})
            k["calls"] += 1
            k["ms"] += c["ms"]
            k["macs"] += c["macs"]
        entry["byKind"] = by_kind
        macs = sum(c["macs"] for c in entry["calls"])
        entry["macs"] = macs
        entry["gmacs"] = macs / (entry["model_ms"] / 1e3) / 1e9 if entry["model_ms"] > 0 else None
    return timed


def format_table(timed: dict, peak_gmacs: float | None, top: int | None = None) -> str:
    """The table as text, one block per batch size: every MAC kernel in call order (or the `top` slowest),
    then the time by kind."""
    lines = []
    for b, entry in timed.items():
        lines.append(
            f"batch {b}: whole model {entry['model_ms']:.2f} ms (uninstrumented median), kernels sum "
            f"{entry['kernel_ms']:.2f} ms, {entry['macs'] / 1e6:.1f} M MACs"
            + (f", peak {peak_gmacs:.1f} GMAC/s" if peak_gmacs else ", no peak")
        )
        lines.append(f"{'#':>3} {'kind':6} {'ms':>8} {'MMAC':>9} {'GMAC/s':>8} {'peak%':>6}  output shape  kernel")
        rows = [(i, c) for i, c in enumerate(entry["calls"]) if c["macs"]]
        if top:
            rows = sorted(rows, key=lambda r: -r[1]["ms"])[:top]
        for i, c in rows:
            share = f"{100 * c['peakShare']:.1f}" if c["peakShare"] is not None else "-"
            lines.append(
                f"{i:>3} {c['kind']:6} {c['ms']:8.3f} {c['macs'] / 1e6:9.2f} {c['gmacs']:8.1f} {share:>6}  "
                f"{'x'.join(map(str, c['shapes'][-1][0])):12}  {c['name']}"
            )
        total = entry["kernel_ms"] or 1.0
        for kind, k in sorted(entry["byKind"].items()):
            rate = f", {k['macs'] / (k['ms'] / 1e3) / 1e9:.1f} GMAC/s" if k["macs"] and k["ms"] > 0 else ""
            share = f"{100 * k['ms'] / total:4.1f}% of kernel time"
            lines.append(f"    {kind:6} {k['calls']:3} calls {k['ms']:9.3f} ms ({share}){rate}")
        lines.append("")
    return "\n".join(lines)


def peak_gmacs(peak: dict) -> tuple[float | None, str | None]:
    """(GMAC/s, row name) of int8_peak.peak(): the VNNI row where measured, else AVX2."""
    rows = {r["name"]: r for r in peak.get("rows", []) if r.get("gmacs")}
    for name in ("vnni", "avx2"):
        if name in rows:
            return rows[name]["gmacs"], name
    return None, None


def main(argv: list[str]) -> int:
    from benchmarks import int8_peak
    from qat_kernel.runtimes.tvm import schedule
    from qat_kernel.runtimes.tvm.build import build_tvm

    opts = {}
    rest = []
    it = iter(argv)
    for a in it:
        if a in ("--rule", "--onnx", "--top", "--depthwise"):
            opts[a[2:]] = next(it)
        else:
            rest.append(a)
    side = int(rest[0]) if rest else 112
    model = rest[1] if len(rest) > 1 else "resnet18"
    runs = int(rest[2]) if len(rest) > 2 else 10
    work = Path(rest[3]) if len(rest) > 3 else Path(tempfile.mkdtemp(prefix="qat-tvm-kernels-"))
    rule = opts.get("rule", schedule.DEFAULT_RULE)
    if "onnx" in opts:
        onnx_file, channels = Path(opts["onnx"]), None
    else:
        from benchmarks.tvm_int8_bench import export

        onnx_file, _ = export(work / model, side, model)
        channels = 3
    if channels is None:
        import onnx

        dims = onnx.load(str(onnx_file)).graph.input[0].type.tensor_type.shape.dim
        channels = dims[1].dim_value
    with schedule.use_rule(rule):
        depthwise = {"on": True, "off": False}.get(opts.get("depthwise", ""))  # default: the build's choice
        report = build_tvm(onnx_file, "x86-64", work / f"tvm-int8-{rule}", fold_int8=True, depthwise=depthwise)
    rng = np.random.default_rng(0)
    inputs = {b: rng.random((b, channels, side, side), dtype=np.float32) for b in (1, 16)}
    before = int8_peak.peak()
    timed = time_kernels(report["artifact"], inputs, runs)
    after = int8_peak.peak()
    (g0, peak_name), (g1, _) = peak_gmacs(before), peak_gmacs(after)
    gmacs = max(g0, g1) if g0 and g1 else None
    timed = roofline(timed, gmacs)
    name = onnx_file.name if "onnx" in opts else model
    print(f"{name} {channels}x{side}x{side}, rule {rule!r}, vnni {report['vnni']}, depthwise {report['depthwise']}")
    keys = ("name", "gmacs", "threads", "roundsGmacs", "noisy")
    for when, peak in (("before", before), ("after", after)):
        print(f"peak {when} ({peak_name}): {json.dumps([{k: r.get(k) for k in keys} for r in peak['rows']])}")
    onnx_macs = {b: int8_peak.model_macs(onnx_file, b) for b in inputs}
    listed = {b: e["macs"] for b, e in timed.items()}
    print(f"MACs of the ONNX model's Conv/Gemm/MatMul {onnx_macs}, of the table's kernels {listed}")
    print(format_table(timed, gmacs, int(opts["top"]) if "top" in opts else None))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
