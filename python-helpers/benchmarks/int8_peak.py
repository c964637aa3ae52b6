"""The int8 ceiling of this CPU and how close the INT8 rows of bench/run come to it.

peak(): benchmarks/int8_peak.c built with the host's gcc and run on every CPU this process may use (OpenMP), in
3 rounds (the ceiling is the best; rounds far apart are marked noisy: on a busy machine it is no ceiling):
GMAC/s of the AVX2 vpmaddubsw sequence int8 kernels use without a dot-product instruction (the ceiling), of
the AVX2 vpmaddwd on s16 operands that TVM's AVX2 kernels use (exact where vpmaddubsw saturates), of VNNI's vpdpbusd
where the CPU has AVX512-VNNI (read from /proc/cpuinfo at run time; without it the VNNI row says so instead of
a figure), and of AMX-INT8's tdpbusd tile product where the CPU has it (ONNX Runtime's int8 GEMMs use AMX
there, so its rows can pass the VNNI peak). model_macs(): the multiply-accumulates of a QDQ ONNX model's
Conv/Gemm/MatMul nodes at a batch size (ONNX shape inference). Achieved GMAC/s of a row = model MACs / its
median: whole-model figures (the other ops' time is in the median too), so the gap to the peak is an upper
bound on what faster kernels could gain.

Run alone: python -m benchmarks.int8_peak [model.qdq.onnx]"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from qat_kernel.runtimes import cpu
from qat_kernel.runtimes.bench import NOISY_DRIFT

ROUNDS = 3
SOURCE = Path(__file__).with_name("int8_peak.c")
LABELS = {
    "avx2": "AVX2 vpmaddubsw + vpmaddwd (u8 x s8, int16 pairs)",
    "avx2_wd": "AVX2 vpmaddwd (s16 x s16 -> s32: TVM's exact AVX2 kernels)",
    "vnni": "AVX512-VNNI vpdpbusd (u8 x s8 -> s32)",
    "amx": "AMX-INT8 tdpbusd (u8 x s8 -> s32, 16 x 16 x 64 tiles)",
}


def gcc_flags(vnni512: bool, amx: bool) -> list[str]:
    """gcc's flags for int8_peak.c: AVX2 always, the VNNI and AMX sequences only where the CPU has them."""
    flags = ["-O2", "-mavx2", "-fopenmp"] + (["-mavx512f", "-mavx512vnni", "-DHAVE_VNNI512"] if vnni512 else [])
    return flags + (["-mamx-tile", "-mamx-int8", "-DHAVE_AMX"] if amx else [])


def peak() -> dict:
    """{"rows": [{name, label, gmacs | None, threads, roundsGmacs?, noisy?, note?}], "cpu": cpu.summary()}."""
    out = {"cpu": cpu.summary(), "rows": []}
    if platform.machine().lower() not in ("x86_64", "amd64"):
        out["note"] = f"the microbenchmark is x86 code; this machine is {platform.machine()}"
        return out
    vnni512 = "avx512_vnni" in cpu.flags() and "avx512f" in cpu.flags()
    amx = "amx_tile" in cpu.flags() and "amx_int8" in cpu.flags()
    gcc = shutil.which(os.environ.get("CC") or "gcc")
    if gcc is None:
        out["note"] = "gcc not on PATH: no peak measured"
        return out
    with tempfile.TemporaryDirectory(prefix="qat-int8-peak-") as tmp:
        exe = Path(tmp) / "peak"
        subprocess.run(
            [gcc, *gcc_flags(vnni512, amx), str(SOURCE), "-o", str(exe)], check=True, capture_output=True, text=True
        )
        runs: dict = {}
        refused: set[str] = set()
        for _ in range(ROUNDS):
            run = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=300)
            for line in run.stdout.splitlines():
                r = json.loads(line)
                if r.get("refused"):
                    refused.add(r["name"])
                    continue
                runs.setdefault(r["name"], []).append((r["macs"] / r["seconds"] / 1e9, r["threads"]))
    for name, measured in runs.items():
        rates = [g for g, _ in measured]
        row = {"name": name, "label": LABELS[name], "gmacs": max(rates), "threads": measured[0][1]}
        row["roundsGmacs"] = rates
        # a ceiling is the best round; rounds far apart mean other load took the cores (as bench.NOISY_DRIFT)
        row["noisy"] = max(rates) > NOISY_DRIFT * min(rates)
        out["rows"].append(row)
    if "amx" in refused:
        note = "the CPU has AMX-INT8 but Linux refused this process the tile state (arch_prctl)"
        out["rows"].append({"name": "amx", "label": LABELS["amx"], "gmacs": None, "threads": None, "note": note})
    if not vnni512:
        others = [d for d in cpu.int8_dot_products() if d != "AVX512-VNNI"]
        note = "no AVX512-VNNI on this CPU" if others else "no VNNI on this CPU"
        if others:
            note += f" (it has {', '.join(others)}: not measured here)"
        out["rows"].append({"name": "vnni", "label": LABELS["vnni"], "gmacs": None, "threads": None, "note": note})
    return out


def model_macs(onnx_path, batch: int) -> int:
    """Multiply-accumulates of the model's Conv, Gemm and MatMul nodes at `batch` (ONNX shape inference)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper, shape_inference

    model = onnx.load(str(onnx_path))
    for inp in model.graph.input:
        dims = inp.type.tensor_type.shape.dim
        if dims:
            dims[0].ClearField("dim_param")
            dims[0].dim_value = batch
    model = shape_inference.infer_shapes(model)
    shapes = {}
    for v in list(model.graph.value_info) + list(model.graph.output) + list(model.graph.input):
        shapes[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    for t in model.graph.initializer:
        shapes[t.name] = list(numpy_helper.to_array(t).shape)
    total = 0
    for n in model.graph.node:
        out = shapes.get(n.output[0])
        w = shapes.get(n.input[1]) if len(n.input) > 1 else None
        if not out or not w or 0 in out:
            continue
        if n.op_type == "Conv":
            total += int(np.prod(out)) * int(np.prod(w[1:]))  # each output: Cin/groups x kh x kw
        elif n.op_type in ("Gemm", "MatMul"):
            trans_b = any(a.name == "transB" and a.i for a in n.attribute)
            k = w[-1] if trans_b else w[-2]
            total += int(np.prod(out)) * int(k)
    return total


def achieved(rows: list[dict], macs: dict) -> dict:
    """{row name: {b1, b16}} GMAC/s at each row's median (macs: {"b1": ..., "b16": ...})."""
    return {
        r["name"]: {k: macs[k] / (r["latency"][k]["medianMs"] / 1e3) / 1e9 for k in ("b1", "b16")}
        for r in rows
        if "int8" in r["name"]
    }


def main(argv: list[str]) -> int:
    result = peak()
    if argv:
        result["macs"] = {f"b{b}": model_macs(argv[0], b) for b in (1, 16)}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
