"""The fake quantizers' scales and zero points: as they are now, and how they moved during QAT (for plots)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    from qat_kernel.pipeline.eager_flow import EagerQat
    from qat_kernel.pipeline.pt2e_flow import Pt2eQat
    from qat_kernel.pipeline.torchao_flow import TorchaoQat

# The QAT model of any flow (pt2e_flow.Pt2eQat, eager_flow.EagerQat, torchao_flow.TorchaoQat): the same switches on
# each (torchao's has no torch.ao-style fake quantizers, so no observers to plot).
QatFlow: TypeAlias = "Pt2eQat | EagerQat | TorchaoQat"


class Drifted(Protocol):
    """What drift_series reads of a trained model (trained_model.Trained)."""

    drift: list[dict[str, Any]]  # [{step, epoch, observers: drift_state()}]


DRIFT_SAMPLES = 24  # observer snapshots kept over a QAT run (plus the first and the last step)


def observer_state(qat: QatFlow) -> list[dict[str, Any]]:
    """Per layer: scale and zero-point of its weight and input/output fake quantizers."""
    fqs = qat.fake_quants()
    rows = []
    for layer, found in qat.layers():
        for role, names in (("weight", found.weight), ("activation", found.input)):
            for name in names:
                m = fqs[name]
                rows.append(
                    {
                        "module": layer.module,
                        "role": role,
                        "fakeQuant": name,
                        "scale": [float(v) for v in m.scale.flatten().tolist()],
                        "zeroPoint": [int(v) for v in m.zero_point.flatten().tolist()],
                    }
                )
    return rows


def drift_state(qat: QatFlow) -> list[dict[str, Any]]:
    """observer_state compacted for plots: per layer and role, the scale's min/mean/max over channels
    and the first zero point."""
    rows = []
    for row in observer_state(qat):
        scale = row["scale"]
        rows.append(
            {
                "module": row["module"],
                "role": row["role"],
                "scale": [min(scale), sum(scale) / len(scale), max(scale)],
                "zeroPoint": row["zeroPoint"][0],
            }
        )
    return rows


def drift_series(trained: Drifted) -> dict[str, Any] | None:
    """How each layer's scale and zero point moved during QAT, as series over the sampled steps."""
    if len(trained.drift) < 2:
        return None
    layers: dict[tuple[str, str], dict[str, Any]] = {}
    for snap in trained.drift:
        for row in snap["observers"]:
            series = layers.setdefault(
                (row["module"], row["role"]),
                {
                    "module": row["module"],
                    "role": row["role"],
                    "scaleMin": [],
                    "scaleMean": [],
                    "scaleMax": [],
                    "zeroPoint": [],
                },
            )
            lo, mean, hi = row["scale"]
            series["scaleMin"].append(lo)
            series["scaleMean"].append(mean)
            series["scaleMax"].append(hi)
            series["zeroPoint"].append(row["zeroPoint"])
    count = len(trained.drift)
    kept = [v for v in layers.values() if len(v["scaleMean"]) == count]
    if not kept:  # no observers to follow (the torchao flow's qparams come from each forward)
        return None
    return {
        "steps": [s["step"] for s in trained.drift],
        "epochs": [s["epoch"] for s in trained.drift],
        "layers": kept,
    }
