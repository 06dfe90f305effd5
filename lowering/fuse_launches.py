"""Merges adjacent kernel launches into one under a memory budget (launch fusion, seed 002).

    kernel.launch @a(%x, %y, %t); kernel.launch @b(%t, %z, %u)  ->  kernel.launch @a_fused2(%x,
    %y, %z, %u), where @a_fused2's work-item i computes @a's value, keeps it in a register and
    computes @b's from it; %t is stored only if something outside the group reads it.

Whatever the graph fusions leave (a pipeline that skips them, a pattern they do not know, ops
un-fused for the backend) otherwise runs as one launch per op. This pass sees the kernel-level
IR of ``lower-to-kernels``, so it runs before ``plan-buffers`` (the ``lower-opencl`` pipeline).

Each ``kernel.launch`` and ``kernel.template`` of a host function is a stage of the planner
(`launch_plan`), in program order, with its id (its position), the bytes of the buffers it reads
(input) and writes (output), its local memory (scratch), and a layout key:

- a generated kernel of the pointwise shape (``if (gid < n) { ...; one store }``) has the key
  of its iteration space and index mapping: its global and local sizes, ``n``, the store's
  index expressions as functions of the work-item id, and the stored value and buffer types.
  Work-item ``i`` of two kernels of one key writes the same element of a same-shaped buffer;
- every other kernel (a template, a work-group reduction, a kernel with several stores) has a
  key of its own: it never merges.

A stage needs host materialization (it cannot join the launch before it) when it reads a buffer
that an earlier stage of its run of equal keys wrote, anywhere but at the element its own
work-item ``i`` would have written (another work-item's value is visible only after a launch
boundary), or writes a buffer such a stage touched. The planner groups the stages greedily under
``budget`` bytes; each group of several stages becomes one ``kernel.func`` whose body runs the
members' bodies in order under one guard: a load of a buffer written earlier in the group reads
the stored value from its register instead, and the store is kept only when something outside
the group (another launch, a view, the return) reads the buffer; a buffer no one else reads is
no longer allocated. A planner error (a zero budget, a stage alone over the budget) fails the
pass with the planner's message and its ``Fix:`` sentence; with ``allow-oversized`` a stage
alone over the budget is left unfused instead.

Before (``-p none`` on ``exp(relu(x))``)::

    %c = memref.alloc() : memref<64xf32>
    kernel.launch @f_relu_0(%x, %c) {global_size = array<i64: 16>, ...}
    %d = memref.alloc() : memref<64xf32>
    kernel.launch @f_exp_1(%c, %d) {global_size = array<i64: 16>, ...}
    func.return %d : memref<64xf32>

After::

    %d = memref.alloc() : memref<64xf32>
    kernel.launch @f_relu_0_fused2(%x, %d) {global_size = array<i64: 16>, ...}
    func.return %d : memref<64xf32>
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException

from fusec.dialects import kernel
from fusec.dialects.locations import fuse_locations
from fusec.lowering.launch_plan import (
    LaunchFusionError,
    LaunchGroup,
    LaunchStage,
    StageOverBudget,
    plan_launch_fusion,
    stage_required_bytes,
)
from fusec.lowering.plan_buffers import nbytes
from fusec.passes._util import OpPassFailure

DEFAULT_BUDGET = 1 << 30
"""The budget without a device (``fusec-opt``): 1 GiB. ``fusec.compile`` and ``fusec-run``
pass the device's global memory size instead."""

INDEX_OPS: frozenset[str] = frozenset({
    "arith.addi", "arith.subi", "arith.muli", "arith.divui", "arith.divsi", "arith.remui",
    "arith.remsi", "arith.minui", "arith.maxui", "arith.minsi", "arith.maxsi",
    "arith.floordivsi", "arith.ceildivsi", "arith.ceildivui", "arith.index_cast",
})
"""Pure integer ops through which an index is a function of the work-item id alone."""

LOADS = (memref.LoadOp, vector.LoadOp)
STORES = (memref.StoreOp, vector.StoreOp)
WORK_GROUP_OPS = (kernel.LocalIdOp, kernel.GroupIdOp, kernel.BarrierOp, memref.AllocaOp)

Expr = tuple[Hashable, ...]
"""An index as a function of the work-item id: ``("gid",)``, ``("const", 8)``,
``("arith.divui", e1, e2)``; ``("opaque", n)`` for anything else (equal to nothing else)."""


@dataclass(frozen=True)
class Access:
    """A load or store of kernel argument ``arg`` at ``index`` (None: not a function of the
    work-item id alone, e.g. inside a loop) of values of type ``value_type``."""

    op: Operation
    arg: int
    index: tuple[Expr, ...] | None
    value_type: Attribute


@dataclass
class PointwiseKernel:
    """A generated kernel of the shape ``gid = global_id 0; if (gid < n) { body }``."""

    fn: kernel.FuncOp
    gid: SSAValue
    bound: SSAValue
    n: int
    then: Block
    loads: list[Access] = field(default_factory=list)
    stores: list[Access] = field(default_factory=list)


def pointwise_kernel(fn: kernel.FuncOp) -> PointwiseKernel | None:
    """``fn`` read as a `PointwiseKernel`, or None when it is not of that shape."""
    ops = list(fn.body.block.ops)
    if len(ops) != 5:
        return None
    gid, bound, cmp, guard, ret = ops
    if not (
        isinstance(gid, kernel.GlobalIdOp) and gid.dim.value.data == 0
        and isinstance(bound, arith.ConstantOp) and isinstance(bound.value, IntegerAttr)
        and isinstance(cmp, arith.CmpiOp) and cmp.predicate.value.data == 6  # ult
        and cmp.lhs == gid.result and cmp.rhs == bound.result
        and isinstance(guard, scf.IfOp) and guard.cond == cmp.result and not guard.results
        and not guard.false_region.blocks and isinstance(ret, kernel.ReturnOp)
    ):
        return None
    if any(isinstance(op, WORK_GROUP_OPS) for op in fn.walk()):
        return None
    then = guard.true_region.block
    shape = PointwiseKernel(fn, gid.result, bound.result, bound.value.value.data, then)
    exprs = IndexExprs(gid.result, then)
    for op in fn.walk():
        if isinstance(op, LOADS):
            at = exprs.of(op.indices) if op.parent_block() is then else None
            shape.loads.append(Access(op, fn.args.index(op.operands[0]), at, op.results[0].type))
        elif isinstance(op, STORES):
            at = exprs.of(op.indices) if op.parent_block() is then else None
            stored = op.operands[0]
            shape.stores.append(Access(op, fn.args.index(op.operands[1]), at, stored.type))
    return shape


class IndexExprs:
    """Index values of one kernel as expressions of its work-item id (`Expr`)."""

    def __init__(self, gid: SSAValue, then: Block):
        self.gid = gid
        self.then = then
        self.opaque: dict[SSAValue, int] = {}

    def of(self, values: Sequence[SSAValue]) -> tuple[Expr, ...]:
        return tuple(self.expr(v) for v in values)

    def expr(self, value: SSAValue) -> Expr:
        if value is self.gid:
            return ("gid",)
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return ("const", owner.value.value.data)
        if isinstance(owner, Operation) and owner.name in INDEX_OPS:
            return (owner.name, *(self.expr(v) for v in owner.operands))
        return ("opaque", id(value))


@dataclass
class Stage:
    """One host launch as the planner sees it, and what the rewrite needs of it."""

    op: kernel.LaunchOp | kernel.TemplateOp
    name: str
    key: Hashable
    reads: list[tuple[SSAValue, Access | None]]
    """Each buffer read, with the access when the kernel is pointwise."""
    writes: list[tuple[SSAValue, Access | None]]
    input_bytes: int
    output_bytes: int
    scratch_bytes: int
    kernel: PointwiseKernel | None = None


def buffer_bytes(values: Sequence[SSAValue]) -> int:
    distinct = list(dict.fromkeys(values))
    return sum(nbytes(v.type) for v in distinct)  # type: ignore[arg-type]


def root(value: SSAValue) -> SSAValue:
    """The buffer ``value`` is, or is a ``kernel.view`` of."""
    while isinstance(value.owner, kernel.ViewOp):
        value = value.owner.source
    return value


def launch_stage(op: kernel.LaunchOp, fn: kernel.FuncOp, index: int) -> Stage:
    args = list(op.args)
    shape = pointwise_kernel(fn)
    name = f"@{fn.sym_name.data}"
    if shape is None:
        written = {
            fn.args.index(o.operands[1]) for o in fn.walk()
            if isinstance(o, STORES) and o.operands[1] in fn.args
        }
        reads = [(args[i], None) for i in range(len(args)) if i not in written]
        writes = [(args[i], None) for i in sorted(written)]
        scratch = sum(
            nbytes(o.results[0].type)  # type: ignore[arg-type]
            for o in fn.walk() if isinstance(o, memref.AllocaOp)
        )
        return Stage(op, name, ("alone", index), reads, writes, buffer_bytes([v for v, _ in reads]),
                     buffer_bytes([v for v, _ in writes]), scratch)
    reads = [(args[a.arg], a) for a in shape.loads]
    writes = [(args[s.arg], s) for s in shape.stores]
    key = pointwise_key(fn, *op.sizes(), shape) or ("alone", index)
    return Stage(op, name, key, reads, writes, buffer_bytes([v for v, _ in reads]),
                 buffer_bytes([v for v, _ in writes]), 0, shape)


def pointwise_key(fn: kernel.FuncOp, glob: tuple[int, ...], loc: tuple[int, ...],
                  shape: PointwiseKernel | None = None) -> Hashable | None:
    """The layout key of kernel `fn` launched over `glob` work-items in groups of `loc` (see
    the module docstring): launches of one key may merge; None for a kernel that never does
    (not of the pointwise shape, or more than one store)."""
    shape = shape or pointwise_kernel(fn)
    if shape is None or len(shape.stores) != 1 or shape.stores[0].index is None:
        return None
    store = shape.stores[0]
    return ("pointwise", glob, loc, shape.n, store.index, store.value_type,
            fn.args[store.arg].type)


def template_stage(op: kernel.TemplateOp, index: int) -> Stage:
    reads = [(v, None) for v in [*op.inputs, *op.extras]]
    writes = [(v, None) for v in op.outputs]
    return Stage(op, f"'{op.template.data}' template", ("alone", index), reads, writes,
                 buffer_bytes([v for v, _ in reads]), buffer_bytes([v for v, _ in writes]), 0)


def needs_materialization(stages: list[Stage]) -> list[bool]:
    """Per stage: whether it must start after the stage before it has finished (see the module
    docstring: a read of another work-item's element written earlier in its run of equal
    keys, or a write to a buffer that run touched)."""
    flags: list[bool] = []
    run_key: Hashable = None
    written: dict[SSAValue, list[tuple[SSAValue, Access | None]]] = {}
    touched: set[SSAValue] = set()
    for stage in stages:
        flag = False
        if stage.key != run_key:
            written, touched, run_key = {}, set(), stage.key
        else:
            flag = any(
                not aligned(value, access, written.get(root(value), []))
                for value, access in stage.reads
                if root(value) in written
            ) or any(root(value) in touched for value, _ in stage.writes)
            if flag:
                written, touched = {}, set()
        for value, access in stage.writes:
            written.setdefault(root(value), []).append((value, access))
            touched.add(root(value))
        touched.update(root(value) for value, _ in stage.reads)
        flags.append(flag)
    return flags


def aligned(
    value: SSAValue, access: Access | None, writes: list[tuple[SSAValue, Access | None]]
) -> bool:
    """Whether a read of ``value`` at ``access`` reads what this work-item itself wrote."""
    if access is None or access.index is None:
        return False
    return all(
        w is value and wa is not None and wa.index == access.index
        and wa.value_type == access.value_type
        for w, wa in writes
    )


@dataclass(frozen=True)
class FuseLaunchesPass(ModulePass):
    name = "fuse-launches"

    budget: int = DEFAULT_BUDGET
    """Bytes one fused launch may touch: its first stage's inputs, outputs and scratch plus
    each further stage's outputs and scratch. Without a device 1 GiB; ``fusec.compile`` and
    ``fusec-run`` default to the device's global memory size (``--launch-budget``)."""

    allow_oversized: bool = False
    """Leave a kernel that alone needs more than the budget as it is (unfused) instead of
    failing. ``fusec.compile`` and ``fusec-run`` set it with their default budget, the
    device's memory: the runtime then says what does not fit the device."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.budget < 0:
            raise PassFailedException(f"fuse-launches: budget must be >= 0, got {self.budget}")
        symbols = {
            k.sym_name.data: k for k in op.ops if isinstance(k, kernel.FuncOp)
        }
        fused_away: set[str] = set()
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            fusion = FunctionFusion(op, fn, symbols, self.budget, self.allow_oversized)
            fused_away |= fusion.run()
        still_launched = {
            o.kernel.root_reference.data for o in op.walk() if isinstance(o, kernel.LaunchOp)
        }
        for name in sorted(fused_away - still_launched):
            op.body.block.erase_op(symbols[name])


class FunctionFusion:
    """Plans and rewrites the launches of one host function."""

    def __init__(self, module: ModuleOp, fn: func.FuncOp, symbols: dict[str, kernel.FuncOp],
                 budget: int, allow_oversized: bool = False):
        self.module = module
        self.fn = fn
        self.symbols = symbols
        self.budget = budget
        self.allow_oversized = allow_oversized

    def stages(self) -> list[Stage]:
        stages: list[Stage] = []
        for op in self.fn.body.block.ops:
            if isinstance(op, kernel.LaunchOp):
                name = op.kernel.root_reference.data
                if name not in self.symbols:
                    raise OpPassFailure("fuse-launches", self.fn,
                                        f"no kernel.func @{name} in the module")
                stages.append(launch_stage(op, self.symbols[name], len(stages)))
            elif isinstance(op, kernel.TemplateOp):
                stages.append(template_stage(op, len(stages)))
        return stages

    def run(self) -> set[str]:
        """Rewrites every group of several stages; returns the kernels no longer launched
        from here."""
        stages = self.stages()
        flags = needs_materialization(stages)
        planned = [
            LaunchStage(i, s.key, s.input_bytes, s.output_bytes, s.scratch_bytes, flag)
            for i, (s, flag) in enumerate(zip(stages, flags, strict=True))
        ]
        groups: list[LaunchGroup] = []
        try:
            for segment in self.segments(planned):
                groups += plan_launch_fusion(segment, self.budget).groups
        except StageOverBudget as e:
            error = e.named(stages[e.stage_id].name)
            raise OpPassFailure("fuse-launches", self.fn, f"@{self.fn.sym_name.data}: {error}")
        except LaunchFusionError as e:
            raise OpPassFailure("fuse-launches", self.fn, f"@{self.fn.sym_name.data}: {e}")
        replaced: set[str] = set()
        for group in groups:
            if len(group.stage_ids) > 1:
                members = [stages[i] for i in group.stage_ids]
                replaced |= {m.op.kernel.root_reference.data for m in members}  # type: ignore[union-attr]
                self.fuse(members)
        return replaced

    def segments(self, stages: list[LaunchStage]) -> list[list[LaunchStage]]:
        """The stages to plan together: all of them, or with ``allow_oversized`` the runs
        between stages that alone exceed the budget (those are left as they are)."""
        if not self.allow_oversized or self.budget <= 0:
            return [stages]
        runs: list[list[LaunchStage]] = [[]]
        for stage in stages:
            if stage_required_bytes(stage) > self.budget:
                runs.append([])
            else:
                runs[-1].append(stage)
        return runs

    def fuse(self, members: list[Stage]) -> None:
        launches = [m.op for m in members]
        assert all(isinstance(op, kernel.LaunchOp) for op in launches)
        inside = set(launches)
        written = list(dict.fromkeys(v for m in members for v, _ in m.writes))
        kept = {v for v in written if any(u.operation not in inside for u in v.uses)}
        dropped = [v for v in written if v not in kept]
        buffers = [
            v for v in dict.fromkeys(a for op in launches for a in op.operands)
            if v not in dropped
        ]
        first = members[0].kernel
        assert first is not None
        name = f"{first.fn.sym_name.data}_fused{len(members)}"
        fused = build_fused_kernel(name, members, buffers, kept)
        # The merged launch stands for every member's source op (MLIR's FusedLoc).
        fused.location = fuse_locations(op.location for op in launches)
        self.module.body.block.insert_op_before(fused, first.fn)
        last = launches[-1]
        assert isinstance(last, kernel.LaunchOp)
        glob, loc = last.sizes()
        block = self.fn.body.block
        launch = kernel.LaunchOp(SymbolRefAttr(name), buffers, glob, loc)
        launch.location = fused.location
        block.insert_op_after(launch, last)
        for op in launches:
            block.erase_op(op)
        for value in dropped:
            alloc = value.owner
            if isinstance(alloc, memref.AllocOp) and alloc.memref.first_use is None:
                block.erase_op(alloc)


def build_fused_kernel(
    name: str, members: list[Stage], buffers: list[SSAValue], kept: set[SSAValue]
) -> kernel.FuncOp:
    """One ``kernel.func`` over ``buffers`` running the members' bodies in order under one
    guard; values stored earlier in the group are read from registers."""
    fn = kernel.FuncOp(name, [b.type for b in buffers])
    for arg, buffer in zip(fn.args, buffers, strict=True):
        arg.name_hint = buffer.name_hint
    position = {b: i for i, b in enumerate(buffers)}
    entry = fn.body.block
    first = members[0].kernel
    assert first is not None
    gid = kernel.GlobalIdOp(0)
    bound = arith.ConstantOp(IntegerAttr(first.n, IndexType()))
    inside = arith.CmpiOp(gid.result, bound.result, "ult")
    then = Block()
    entry.add_ops([gid, bound, inside, scf.IfOp(inside.result, [], Region(then)),
                   kernel.ReturnOp()])
    registers: dict[SSAValue, tuple[Access, SSAValue]] = {}
    """host buffer -> the store that wrote it in this group and the stored value."""
    for member in members:
        shape = member.kernel
        assert shape is not None and isinstance(member.op, kernel.LaunchOp)
        host = list(member.op.args)
        mapping: dict[SSAValue, SSAValue] = {shape.gid: gid.result, shape.bound: bound.result}
        for arg, value in zip(shape.fn.args, host, strict=True):
            if value in position:
                mapping[arg] = fn.args[position[value]]
        loads = {a.op: a for a in shape.loads}
        stores = {s.op: s for s in shape.stores}
        for op in shape.then.ops:
            if isinstance(op, scf.YieldOp):
                continue
            if op in loads and host[loads[op].arg] in registers:
                access = loads[op]
                store, value = registers[host[access.arg]]
                assert store.index == access.index and store.value_type == access.value_type
                mapping[op.results[0]] = value
                continue
            if op in stores:
                access = stores[op]
                target = host[access.arg]
                registers[target] = (access, mapping.get(op.operands[0], op.operands[0]))
                if target not in kept:
                    continue
            then.add_op(op.clone(value_mapper=mapping))
    then.add_op(scf.YieldOp())
    cse(fn)  # constants
    merge_index_arithmetic(then)  # each member computed the same indices from the work-item id
    region_dce(fn.body)  # the index arithmetic of loads now read from registers
    return fn


def merge_index_arithmetic(block: Block) -> None:
    """Replaces each index op of ``block`` (`INDEX_OPS`: pure, though xDSL's CSE does not
    merge integer divisions) that repeats an earlier one on the same operands by that one."""
    seen: dict[tuple[object, ...], Operation] = {}
    for op in list(block.ops):
        if op.name not in INDEX_OPS:
            continue
        key = (op.name, *op.operands, *sorted((k, str(v)) for k, v in op.properties.items()))
        earlier = seen.setdefault(key, op)
        if earlier is not op:
            for old, new in zip(op.results, earlier.results, strict=True):
                old.replace_all_uses_with(new)
            block.erase_op(op)
