"""The Pareto code of the mixed-precision search (analysis/pareto.py) and its candidate plan, without a model."""

from __future__ import annotations

import random
import re

import pytest

from qat_kernel.analysis import mixed_precision, pareto

OBJ = (("accuracy", "max"), ("latencyMs", "min"), ("bytes", "min"))


def _brute_force_front(points, objectives):
    """Written out separately from pareto.py: i is on the front when no j is >= everywhere and > somewhere."""
    out = []
    for i, p in enumerate(points):
        beaten = False
        for j, q in enumerate(points):
            if i == j:
                continue
            ge = all((q[k] >= p[k]) if s == "max" else (q[k] <= p[k]) for k, s in objectives)
            gt = any((q[k] > p[k]) if s == "max" else (q[k] < p[k]) for k, s in objectives)
            beaten = beaten or (ge and gt)
        if not beaten:
            out.append(i)
    return out


def test_front_matches_brute_force_on_random_points():
    rng = random.Random(7)
    for trial in range(200):
        n = rng.randint(1, 30)
        # Few distinct values: many ties and duplicates.
        points = [
            {"accuracy": rng.choice([0.9, 0.95, 0.97]), "latencyMs": rng.randint(1, 5), "bytes": rng.randint(1, 4)}
            for _ in range(n)
        ]
        for objectives in (OBJ, OBJ[:2], (OBJ[0], OBJ[2])):
            assert pareto.front(points, objectives) == _brute_force_front(points, objectives), (trial, points)


def test_a_known_front():
    pts = [
        {"accuracy": 0.90, "latencyMs": 1.0},  # fastest
        {"accuracy": 0.97, "latencyMs": 3.0},  # most accurate
        {"accuracy": 0.95, "latencyMs": 2.0},  # between
        {"accuracy": 0.94, "latencyMs": 2.5},  # beaten by the one between
        {"accuracy": 0.90, "latencyMs": 1.5},  # beaten by the fastest
    ]
    assert pareto.front(pts, OBJ[:2]) == [0, 1, 2]
    assert pareto.dominated_by(pts, 3, OBJ[:2]) == [2]
    assert pareto.dominated_by(pts, 4, OBJ[:2]) == [0]


def test_equal_points_both_stay():
    p = {"accuracy": 0.9, "latencyMs": 1.0}
    assert pareto.front([p, dict(p)], OBJ[:2]) == [0, 1]
    assert not pareto.dominates(p, dict(p), OBJ[:2])


def test_tuples_break_ties_lexicographically():
    # (top-1, SQNR): equal top-1, higher SQNR dominates at equal latency.
    a = {"accuracy": (0.97, 40.0), "latencyMs": 1.0}
    b = {"accuracy": (0.97, 30.0), "latencyMs": 1.0}
    assert pareto.front([a, b], OBJ[:2]) == [0]


def test_bad_objectives_are_refused():
    with pytest.raises(ValueError, match="sense"):
        pareto.dominates({"a": 1}, {"a": 0}, [("a", "up")])
    with pytest.raises(ValueError, match="no objectives"):
        pareto.dominates({"a": 1}, {"a": 0}, [])


def test_schedule_is_dense_at_the_sensitive_end_and_reaches_the_last_prefix():
    assert mixed_precision.schedule(4, 3) == [1, 2, 3]
    assert mixed_precision.schedule(4, 10) == [1, 2, 3]
    ks = mixed_precision.schedule(52, 10)
    assert ks[0] == 1 and ks[-1] == 51 and len(ks) == 10 and ks == sorted(set(ks))
    assert ks[1] - ks[0] < ks[-1] - ks[-2]
    assert mixed_precision.schedule(1, 5) == [] and mixed_precision.schedule(5, 0) == []


def test_plan_starts_with_the_ends_and_keeps_the_budget():
    order = ["b", "a", "c"]
    plans = mixed_precision.plan_candidates(order, ["int8", "fp16", "fp32"], 100)
    labels = [label for label, _ in plans]
    assert labels[:3] == ["all int8", "all fp32", "all fp16"]
    assert plans[3][1] == {"b": "fp16", "a": "int8", "c": "int8"}  # the most sensitive first
    assert plans[4][1] == {"b": "fp32", "a": "int8", "c": "int8"}
    assert len(plans) == 3 + 2 * 2
    assert len(mixed_precision.plan_candidates(order, ["int8", "fp16", "fp32"], 4)) == 4
    only32 = mixed_precision.plan_candidates(order, ["int8", "fp32"], 100)
    assert [label for label, _ in only32] == ["all int8", "all fp32", "1 most sensitive fp32", "2 most sensitive fp32"]


def test_overrides_put_the_deepest_module_first_and_escape_it():
    found = mixed_precision.overrides_for({"features.1": "fp16", "features.1.conv.0": "fp32", "fc": "int8"})
    assert found == [
        {"match": re.escape("features.1.conv.0"), "precision": "fp32"},
        {"match": re.escape("features.1"), "precision": "fp16"},
    ]
    assert re.fullmatch(found[0]["match"], "features.1.conv.0") and not re.fullmatch(found[0]["match"], "featuresX1")
