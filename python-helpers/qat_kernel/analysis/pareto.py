"""Pareto fronts: the points no other point beats on every objective.

A point dominates another when it is at least as good on every objective and strictly better on one
(objectives are (key, "max" | "min")). Points equal on every objective do not dominate each other, so
both stay on the front. O(n^2) comparisons: the search measures tens of candidates, not thousands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

Objective = tuple[str, str]  # (key, "max" | "min")


# An objective's value: a number, or a tuple compared in order (search_mixed_precision ranks accuracy by
# (ORT accuracy, emulated accuracy, SQNR)).
Score = TypeVar("Score", float, tuple[float, ...])


def _better_or_equal(a: Score, b: Score, sense: str) -> bool:
    return a >= b if sense == "max" else a <= b


def _strictly_better(a: Score, b: Score, sense: str) -> bool:
    return a > b if sense == "max" else a < b


def dominates(a: dict[str, Any], b: dict[str, Any], objectives: Sequence[Objective]) -> bool:
    """True when `a` is at least as good as `b` on every objective and strictly better on one."""
    if not objectives:
        raise ValueError("no objectives")
    for key, sense in objectives:
        if sense not in ("max", "min"):
            raise ValueError(f"objective {key!r}: sense must be 'max' or 'min', not {sense!r}")
    if not all(_better_or_equal(a[k], b[k], s) for k, s in objectives):
        return False
    return any(_strictly_better(a[k], b[k], s) for k, s in objectives)


def front(points: Sequence[dict[str, Any]], objectives: Sequence[Objective]) -> list[int]:
    """Indices of the non-dominated points, in the order given."""
    return [
        i for i, p in enumerate(points) if not any(dominates(q, p, objectives) for j, q in enumerate(points) if j != i)
    ]


def dominated_by(points: Sequence[dict[str, Any]], index: int, objectives: Sequence[Objective]) -> list[int]:
    """Indices of the points that dominate points[index] (empty: it is on the front)."""
    p = points[index]
    return [j for j, q in enumerate(points) if j != index and dominates(q, p, objectives)]
