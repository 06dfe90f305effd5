"""Cuts a placed function into segments: maximal runs of units on one device, each a function.

Units are grouped device by device, as few segments as the dependences allow: a unit joins the
first segment of its device that comes after every segment it reads from on the other device
(and not before one it reads from on its own), else it opens a new segment at the end. Segment
order is then a valid order to run them in, and units on one device that do not depend on the
other device's work share one segment (one call, one wait).

Each segment becomes a ``func.func`` of its own: its arguments are the values it reads from the
function's arguments or from other segments, its results the values that other segments or the
function's return read. Constants are copied into every segment that reads them. The segment's
argument names are those of the original arguments where it reads one (``arg<i>`` for an
unnamed one, as the plan names it; so parameters bind by name), else ``t<N>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from fusec.placement.decide import Placement
from fusec.placement.work import NOT_UNITS, units


@dataclass(frozen=True)
class Segment:
    """One device's run of units, as a function of its own."""

    index: int
    device: str
    module: ModuleOp
    """A module holding the segment's function (named `name`)."""
    name: str
    inputs: tuple[str, ...]
    """Value keys (`ValueKeys`) of its arguments, in order."""
    outputs: tuple[str, ...]
    """Value keys of its results, in order."""
    after: tuple[int, ...]
    """The segments it reads from (which must have run first)."""
    labels: tuple[str, ...]
    """The units it runs."""


class ValueKeys:
    """A stable key per value of the original function: ``arg:<i>`` for an argument, ``v:<n>``
    for the n-th result made in the body."""

    def __init__(self, function: func.FuncOp):
        self.keys: dict[SSAValue, str] = {}
        for i, arg in enumerate(function.body.block.args):
            self.keys[arg] = f"arg:{i}"
        n = 0
        for op in function.body.block.ops:
            for r in op.results:
                self.keys[r] = f"v:{n}"
                n += 1

    def __getitem__(self, value: SSAValue) -> str:
        return self.keys[value]


def assign(ops: Sequence[Operation], placement: Placement) -> list[tuple[str, list[int]]]:
    """Segments as (device, unit indices), in a valid order to run (module docstring)."""
    segments: list[tuple[str, list[int]]] = []
    segment_of: dict[Operation, int] = {}
    for i, op in enumerate(ops):
        device = placement.device_of(i)
        lowest = 0
        for value in op.operands:
            producer = value.owner
            if isinstance(producer, Operation) and producer in segment_of:
                s = segment_of[producer]
                lowest = max(lowest, s if segments[s][0] == device else s + 1)
        chosen = next((s for s in range(lowest, len(segments)) if segments[s][0] == device),
                      None)
        if chosen is None:
            segments.append((device, []))
            chosen = len(segments) - 1
        segments[chosen][1].append(i)
        segment_of[op] = chosen
    return segments


def partition(function: func.FuncOp, placement: Placement) -> list[Segment]:
    """`function` (verified, fused) cut into segments by `placement`; see the module docstring."""
    ops = units(function)
    keys = ValueKeys(function)
    assigned = assign(ops, placement)
    segment_of = {ops[i]: s for s, (_, members) in enumerate(assigned) for i in members}
    returned = list(function.body.block.last_op.operands)  # type: ignore[union-attr]
    segments = []
    for s, (device, members) in enumerate(assigned):
        chosen = [ops[i] for i in members]
        inside = set(chosen)
        inputs: list[SSAValue] = []
        constants: list[Operation] = []
        for op in chosen:
            for value in op.operands:
                owner = value.owner
                if isinstance(owner, Operation) and owner.name in NOT_UNITS:
                    if owner not in constants:
                        constants.append(owner)
                elif owner not in inside and value not in inputs:
                    inputs.append(value)
        outputs = [r for op in chosen for r in op.results
                   if r in returned or any(u.operation not in inside
                                           and not isinstance(u.operation, func.ReturnOp)
                                           for u in r.uses)]
        after = sorted({segment_of[v.owner] for v in inputs
                        if isinstance(v.owner, Operation) and v.owner in segment_of})
        name = f"{function.sym_name.data}_{s}_{device}"
        module = outline(name, inputs, outputs, constants, chosen, keys)
        segments.append(Segment(s, device, module, name, tuple(keys[v] for v in inputs),
                                tuple(keys[v] for v in outputs), tuple(after),
                                tuple(str(placement.decisions[i].work.label) for i in members)))
    return segments


def outline(name: str, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue],
            constants: Sequence[Operation], ops: Sequence[Operation],
            keys: ValueKeys) -> ModuleOp:
    """A module with one function `name` computing `outputs` from `inputs` by clones of
    `constants` and `ops`."""
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    def original_name(value: SSAValue) -> str:
        return value.name_hint or f"arg{keys[value].removeprefix('arg:')}"

    taken = {original_name(v) for v in inputs if keys[v].startswith("arg:")}
    for i, (value, arg) in enumerate(zip(inputs, block.args, strict=True)):
        if keys[value].startswith("arg:"):
            arg.name_hint = original_name(value)
        else:
            hint = f"t{i}"
            while hint in taken:
                hint += "_"
            taken.add(hint)
            arg.name_hint = hint
        mapping[value] = arg
    for op in [*constants, *ops]:
        clone = op.clone(value_mapper=mapping)
        for old, new in zip(op.results, clone.results, strict=True):
            mapping[old] = new
            new.name_hint = old.name_hint
        block.add_op(clone)
    block.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
    function = func.FuncOp(name, FunctionType.from_lists([v.type for v in inputs],
                                                         [v.type for v in outputs]),
                           Region(block))
    return ModuleOp([function])
