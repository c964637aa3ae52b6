"""Schedule rules and kernel fusion applied one kernel at a time, each failure confined to its kernel.

dlight's ApplyDefaultSchedule runs a list of rules over every PrimFunc and lets an exception of any rule end
the whole build: TVM 0.27's CPU GEMV rule, for one, asserts on kernels its analysis half accepts (LeViT's and
MobileViT's attention reductions: `assert s_loops` in dlight/analysis/gemv.py), although TVM's own pipeline,
which schedules nothing on CPU, builds them. `apply_rules` tries the same rules in the same order; a rule
that raises on a kernel is skipped for that kernel only (the next rule may take it, else the kernel keeps
TVM's default, unscheduled code) and each such fallback is recorded for the build report.

FuseTIR, which merges each group FuseOps made into one PrimFunc, fails the same way on one group: TVM 0.27's
RenewDefs (`Check failed: (VarRemapGet(source) == nullptr)`) on the index arithmetic the ONNX exporter writes
for `as_strided` over a symbolic batch (ConvNeXt's adaptive average pool at 224x224: Range, Gather, Where).
`fuse_tir` finds the groups FuseTIR fails on, one group at a time, and leaves those unfused (their ops run as
separate kernels, called from a plain Relax function); the others are fused as usual."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tvm
    from tvm.s_tir.dlight.base.schedule_rule import ScheduleRule


def _error_text(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _rule_name(rule: ScheduleRule) -> str:
    return getattr(rule, "name", None) or type(rule).__name__


def apply_rules(rules: list[ScheduleRule], fallbacks: list[dict[str, str]]):
    """A module pass like dlight.ApplyDefaultSchedule(*rules) that appends to `fallbacks`, per rule that
    raised on a kernel, {"kernel", "rule", "error", "kept"} (kept: the rule that scheduled it instead, or
    "TVM's default code")."""
    import tvm
    from tvm import s_tir

    def scheduled(func: tvm.tirx.PrimFunc) -> bool:
        return bool(
            func.attrs is not None and "tirx.is_scheduled" in func.attrs and int(func.attrs["tirx.is_scheduled"])
        )

    @tvm.transform.module_pass(opt_level=0, name="QatApplySchedule")
    def _pass(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
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


def notes(fallbacks: list[dict[str, str]]) -> list[str]:
    """One report note per kernel a rule failed on."""
    out = []
    for f in fallbacks:
        default = f["kept"] == "TVM's default code"
        kept = "keeps TVM's default (unscheduled) code" if default else f"is scheduled by {f['kept']}"
        out.append(f"schedule rule {f['rule']} failed on kernel {f['kernel']} ({f['error']}): that kernel {kept}")
    return out


def _primitive(func: tvm.ir.BaseFunc) -> bool:
    from tvm import relax

    if not isinstance(func, relax.Function):
        return False
    # TVM types attrs as a DictAttrs, never None: checked all the same, as the PrimFunc rules do
    return func.attrs is not None and "Primitive" in func.attrs  # pyright: ignore[reportUnnecessaryComparison] - see above


def fuse_tir(unfused: list[dict[str, str]]):
    """relax.transform.FuseTIR that, where it fails, retries without the groups it fails on alone; appends
    {"kernel", "error"} per such group to `unfused`."""
    import tvm
    from tvm import relax

    def only(mod: tvm.IRModule, keep: tvm.ir.GlobalVar) -> tvm.IRModule:
        funcs = {
            gv: f if gv.same_as(keep) or not _primitive(f) else f.without_attr("Primitive")
            for gv, f in mod.functions_items()
        }
        return tvm.IRModule(funcs, attrs=mod.attrs, global_infos=mod.global_infos)  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI fields

    @tvm.transform.module_pass(opt_level=0, name="QatFuseTIR")
    def _pass(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        try:
            return relax.transform.FuseTIR()(mod)
        except Exception as whole:  # noqa: BLE001 - find the groups it fails on
            failed = []
            for gv, func in mod.functions_items():
                if not _primitive(func):
                    continue
                try:
                    relax.transform.FuseTIR()(only(mod, gv))
                except Exception as exc:  # noqa: BLE001 - this group stays unfused
                    failed.append((gv, exc))
            if not failed:
                raise whole
        bad = {gv for gv, _ in failed}
        for gv, exc in failed:
            unfused.append({"kernel": gv.name_hint, "error": _error_text(exc)})
        funcs = {gv: f.without_attr("Primitive") if gv in bad else f for gv, f in mod.functions_items()}
        return relax.transform.FuseTIR()(tvm.IRModule(funcs, attrs=mod.attrs, global_infos=mod.global_infos))  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI fields

    return _pass


def fusion_notes(unfused: list[dict[str, str]]) -> list[str]:
    return [
        f"TVM's FuseTIR failed on the fused kernel {u['kernel']} ({u['error']}): its ops run as separate kernels"
        for u in unfused
    ]
