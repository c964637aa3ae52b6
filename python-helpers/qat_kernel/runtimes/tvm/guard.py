"""Schedule rules applied one kernel at a time, each failure confined to its kernel.

dlight's ApplyDefaultSchedule runs a list of rules over every PrimFunc and lets an exception of any rule end
the whole build: TVM 0.27's CPU GEMV rule, for one, asserts on kernels its analysis half accepts (LeViT's and
MobileViT's attention reductions: `assert s_loops` in dlight/analysis/gemv.py), although TVM's own pipeline,
which schedules nothing on CPU, builds them. `apply_rules` tries the same rules in the same order; a rule
that raises on a kernel is skipped for that kernel only (the next rule may take it, else the kernel keeps
TVM's default, unscheduled code) and each such fallback is recorded for the build report."""

from __future__ import annotations


def _error_text(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _rule_name(rule) -> str:
    return getattr(rule, "name", None) or type(rule).__name__


def apply_rules(rules: list, fallbacks: list):
    """A module pass like dlight.ApplyDefaultSchedule(*rules) that appends to `fallbacks`, per rule that
    raised on a kernel, {"kernel", "rule", "error", "kept"} (kept: the rule that scheduled it instead, or
    "TVM's default code")."""
    import tvm
    from tvm import s_tir

    def scheduled(func) -> bool:
        return func.attrs is not None and "tirx.is_scheduled" in func.attrs and int(func.attrs["tirx.is_scheduled"])

    @tvm.transform.module_pass(opt_level=0, name="QatApplySchedule")
    def _pass(mod, _ctx):
        updated = {}
        for gv, func in mod.functions_items():
            if not isinstance(func, tvm.tirx.PrimFunc) or scheduled(func):
                continue
            target = func.attrs.get("target") if func.attrs is not None else None
            target = target or tvm.target.Target.current(allow_none=False)
            failed = []
            chosen = None
            for rule in rules:
                try:
                    space = rule.apply(func, target, False)
                except Exception as exc:  # noqa: BLE001 - the rule fails on this kernel only: try the next one
                    failed.append((_rule_name(rule), _error_text(exc)))
                    continue
                if space is None:
                    continue
                if not isinstance(space, s_tir.Schedule):
                    space = space[0]
                chosen = (_rule_name(rule), space)
                break
            kept = chosen[0] if chosen else "TVM's default code"
            for rule_name, error in failed:
                fallbacks.append({"kernel": gv.name_hint, "rule": rule_name, "error": error, "kept": kept})
            if chosen is not None:
                updated[gv] = chosen[1].mod["main"].with_attr("tirx.is_scheduled", True)
        for gv, func in updated.items():
            mod[gv] = func
        return mod

    return _pass


def notes(fallbacks: list) -> list[str]:
    """One report note per kernel a rule failed on."""
    out = []
    for f in fallbacks:
        default = f["kept"] == "TVM's default code"
        kept = "keeps TVM's default (unscheduled) code" if default else f"is scheduled by {f['kept']}"
        out.append(f"schedule rule {f['rule']} failed on kernel {f['kernel']} ({f['error']}): that kernel {kept}")
    return out
