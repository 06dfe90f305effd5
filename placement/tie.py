"""Near ties: where the cost model cannot tell the chosen placement from the best other one.

The model's estimates are only as good as its calibration, and some programs sit close to the
line between the devices: a chain of elementwise ops over large arrays, whose cost is mostly
the copies in and out, measured 37.8 ms on the CPU and 47.4 ms on the GPU in one run and 45.4
and 42.8 ms in another (H100 and a 16-core CPU); a model that picks one side every time loses
up to 25% on the runs where the other side is faster. So where the estimated seconds of a
whole call (`fusec.placement.decide.plan_seconds`) of the chosen placement and of the best
other candidate are within ``Thresholds.tie_margin`` of each other (the larger at most ``1 +
tie_margin`` times the smaller), the auto executable measures the two on its first calls and
keeps the faster (`fusec.placement.measured.MeasuredChoice`). Outside the margin, or with
``tie_margin=0`` or ``tie_trials=0``, the model's placement is the executable, as before.

The other candidates are the whole program on the host and the whole program on the
accelerator (not where the small-batch guard keeps a unit on the host, as
`fusec.placement.decide.unsplit` respects it), those that differ from the chosen placement.
Without a calibrated accelerator profile there are no estimates to compare, so no tie.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from xdsl.dialects import func

from fusec.placement.cost_model import DeviceProfile, Reason, Thresholds
from fusec.placement.decide import ACCELERATOR, HOST, Placement, crossings, plan_seconds
from fusec.placement.work import units


@dataclass(frozen=True)
class Candidate:
    """A placement of the whole program and the model's seconds for one call of it."""

    placement: Placement
    seconds: float
    """`math.inf` where the model cannot estimate a unit."""

    @property
    def name(self) -> str:
        """``cpu`` or ``gpu`` when every unit is on one device, else ``split (cpu 2, gpu 1)``."""
        counts: dict[str, int] = {}
        for d in self.placement.decisions:
            counts[d.device] = counts.get(d.device, 0) + 1
        if len(counts) == 1:
            return next(iter(counts))
        return "split (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")"


@dataclass(frozen=True)
class TieCheck:
    """The chosen placement against the best other candidate, and whether they tie."""

    margin: float
    trials: int
    chosen: Candidate
    other: Candidate | None
    """The other candidate with the lowest estimate; None when there is none."""

    @property
    def ratio(self) -> float | None:
        """The larger estimate over the smaller; None without two finite positive ones."""
        if self.other is None:
            return None
        a, b = self.chosen.seconds, self.other.seconds
        if not (math.isfinite(a) and math.isfinite(b)) or min(a, b) <= 0:
            return None
        return max(a, b) / min(a, b)

    @property
    def tie(self) -> bool:
        """Whether to measure: the estimates within the margin, measuring not turned off."""
        ratio = self.ratio
        return (self.margin > 0 and self.trials > 0 and ratio is not None
                and ratio <= 1.0 + self.margin)

    def as_dict(self) -> dict[str, Any]:
        return {"margin": self.margin, "trials": self.trials, "tie": self.tie,
                "estimate_ratio": self.ratio,
                "candidates": [{"name": c.name, "model_choice": c is self.chosen,
                                "estimate_ms": c.seconds * 1e3 if math.isfinite(c.seconds)
                                else None}
                               for c in (self.chosen, self.other) if c is not None]}


def all_on(placement: Placement, device: str, function: func.FuncOp,
           accelerator: DeviceProfile, params: Collection[str]) -> Placement:
    """`placement` with every unit moved to `device` (reason ``profile-model``, estimates
    kept), and its transfers."""
    ops = units(function)
    decisions = [d if d.device == device else
                 replace(d, device=device, reason=Reason.PROFILE_MODEL.value)
                 for d in placement.decisions]
    return Placement(tuple(decisions),
                     tuple(crossings(function, ops, decisions, accelerator, params)),
                     placement.devices)


def check_tie(function: func.FuncOp, placement: Placement, thresholds: Thresholds,
              accelerator: DeviceProfile | None, params: Collection[str] = ()
              ) -> TieCheck | None:
    """The chosen `placement` against the best other candidate (module docstring); None with
    one device or without an accelerator profile (no estimates)."""
    if accelerator is None or len(placement.devices) < 2 or not placement.decisions:
        return None
    ops = units(function)

    def seconds(p: Placement) -> float:
        return plan_seconds(function, ops, p.decisions, thresholds, accelerator, params)

    guarded = any(d.reason == Reason.SMALL_BATCH_GUARD.value for d in placement.decisions)
    chosen = Candidate(placement, seconds(placement))
    chosen_devices = [d.device for d in placement.decisions]
    others = []
    for device in (HOST,) if guarded else (HOST, ACCELERATOR):
        if all(d == device for d in chosen_devices):
            continue
        moved = all_on(placement, device, function, accelerator, params)
        others.append(Candidate(moved, seconds(moved)))
    other = min(others, key=lambda c: c.seconds, default=None)
    return TieCheck(thresholds.tie_margin, thresholds.tie_trials, chosen, other)
