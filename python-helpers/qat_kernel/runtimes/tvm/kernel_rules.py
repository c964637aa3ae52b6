"""What the dlight CPU rules of our own kernels share (dotprod.py, vnni.py, depthwise.py): a rule that takes only
the PrimFuncs holding its block, the set-up of a kernel whose laid-out input and fused epilogue surround it, and
the SBlock statement a block variable stands for (schedule.py's rules read them too)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tvm
    from tvm.s_tir import SBlock, Schedule
    from tvm.s_tir.schedule import SBlockRV


def block_rule(block: str | tuple[str, ...], schedule: Callable[[Schedule, SBlockRV], None]):
    """A dlight CPU rule for the PrimFuncs with an s_tir block named `block` (or one of the names; ahead of
    schedule.py's rules):
    schedule(sch, block_rv) shapes them. A kernel it cannot shape keeps its unscheduled code (correct, and still
    on its instruction), never another rule's."""
    from tvm import s_tir
    from tvm.s_tir.dlight.cpu.base import CPUScheduleRule

    class BlockRule(CPUScheduleRule):
        def apply(self, func: tvm.tirx.PrimFunc, target: tvm.target.Target, tunable: bool):
            if not self.is_target_available(target):
                return None
            sch = s_tir.Schedule(func)
            found = None
            for name in (block,) if isinstance(block, str) else block:
                try:
                    found = sch.get_sblock(name)
                    break
                except Exception:  # noqa: BLE001 - not one of ours
                    continue
            if found is None:
                return None
            try:
                schedule(sch, found)
            except Exception:  # noqa: BLE001 - the unscheduled kernel is still correct
                return s_tir.Schedule(func)
            return sch

    return BlockRule()


def sblock(sch: Schedule, block: SBlockRV) -> SBlock:
    """The SBlock statement a block random variable stands for."""
    from tvm.s_tir import SBlock

    stmt = sch.get(block)
    assert isinstance(stmt, SBlock)
    return stmt


def inline_around(sch: Schedule, block: str, layout: str) -> SBlockRV:
    """Inlines every producer of `block` but the `layout` block (the producers left are a fused epilogue's, e.g. a
    residual's dequantize) and every consumer but the last; returns the last consumer."""
    root = sch.get_sblock("root")
    blocks = list(sch.get_child_blocks(root))
    index = [sblock(sch, b).name_hint for b in blocks].index(block)
    for b in blocks[:index]:
        if sblock(sch, b).name_hint != layout:
            sch.compute_inline(b)
    consumers = list(sch.get_child_blocks(root))
    consumers = consumers[[sblock(sch, b).name_hint for b in consumers].index(block) + 1 :]
    for c in consumers[:-1]:
        sch.compute_inline(c)
    return consumers[-1]
