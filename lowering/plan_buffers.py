"""Places intermediate buffers in shared memory slots: buffers whose lifetimes do not overlap
share one slot.

    memref.alloc() : memref<...>  ->  kernel.alloc slot N : memref<...>

Preconditions: the kernel-level IR of ``lower-to-kernels`` (host functions of one block). A
buffer lives from its first use to its last use in the host schedule, counting the uses of its
``kernel.view``s. A buffer the function returns (itself or through a view) takes no slot: it
stays a ``memref.alloc``, the call's output, a buffer of its own
(`fusec.codegen.program`). It used to take a slot kept to the end, so every later buffer
needed another: GPT-2 small, which returns each layer's keys and values, planned 12 slots of
12 MiB for its 12 layers' MLPs at batch 16 (f16) where one serves. A launch that reads one
buffer and writes another keeps them apart (no kernel works in place). Slots are reused first-fit by
size (the smallest free slot that is large enough, else the largest free slot, which grows);
a slot is as large as its largest occupant. The whole-function liveness analysis runs once per
function, then every alloc is rewritten once.

Before::

    %a = memref.alloc() : memref<64xf32>
    kernel.launch @k0(%x, %a) ...
    %b = memref.alloc() : memref<64xf32>
    kernel.launch @k1(%a, %b) ...
    %c = memref.alloc() : memref<64xf32>
    kernel.launch @k2(%b, %c) ...        // %a is dead here: %c takes its slot

After::

    %a = kernel.alloc slot 0 : memref<64xf32>
    ...
    %b = kernel.alloc slot 1 : memref<64xf32>
    ...
    %c = kernel.alloc slot 0 : memref<64xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from fusec.dialects import kernel

ELEMENT_BYTES = {"f32": 4, "i32": 4, "i1": 1, "i8": 1}


def nbytes(t: MemRefType) -> int:
    return max(1, t.element_count() * ELEMENT_BYTES.get(str(t.element_type), 4))


@dataclass
class Interval:
    alloc: memref.AllocOp
    start: int
    end: int
    size: int


def lifetimes(fn: func.FuncOp) -> list[Interval]:
    """The live interval of every ``memref.alloc`` of ``fn`` that the function does not return,
    in program order."""
    ops = list(fn.body.block.ops)
    position = {op: i for i, op in enumerate(ops)}
    intervals: list[Interval] = []
    for op in ops:
        if not isinstance(op, memref.AllocOp):
            continue
        uses = list(users(op.memref))
        if any(isinstance(u, func.ReturnOp) for u in uses):
            continue  # an output: a buffer of its own
        start = min((position[u] for u in uses), default=position[op])
        end = max((position[u] for u in uses), default=position[op])
        intervals.append(Interval(op, start, end, nbytes(op.memref.type)))  # type: ignore[arg-type]
    return intervals


def users(buffer: SSAValue) -> list[Operation]:
    """The host ops reading or writing ``buffer`` or a view of it."""
    found: list[Operation] = []
    for use in buffer.uses:
        op = use.operation
        if isinstance(op, kernel.ViewOp):
            found.append(op)
            found.extend(users(op.result))
        else:
            found.append(op)
    return found


def assign_slots(intervals: list[Interval]) -> list[int]:
    """A slot per interval such that intervals sharing a slot do not overlap."""
    slot_size: list[int] = []
    slot_free_after: list[int] = []  # the last position at which the slot's occupant is live
    slots = [0] * len(intervals)
    for i in sorted(range(len(intervals)), key=lambda i: intervals[i].start):
        iv = intervals[i]
        free = [s for s in range(len(slot_size)) if slot_free_after[s] < iv.start]
        fitting = [s for s in free if slot_size[s] >= iv.size]
        if fitting:
            slot = min(fitting, key=lambda s: slot_size[s])
        elif free:
            slot = max(free, key=lambda s: slot_size[s])
        else:
            slot = len(slot_size)
            slot_size.append(0)
            slot_free_after.append(-1)
        slot_size[slot] = max(slot_size[slot], iv.size)
        slot_free_after[slot] = iv.end
        slots[i] = slot
    return slots


@dataclass(frozen=True)
class PlanBuffersPass(ModulePass):
    name = "plan-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            intervals = lifetimes(fn)
            for iv, slot in zip(intervals, assign_slots(intervals), strict=False):
                new = kernel.AllocOp(slot, iv.alloc.memref.type)
                new.results[0].name_hint = iv.alloc.memref.name_hint
                Rewriter.replace_op(iv.alloc, new)
