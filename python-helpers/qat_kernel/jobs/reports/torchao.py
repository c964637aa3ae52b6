"""The summary lines of deploy/torchao: the format check, perplexity, then decode and prefill per row."""

from __future__ import annotations

from typing import Any

from qat_kernel.jobs.reports.tables import kib


def _format(f: dict[str, Any]) -> str:
    group = f"group {f['groupSize']}" if f["groupSize"] else "per channel"
    return f"{f['scheme']} ({group})"


def _differences(was: dict[str, Any], now: dict[str, Any]) -> str:
    parts = []
    if was["bits"] != now["bits"]:
        parts.append(f"int{was['bits']} -> int{now['bits']} weights")
    if was["groupSize"] != now["groupSize"]:
        parts.append(f"group {was['groupSize'] or 'per channel'} -> {now['groupSize'] or 'per channel'}")
    if was["dynamicActivations"] != now["dynamicActivations"]:
        parts.append("int8 dynamic activations " + ("dropped" if was["dynamicActivations"] else "added"))
    return ", ".join(parts)


def mismatch_warning(m: dict[str, Any], converted: float, deployed: float) -> str:
    """One warning: modules deployed in another format than they were trained in, both formats, the cost."""
    names = m["modules"]
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return (
        f"deployed format {_format(m['deployed'])} differs from the trained scheme {_format(m['trained'])} "
        f"({_differences(m['trained'], m['deployed'])}) on {len(names)} modules: {shown}; perplexity converted "
        f"{converted:.3f} -> deployed {deployed:.3f} ({deployed - converted:+.3f}). Deploy the trained format (leave "
        "format out) or train with the deployed one"
    )


def deploy(r: dict[str, Any]) -> list[str]:
    p = r["perplexity"]
    kernels = sorted({m["kernel"] for m in r["modules"]})
    lines = [
        f"deployed {len(r['modules'])} Linear modules to {'; '.join(kernels)}",
        "format: "
        + ("the trained scheme" if r["matchesTrained"] else "differs from the trained scheme (see warnings)"),
        f"perplexity converted {p['converted']:.3f} -> deployed {p['deployed']:.3f} on {p['tokens']} validation "
        f"tokens; max |logit diff| {r['maxLogitDiff']:.3g}; greedy tokens "
        + ("the same as the converted model's" if r["sameTokens"] else "differ from the converted model's"),
        f"decode: {r['newTokens']} new tokens after a {r['prompt']['tokens']}-token prompt; prefill: one forward "
        "over the prompt",
        f"{'row':<48} {'weights':>11} {'peak RSS +':>11} {'b1 ms/tok':>10} {'b1 tok/s':>9} {'b16 tok/s':>10} "
        f"{'prefill b1 ms':>14}",
    ]
    prefill = {row["name"]: row for row in r["prefill"]["rows"]}
    decode = {row["name"]: row for row in r["decode"]["rows"]}
    for row in r["rows"]:
        d = row["decode"]
        noisy = any(decode[row["name"]]["latency"][k].get("noisy") for k in ("b1", "b16"))
        lines.append(
            f"{row['label']:<48} {kib(row['weightBytes']):>11} {kib(row['rssDeltaBytes']):>11} "
            f"{d['b1']['msPerToken']:>10.3f} {d['b1']['tokensPerS']:>9.1f} {d['b16']['tokensPerS']:>10.1f} "
            f"{prefill[row['name']]['latency']['b1']['medianMs']:>14.3f}" + (" noisy" if noisy else "")
        )
    t = r["decode"].get("threads") or {}
    lines.append(
        f"{r['decode']['rounds']} interleaved rounds, {r['decode']['runs']} timed calls a figure; PyTorch "
        f"{t.get('torch')} threads of {t.get('cpus')} CPUs; {r['cpu']['model']}"
    )
    lines += [f"Warning: {w}" for w in r.get("warnings", [])]
    lines += [f"Note: {n}" for n in r["notes"] + r["decode"].get("notes", [])]
    return lines
