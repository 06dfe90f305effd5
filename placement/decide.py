"""Places every unit of a fused function on the host (``cpu``) or the accelerator (``gpu``).

The units are taken in program order and each gets the cost model's verdict
(`fusec.placement.cost_model.evaluate`), knowing where its inputs already are: a function
argument is on the host (the caller's numpy array) unless it is a parameter bound to the
devices, which is on both; a unit's results are where the unit runs. An input on the other
device must cross, and that transfer is part of each side's estimate; a result the function
returns goes back to the caller, which costs a download from the accelerator. Then, in reverse
order, a fused group left on the host whose result feeds a unit on the accelerator follows it
(fusion-override), and views (reshapes) follow their operand.

The outcome, a `Placement`, lists each unit's decision and every value that crosses between
the devices. With one device every unit is on it, reason ``disabled``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from fusec.placement.cost_model import (
    DeviceProfile,
    Reason,
    Thresholds,
    cpu_estimate,
    evaluate,
    threshold_for,
)
from fusec.placement.work import Work, measure, nbytes, units

HOST = "cpu"
ACCELERATOR = "gpu"
ANYWHERE = "any"
"""Where a bound parameter or a constant is: copied once to each device that reads it."""
DECISION_LOG_CAPACITY = 128


@dataclass(frozen=True)
class Decision:
    """Where one unit runs, and why."""

    work: Work
    device: str
    """`HOST` or `ACCELERATOR`."""
    reason: str
    cpu_s: float | None
    """The host's estimate (with the transfers it needs), seconds; None if unknown."""
    gpu_s: float | None
    threshold: int | None


@dataclass(frozen=True)
class Transfer:
    """A value made on one device and read on the other (once per call)."""

    value: str
    source: str
    target: str
    nbytes: int
    seconds: float | None


@dataclass(frozen=True)
class Placement:
    decisions: tuple[Decision, ...]
    transfers: tuple[Transfer, ...]
    devices: tuple[str, ...]
    """The devices placed on: (`HOST`, `ACCELERATOR`), or the one device there is."""

    def log(self) -> list[Decision]:
        """The last `DECISION_LOG_CAPACITY` decisions (the seed's bounded decision log)."""
        return list(deque(self.decisions, maxlen=DECISION_LOG_CAPACITY))

    def device_of(self, index: int) -> str:
        return self.decisions[index].device

    @property
    def split(self) -> bool:
        """Whether both devices run something."""
        return len({d.device for d in self.decisions}) > 1


def value_name(value: SSAValue) -> str:
    """``%name``; an unnamed argument ``%arg<i>``, an unnamed result ``<its unit's label>``."""
    if value.name_hint:
        return f"%{value.name_hint}"
    owner = value.owner
    if isinstance(owner, Operation):
        return f"{owner.name} result {value.index}"  # type: ignore[attr-defined]
    return f"%arg{value.index}"  # type: ignore[attr-defined]


def place(
    function: func.FuncOp,
    thresholds: Thresholds,
    accelerator: DeviceProfile | None,
    single: str | None = None,
    params: Collection[str] = (),
) -> Placement:
    """The placement of `function`'s units; `single` names the only device's role when there
    is one device (every unit goes there, reason ``disabled``). `accelerator` is the
    accelerator's calibrated profile (None: the threshold rule decides)."""
    ops = units(function)
    works = measure(function)
    where: dict[SSAValue, str] = {}
    for arg in function.body.block.args:
        where[arg] = ANYWHERE if arg.name_hint in params else HOST
    returned = set(function.body.block.last_op.operands) if function.body.block.last_op else set()
    if single is not None:
        decisions = [Decision(w, single, Reason.DISABLED.value,
                              cpu_estimate(thresholds, w.kind, w.elements, w.flops, w.traffic,
                                           w.steps, w.transcendentals, w.half), None,
                              threshold_for(thresholds, w.kind)) for w in works]
        return Placement(tuple(decisions), (), (single,))
    decisions: list[Decision] = []
    pieces = Pieces()
    for op, w in zip(ops, works, strict=True):
        decision = decide_unit(op, w, where, thresholds, accelerator, returned, pieces)
        decisions.append(decision)
        pieces.add(op, decision.device)
        for r in op.results:
            where[r] = decision.device
    decisions = fusion_override(ops, decisions)
    decisions = follow_views(function, ops, decisions, params)
    if accelerator is not None:
        decisions = unsplit(function, ops, decisions, thresholds, accelerator, params)
    transfers = crossings(function, ops, decisions, accelerator, params)
    return Placement(tuple(decisions), tuple(transfers), (HOST, ACCELERATOR))


class Pieces:
    """The pieces (runs of units on one device, `fusec.placement.partition.assign`) of the
    units placed so far, to tell whether a unit would open a new one: each piece is a call of
    its own on its device, whose fixed cost (`DeviceProfile.call_s`, `Thresholds.cpu_call_s`)
    the unit that opens it pays."""

    def __init__(self) -> None:
        self.devices: list[str] = []
        self.piece_of: dict[Operation, int] = {}

    def joins(self, op: Operation, device: str) -> int | None:
        """The piece `op` would join on `device` (as `partition.assign` groups), or None."""
        lowest = 0
        for value in op.operands:
            producer = value.owner
            if isinstance(producer, Operation) and producer in self.piece_of:
                s = self.piece_of[producer]
                lowest = max(lowest, s if self.devices[s] == device else s + 1)
        return next((s for s in range(lowest, len(self.devices)) if self.devices[s] == device),
                    None)

    def add(self, op: Operation, device: str) -> None:
        piece = self.joins(op, device)
        if piece is None:
            self.devices.append(device)
            piece = len(self.devices) - 1
        self.piece_of[op] = piece


def located(where: dict[SSAValue, str], value: SSAValue) -> str:
    """Where `value` is; a constant (not in `where`) is anywhere."""
    return where.get(value, ANYWHERE)


def decide_unit(
    op: Operation,
    w: Work,
    where: dict[SSAValue, str],
    thresholds: Thresholds,
    accelerator: DeviceProfile | None,
    returned: Collection[SSAValue],
    pieces: Pieces | None = None,
) -> Decision:
    if w.view:
        source = located(where, op.operands[0])
        device = HOST if source == ANYWHERE else source
        return Decision(w, device, Reason.RESIDENCY.value, None, None, None)
    to_host = to_accelerator = 0.0
    on_accelerator = False
    if accelerator is not None:
        for value, size in zip(op.operands, w.input_bytes, strict=True):
            source = located(where, value)
            if source == ACCELERATOR:
                to_host += accelerator.download_s(size)
            elif source == HOST:
                to_accelerator += accelerator.upload_s(size)
        to_accelerator += sum(accelerator.download_s(nbytes(r)) for r in op.results
                              if r in returned)
        if pieces is not None:
            if pieces.joins(op, HOST) is None:
                to_host += thresholds.cpu_call_s
            if pieces.joins(op, ACCELERATOR) is None:
                to_accelerator += accelerator.call_s
    on_accelerator = any(located(where, v) == ACCELERATOR for v in op.operands)
    e = evaluate(thresholds, accelerator, w.kind, w.elements, w.flops, w.batch, on_accelerator,
                 to_host, to_accelerator, w.traffic, w.steps, w.transcendentals, w.half)
    return Decision(w, ACCELERATOR if e.accelerate else HOST, e.reason.value, e.cpu_s, e.gpu_s,
                    e.threshold)


def fusion_override(ops: Sequence[Operation], decisions: list[Decision]) -> list[Decision]:
    """Fused groups on the host that feed a unit on the accelerator move there (in reverse
    program order, so a chain of groups follows its last member)."""
    index = {op: i for i, op in enumerate(ops)}
    out = list(decisions)
    for i in reversed(range(len(ops))):
        d = out[i]
        if not d.work.group or d.device != HOST:
            continue
        consumers = {index[u.operation] for r in ops[i].results for u in r.uses
                     if u.operation in index}
        if any(out[c].device == ACCELERATOR for c in consumers):
            out[i] = replace(d, device=ACCELERATOR, reason=Reason.FUSION_OVERRIDE.value)
    return out


def follow_views(function: func.FuncOp, ops: Sequence[Operation], decisions: list[Decision],
                 params: Collection[str]) -> list[Decision]:
    """Views run where their operand is (after the fusion override moved some producers)."""
    where: dict[SSAValue, str] = {a: ANYWHERE if a.name_hint in params else HOST
                                  for a in function.body.block.args}
    out = list(decisions)
    for i, op in enumerate(ops):
        if out[i].work.view:
            source = located(where, op.operands[0])
            out[i] = replace(out[i], device=HOST if source == ANYWHERE else source)
        for r in op.results:
            where[r] = out[i].device
    return out


def plan_seconds(
    function: func.FuncOp,
    ops: Sequence[Operation],
    decisions: Sequence[Decision],
    thresholds: Thresholds,
    accelerator: DeviceProfile,
    params: Collection[str],
) -> float:
    """The estimated seconds of a whole call placed as `decisions`: every unit's work on its
    device, every transfer (values crossing between the devices, the caller's arrays read on
    the accelerator, results made there read back), and a call's fixed cost for every piece
    of units run together on one device."""
    total = 0.0
    pieces = Pieces()
    for op, d in zip(ops, decisions, strict=True):
        w = d.work
        if pieces.joins(op, d.device) is None:
            total += thresholds.cpu_call_s if d.device == HOST else accelerator.call_s
        pieces.add(op, d.device)
        if w.view:
            continue
        seconds = (cpu_estimate(thresholds, w.kind, w.elements, w.flops, w.traffic, w.steps,
                                w.transcendentals, w.half) if d.device == HOST else
                   accelerator.compute(w.kind, w.elements, w.flops, w.traffic, w.steps,
                                       w.transcendentals, w.half))
        if seconds is None:
            return math.inf
        total += seconds
    total += sum(t.seconds or 0.0 for t in crossings(function, ops, decisions, accelerator,
                                                      params))
    made = {r: d.device for op, d in zip(ops, decisions, strict=True) for r in op.results}
    returned = function.body.block.last_op.operands if function.body.block.last_op else ()
    total += sum(accelerator.download_s(nbytes(v)) for v in set(returned)
                 if made.get(v) == ACCELERATOR)
    return total


def unsplit(
    function: func.FuncOp,
    ops: Sequence[Operation],
    decisions: list[Decision],
    thresholds: Thresholds,
    accelerator: DeviceProfile,
    params: Collection[str],
) -> list[Decision]:
    """A split placement, or all its units on one device where the model estimates that the
    whole call costs less so: each unit was placed knowing only the units before it, so a
    split may pay for a piece and transfers that the units after it make needless (a norm
    on the host before the matmuls of the accelerator). Units the small-batch guard keeps on
    the host stay there. The units moved keep their estimates, reason ``profile-model``."""
    if len({d.device for d in decisions}) < 2:
        return decisions
    guarded = any(d.reason == Reason.SMALL_BATCH_GUARD.value for d in decisions)
    best = decisions
    best_s = plan_seconds(function, ops, decisions, thresholds, accelerator, params)
    for device in (HOST,) if guarded else (HOST, ACCELERATOR):
        moved = [d if d.device == device else
                 replace(d, device=device, reason=Reason.PROFILE_MODEL.value)
                 for d in decisions]
        seconds = plan_seconds(function, ops, moved, thresholds, accelerator, params)
        if seconds < best_s:
            best, best_s = moved, seconds
    return best


def crossings(
    function: func.FuncOp,
    ops: Sequence[Operation],
    decisions: Sequence[Decision],
    accelerator: DeviceProfile | None,
    params: Collection[str],
) -> list[Transfer]:
    """Every value read on a device other than the one that holds it (once per value and
    target): device-to-device transfers, and the caller's arrays uploaded to the accelerator."""
    where: dict[SSAValue, str] = {a: ANYWHERE if a.name_hint in params else HOST
                                  for a in function.body.block.args}
    for op, d in zip(ops, decisions, strict=True):
        for r in op.results:
            where[r] = d.device
    seen: set[tuple[SSAValue, str]] = set()
    transfers: list[Transfer] = []
    for op, d in zip(ops, decisions, strict=True):
        for value in op.operands:
            source = located(where, value)
            if source in (ANYWHERE, d.device) or (value, d.device) in seen:
                continue
            seen.add((value, d.device))
            size = nbytes(value)
            seconds = None
            if accelerator is not None:
                seconds = (accelerator.upload_s(size) if d.device == ACCELERATOR
                           else accelerator.download_s(size))
            transfers.append(Transfer(value_name(value), source, d.device, size, seconds))
    return transfers
