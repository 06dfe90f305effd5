"""Builds the ``kernel.func`` of a generated kernel from a loop description (used by
``lower-to-kernels``; not a pass).

Every generated kernel is one shape of loop: each work-item owns one point of a *parallel*
iteration space (``vector_width`` consecutive points of its innermost dimension when vectorised);
it loads one scalar per ``Access`` from its buffers, runs a scalar body (the body of a
``fused.elementwise``, or the scalar ops of an ``nn`` op), and either stores the value, or
folds it over a *reduced* iteration space first. An ``Access`` says how a buffer is indexed from
the iteration point: each buffer dimension is an iteration dimension plus an offset, or a
constant. Broadcasting (a size-1 or missing dimension reads index 0: stride 0), transposes,
slices, concatenation and matrix products are all accesses of that form.

The kernel built for ``out[i, j] = a[i, j] + b[j]`` over ``4x8``::

    kernel.func @k(%a: memref<4x8xf32>, %b: memref<8xf32>, %out: memref<4x8xf32>) {
      %gid = kernel.global_id 0
      %n = arith.constant 32 : index
      %in = arith.cmpi ult, %gid, %n : index
      scf.if %in {
        %c8 = arith.constant 8 : index
        %j = arith.remui %gid, %c8 : index
        %i = arith.divui %gid, %c8 : index
        %x = memref.load %a[%i, %j] : memref<4x8xf32>
        %y = memref.load %b[%j] : memref<8xf32>
        %s = arith.addf %x, %y : f32
        memref.store %s, %out[%i, %j] : memref<4x8xf32>
      }
      kernel.return
    }

A reduction takes one of two shapes, by device. On a GPU a long reduction runs a work-group
per output (``build_group_reduction``): the work-items stride over the reduced elements, so that
neighbours read neighbours, and meet in a tree in local memory; with ``split`` several
work-groups share an output and write partial results for a second kernel. On a CPU a
work-item folds a contiguous run of the reduced elements (all of them, or with ``split`` one of
``split`` chunks, whose partial results a second kernel combines), ``reduce_width`` of them at a
time in a ``vector<W>`` accumulator when the innermost reduced dimension is contiguous in every
buffer that it indexes; the lanes are folded after the loop and a scalar loop takes the
remainder::

    %acc8 = scf.for %r = %start to %vstop step 8 iter_args(%a = splat(init)) {   // W = 8
      %x = vector.load %in0[.., %r] : vector<8xf32>      // the body on vector<8xf32>
      %n = arith.addf %a, %x : vector<8xf32>
    }
    %acc = fold(vector.extract %acc8[0], ..., [7])       // then the remainder, one at a time

With ``vector_width = 4`` the innermost index steps by 4, loads along it are ``vector.load``s of
``vector<4xf32>``, other loads are scalars broadcast with ``vector.broadcast``, and the body's
ops compute on vectors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    VectorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from fusec.dialects import fused, kernel
from fusec.dialects.common import FLOAT_TYPES, HALF_TYPES

INDEX = IndexType()

IndexTerm = tuple[int | None, int]
"""One buffer index: ``(d, c)`` is iteration dimension ``d`` plus ``c``; ``(None, c)`` is ``c``."""


@dataclass(frozen=True)
class Access:
    """How buffer argument ``arg`` is indexed from an iteration point: one term per dimension.

    With ``clamp`` (a size per buffer dimension, 0 for none) those indices are clamped into
    ``[0, size)``: a ``fused.elementwise`` reading a concat's piece through an index map reads
    out of bounds where the other piece is selected, and drops what it read there."""

    arg: int
    index: tuple[IndexTerm, ...]
    clamp: tuple[int, ...] = ()

    def uses(self, dim: int) -> list[int]:
        """The buffer dimensions indexed by iteration dimension ``dim``."""
        return [i for i, (d, _) in enumerate(self.index) if d == dim]


def broadcast_access(arg: int, shape: Sequence[int], out_shape: Sequence[int]) -> Access:
    """Reading a buffer of ``shape`` broadcast (numpy rules) to ``out_shape``: missing leading
    dimensions are dropped and a size-1 dimension always reads index 0."""
    lead = len(out_shape) - len(shape)
    terms: list[IndexTerm] = []
    for i, size in enumerate(shape):
        dim = lead + i
        terms.append((None, 0) if size == 1 and out_shape[dim] != 1 else (dim, 0))
    return Access(arg, tuple(terms))


def identity_access(arg: int, rank: int) -> Access:
    return Access(arg, tuple((d, 0) for d in range(rank)))


# Reduction kinds: the initial value and how two partial results combine.
REDUCE_INIT: dict[str, tuple[float, float]] = {
    # kind -> (float init, int init)
    "sum": (0.0, 0),
    "mean": (0.0, 0),
    "max": (-math.inf, -(2**31)),
    "min": (math.inf, 2**31 - 1),
}
REDUCE_COMBINE: dict[str, tuple[type[Operation], type[Operation]]] = {
    "sum": (arith.AddfOp, arith.AddiOp),
    "mean": (arith.AddfOp, arith.AddiOp),
    "max": (arith.MaximumfOp, arith.MaxSIOp),
    "min": (arith.MinimumfOp, arith.MinSIOp),
}

# Body ops that compute lane-wise on vectors exactly as on scalars.
VECTOR_SAFE: tuple[str, ...] = (
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.divf",
    "arith.negf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.constant",
    "math.exp",
    "math.log",
    "math.tanh",
    "math.erf",
    "math.sin",
    "math.cos",
    "math.sqrt",
    "math.rsqrt",
    "math.absf",
    "math.powf",
)

VECTOR_FLOAT_TYPES: tuple[Attribute, ...] = FLOAT_TYPES
"""The element types a kernel may run in vectors of (`choose_vector_width`,
`choose_reduce_width`): the 16-bit ones are computed on as float vectors, as their scalars
are as floats."""


@dataclass
class LoopKernel:
    """A generated kernel: see the module docstring.

    Iteration dimensions ``0 .. len(parallel) - 1`` are parallel, the following ones (``reduced``)
    are folded with ``reduce_kind``. ``body`` has one argument per load and ends in a terminator
    whose one operand is the value; ``store`` may index parallel dimensions only.
    """

    name: str
    arg_types: list[MemRefType]
    parallel: tuple[int, ...]
    loads: list[Access]
    body: Block
    store: Access
    reduced: tuple[int, ...] = ()
    reduce_kind: str | None = None
    vector_width: int = 1
    local_size: int = 64
    group_reduce: bool = False
    """Reduce each output with a whole work-group (``local_size`` work-items striding over the
    reduced elements, then a tree in local memory) instead of one work-item."""
    split: int = 1
    """With ``group_reduce``: work-groups per output. The last parallel dimension (of size
    ``split``) then numbers the part of the reduced elements a work-group folds, and the store
    writes per-part partial results (a second kernel combines them)."""
    mean_count: int | None = None
    """The divisor of a mean, when it is not the number of reduced elements (the second kernel
    of a split reduction divides by the first kernel's count)."""
    reduce_width: int = 1
    """Without ``group_reduce``: reduced elements folded at once, as ``vector<reduce_width>``
    loads along the innermost reduced dimension (see `choose_reduce_width`)."""
    extra_stores: tuple[Access, ...] = ()
    """Where the body's further yielded values go, in order (a multi-result
    ``fused.elementwise`` stores its intermediates in the same kernel); no reduction."""
    aligned: bool = False
    """Whether its vector loads and stores (16-bit, `kernel.ALIGNED_LANES` lanes) are marked
    `kernel.ALIGNED`: `choose_vector_width` found every one 16-byte aligned (`aligned_by`)."""
    @property
    def work_items(self) -> int:
        return max(1, math.prod(self.parallel) // self.vector_width)

    def launch_sizes(self) -> tuple[list[int], list[int]]:
        if self.group_reduce:
            return [self.work_items * self.local_size], [self.local_size]
        local = min(self.local_size, _round_up(self.work_items, 8))
        return [_round_up(self.work_items, local)], [local]


def _round_up(a: int, b: int) -> int:
    return -(-a // b) * b




def aligned_by(k: LoopKernel, lanes: int) -> bool:
    """Whether each run of `lanes` points along `k`'s innermost parallel dimension starts at a
    multiple of `lanes` elements in every buffer an access reads or writes along it: that
    dimension's extent, the buffer's last (its rows' stride: buffers are row-major) and the
    access's constant offset there all multiples of `lanes`. A buffer's first element is
    aligned at least as OpenCL aligns a buffer (fusec's CUDA launches copy a call input that
    is not: `fusec.runtime.cuda_launch`)."""
    if not k.parallel or k.parallel[-1] % lanes:
        return False
    inner = len(k.parallel) - 1
    for access in [*k.loads, k.store, *k.extra_stores]:
        if not access.uses(inner):
            continue
        if k.arg_types[access.arg].get_shape()[-1] % lanes or access.index[-1][1] % lanes:
            return False
    return True


def choose_vector_width(k: LoopKernel, width: int = 4, half: bool = False,
                        aligned_half: bool = False) -> int:
    """``width`` (the lanes of a float32 vector; twice as many, at most 16, of a 16-bit type:
    as many bytes an access) halved, not below 4, until it divides the innermost extent, when
    the loop can run that many lanes of its innermost parallel dimension per work-item: no
    reduction, an innermost extent it divides, every access indexing that dimension (if at
    all) in its last position only, all buffers and body values of one float type (``f32``,
    or with `half` ``f16`` or ``bf16``, which are loaded into float vectors and stored
    rounded: `half.vload`), and body ops that work lane-wise on vectors. Otherwise 1.

    The lowering passes `half` for a CPU only: there a 2048 x 2048 f16 multiply-add took
    0.52 ms in vectors against 11.1 scalar (bf16 0.48-0.53 against 5.3-6.0; Intel's CPU
    OpenCL on 2 Zen 4 cores), while on the H200 (session 23) a 4096 x 4096 one took 0.063 ms
    in vectors of 8 against 0.052 scalar (bf16 0.061-0.065 against 0.053-0.054): NVIDIA's
    OpenCL splits ``vload_half8`` into 8 two-byte loads (`fusec.bench.probe_half_moves`, session
    26), where one ``uint4`` load would do, 16-byte aligned. With `aligned_half` (a GPU's
    lowering under the knob ``gpu_half_vectors``) a 16-bit kernel whose accesses are so
    aligned (`aligned_by`) takes `kernel.ALIGNED_LANES`, read and written as ``uint4``s
    (`LoopKernel.aligned`)."""
    if k.reduced or not k.parallel:
        return 1
    if is_half_kernel(k):
        if half:
            width = min(16, 2 * width)
        elif aligned_half and aligned_by(k, kernel.ALIGNED_LANES):
            width = kernel.ALIGNED_LANES
        else:
            return 1
    while width > 4 and k.parallel[-1] % width:
        width //= 2
    if k.parallel[-1] % width:
        return 1
    inner = len(k.parallel) - 1
    for access in [*k.loads, k.store, *k.extra_stores]:
        uses = access.uses(inner)
        if uses and uses != [len(access.index) - 1] or any(access.clamp):
            return 1
    return width if _vector_safe(k, VECTOR_FLOAT_TYPES) else 1


def is_half_kernel(k: LoopKernel) -> bool:
    """Whether every buffer of `k` holds a 16-bit float type."""
    return bool(k.arg_types) and all(t.element_type in HALF_TYPES for t in k.arg_types)


def choose_reduce_width(k: LoopKernel, width: int = 16) -> int:
    """How many consecutive elements of the innermost reduced dimension a work-item folds at
    once: ``width``, halved until runs of that many never cross into the next index of an
    outer reduced dimension; 1 unless that leaves at least two vectors' worth of reduced
    elements, every access indexes that dimension (if at all) in its last position only, all
    buffers and body values are of one float type (16-bit ones folded as float vectors: only
    a CPU's lowering asks, where f16's sum of 2048 x 2048 took 0.22-0.27 ms folded so against
    5.4-6.4 element by element), and the body ops work lane-wise on vectors."""
    count = math.prod(k.reduced)
    if not k.reduced:
        return 1
    while width > 1 and math.prod(k.reduced[:-1]) != 1 and k.reduced[-1] % width:
        width //= 2
    if width <= 1 or count < 2 * width:
        return 1
    inner = _outer_rank(k) + len(k.reduced) - 1
    for access in k.loads:
        uses = access.uses(inner)
        if uses and uses != [len(access.index) - 1]:
            return 1
    if not _vector_safe(k, VECTOR_FLOAT_TYPES):
        return 1
    return width


def _outer_rank(k: LoopKernel) -> int:
    """The number of output dimensions the loads see (a split's part number is not one)."""
    return len(k.parallel) - (1 if k.split > 1 else 0)


def _vector_safe(k: LoopKernel, types: tuple[Attribute, ...] = (f32,)) -> bool:
    """Whether every buffer and every body value is of one of `types` (the same one) and
    every body op works lane-wise on vectors of it."""
    kinds = {t.element_type for t in k.arg_types}
    if len(kinds) != 1 or not kinds <= set(types):
        return False
    for op in k.body.ops:
        if op is k.body.last_op:
            continue
        if op.name not in VECTOR_SAFE or any(r.type not in kinds for r in op.results):
            return False
    return True


class KernelBuilder:
    """Appends ops to one block at a time; small helpers for index arithmetic."""

    def __init__(self, block: Block):
        self.block = block

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def index(self, value: int) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(value, INDEX)))

    def scalar(self, value: float | int, t: Attribute) -> SSAValue:
        if isinstance(t, IntegerType):
            return self.add(arith.ConstantOp(IntegerAttr(int(value), t)))
        return self.add(arith.ConstantOp(FloatAttr(value, t)))  # type: ignore[arg-type]

    def delinearize(self, linear: SSAValue, shape: Sequence[int]) -> list[SSAValue]:
        """Row-major indices of ``linear`` in ``shape`` (size-1 dimensions read 0)."""
        indices: list[SSAValue | None] = [None] * len(shape)
        rest = linear
        live = [d for d, size in enumerate(shape) if size != 1]
        for pos, d in enumerate(reversed(live)):
            outermost = pos == len(live) - 1
            if outermost:
                indices[d] = rest
                break
            size = self.index(shape[d])
            indices[d] = self.add(arith.RemUIOp(rest, size))
            rest = self.add(arith.DivUIOp(rest, size))
        zero: SSAValue | None = None
        for d in range(len(shape)):
            if indices[d] is None:
                zero = zero or self.index(0)
                indices[d] = zero
        return indices  # type: ignore[return-value]

    def subscript(self, access: Access, point: Sequence[SSAValue]) -> list[SSAValue]:
        out: list[SSAValue] = []
        for i, (dim, offset) in enumerate(access.index):
            bound = access.clamp[i] if access.clamp else 0
            if dim is None:
                out.append(self.index(min(max(offset, 0), bound - 1) if bound else offset))
                continue
            at = point[dim]
            if offset:
                at = self.add(arith.AddiOp(at, self.index(offset)))
            if bound:
                top = self.index(bound - 1)
                at = self.add(arith.MaxSIOp(self.add(arith.MinSIOp(at, top)), self.index(0)))
            out.append(at)
        return out


def clone_body(
    b: KernelBuilder, body: Block, args: Sequence[SSAValue], lanes: int
) -> SSAValue:
    """Appends the ops of ``body`` with its arguments bound to ``args``; returns the value its
    terminator yields. With ``lanes > 1`` every value becomes a ``vector<lanes x T>`` and scalar
    constants are broadcast."""
    return clone_body_values(b, body, args, lanes)[0]


def clone_body_values(
    b: KernelBuilder,
    body: Block,
    args: Sequence[SSAValue],
    lanes: int,
    point: Sequence[SSAValue] = (),
) -> list[SSAValue]:
    """`clone_body`, returning every value the terminator yields; a ``fused.index`` is the
    iteration ``point``'s index along its dimension (never vectorised: see
    `choose_vector_width`)."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, args, strict=False))
    for op in body.ops:
        if op is body.last_op:
            return [mapping.get(v, v) for v in op.operands]
        if isinstance(op, fused.IndexOp):
            assert lanes == 1 and point, "fused.index in a scalar elementwise loop"
            mapping[op.result] = point[op.dim.value.data]
            continue
        operands = [mapping.get(v, v) for v in op.operands]
        if lanes == 1:
            new = op.clone()
            for i, v in enumerate(operands):
                new.operands[i] = v
            b.add(new)
        elif isinstance(op, arith.ConstantOp):
            scalar = b.add(op.clone())
            new = vector.BroadcastOp(scalar, VectorType(scalar.type, [lanes]))
            b.add(new)
        else:
            types = [VectorType(r.type, [lanes]) for r in op.results]
            new = type(op).create(
                operands=operands,
                result_types=types,
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            b.add(new)
        for old, res in zip(op.results, new.results, strict=False):
            mapping[old] = res
    raise ValueError("body has no terminator")


def build_kernel(k: LoopKernel) -> kernel.FuncOp:
    """The ``kernel.func`` computing ``k``."""
    if k.group_reduce:
        return build_group_reduction(k)
    fn = kernel.FuncOp(k.name, k.arg_types)
    args = fn.args
    entry = KernelBuilder(fn.body.block)
    gid = entry.add(kernel.GlobalIdOp(0))
    n = entry.index(k.work_items)
    inside = entry.add(arith.CmpiOp(gid, n, "ult"))
    then = Block()
    b = KernelBuilder(then)
    lanes = k.vector_width
    shape = list(k.parallel)
    if lanes > 1:
        shape[-1] //= lanes
    point = b.delinearize(gid, shape)
    if lanes > 1:
        point[-1] = b.add(arith.MuliOp(point[-1], b.index(lanes)))
    if k.reduced:
        assert not k.extra_stores, "a reduction stores one value"
        values = [_work_item_reduction(b, k, args, point)]
    else:
        values = clone_body_values(b, k.body, _loads(b, k, args, point, lanes,
                                                     aligned=k.aligned), lanes, point)
    for store, value in zip((k.store, *k.extra_stores), values, strict=True):
        store_at = b.subscript(store, point)
        if lanes > 1:
            stored = vector.StoreOp(value, args[store.arg], store_at)
            if k.aligned:
                stored.attributes[kernel.ALIGNED] = UnitAttr()
            b.add(stored)
        else:
            out_type = k.arg_types[store.arg]
            assert value.type == out_type.element_type, (value.type, out_type)
            b.add(memref.StoreOp.get(value, args[store.arg], store_at))
    b.add(scf.YieldOp())
    entry.add(scf.IfOp(inside, [], Region(then)))
    entry.add(kernel.ReturnOp())
    return fn


def _loads(
    b: KernelBuilder,
    k: LoopKernel,
    args: Sequence[SSAValue],
    point: Sequence[SSAValue],
    lanes: int,
    inner: int | None = None,
    aligned: bool = False,
) -> list[SSAValue]:
    """One value per load at ``point``; with ``lanes > 1``, ``lanes`` consecutive points along
    iteration dimension ``inner`` (default: the innermost parallel one), each vector load
    marked `kernel.ALIGNED` with `aligned`."""
    values: list[SSAValue] = []
    if inner is None:
        inner = len(k.parallel) - 1
    for access in k.loads:
        at = b.subscript(access, point)
        buf = args[access.arg]
        mtype = k.arg_types[access.arg]
        if lanes > 1 and access.uses(inner):
            load = vector.LoadOp(buf, at, VectorType(mtype.element_type, [lanes]))
            if aligned:
                load.attributes[kernel.ALIGNED] = UnitAttr()
            values.append(b.add(load))
            continue
        value = b.add(memref.LoadOp.get(buf, at))
        if lanes > 1:
            value = b.add(vector.BroadcastOp(value, VectorType(value.type, [lanes])))
        values.append(value)
    return values


def _work_item_reduction(
    b: KernelBuilder, k: LoopKernel, args: Sequence[SSAValue], point: Sequence[SSAValue]
) -> SSAValue:
    """This work-item's fold: every reduced element, or with ``split`` the contiguous chunk
    numbered by the last parallel index (chunks are whole vectors, so that a vector never
    straddles two rows of the reduced elements)."""
    if k.split == 1:
        return _reduce_loop(b, k, args, point)
    count = math.prod(k.reduced)
    chunk = _round_up(-(-count // k.split), k.reduce_width)
    start = b.add(arith.MuliOp(point[-1], b.index(chunk)))
    stop = b.add(arith.MinUIOp(b.add(arith.AddiOp(start, b.index(chunk))), b.index(count)))
    return _reduce_loop(b, k, args, point[:-1], start=start, stop=stop)


def _reduce_loop(
    b: KernelBuilder,
    k: LoopKernel,
    args: Sequence[SSAValue],
    point: Sequence[SSAValue],
    start: SSAValue | None = None,
    stop: SSAValue | None = None,
    step: int = 1,
    scale: bool = True,
) -> SSAValue:
    """``acc = fold(body(point, r) for r in reduced[start:stop:step])``, then the mean's
    scale. With ``reduce_width`` W > 1 (and step 1), the whole vectors of W elements are folded
    first in a vector accumulator, then its lanes, then the remainder one at a time."""
    kind = k.reduce_kind or "sum"
    elem = k.arg_types[k.store.arg].element_type
    is_int = isinstance(elem, IntegerType)
    combine = REDUCE_COMBINE[kind][1 if is_int else 0]
    init = b.scalar(REDUCE_INIT[kind][1 if is_int else 0], elem)
    count = math.prod(k.reduced)
    lower = start if start is not None else b.index(0)
    upper = stop if stop is not None else b.index(count)
    width = k.reduce_width
    if width > 1:
        assert step == 1, "a vectorised reduction folds consecutive elements"
        whole = count // width * width
        if whole == count:
            vector_stop = upper
        elif stop is None:
            vector_stop = b.index(whole)
        else:
            vector_stop = b.add(arith.MinUIOp(stop, b.index(whole)))
        splat = b.add(vector.BroadcastOp(init, VectorType(elem, [width])))
        folded = _fold_loop(b, k, args, point, lower, vector_stop, width, splat)
        init = _fold_lanes(b, combine, folded, width)
        if whole == count:
            return mean_scale(b, k, init) if scale else init
        lower = vector_stop if start is None else b.add(arith.MaxSIOp(vector_stop, start))
    result = _fold_loop(b, k, args, point, lower, upper, step, init)
    return mean_scale(b, k, result) if scale else result


def _fold_loop(
    b: KernelBuilder,
    k: LoopKernel,
    args: Sequence[SSAValue],
    point: Sequence[SSAValue],
    lower: SSAValue,
    upper: SSAValue,
    step: int,
    init: SSAValue,
) -> SSAValue:
    """``scf.for r = lower to upper step step`` folding ``body(point, r)`` into ``init``; when
    ``init`` is a vector, its lanes take ``r .. r + lanes - 1`` along the innermost reduced
    dimension."""
    t = init.type
    lanes = t.get_shape()[0] if isinstance(t, VectorType) else 1
    elem = t.element_type if isinstance(t, VectorType) else t
    combine = REDUCE_COMBINE[k.reduce_kind or "sum"][1 if isinstance(elem, IntegerType) else 0]
    loop_body = Block(arg_types=[INDEX, t])
    r, acc = loop_body.args
    inner = KernelBuilder(loop_body)
    full_point = [*point, *inner.delinearize(r, k.reduced)]
    loads = _loads(inner, k, args, full_point, lanes, inner=len(full_point) - 1)
    value = clone_body(inner, k.body, loads, lanes)
    inner.add(scf.YieldOp(inner.add(combine(acc, value))))
    return b.add(scf.ForOp(lower, upper, b.index(step), [init], Region(loop_body)))


def _fold_lanes(
    b: KernelBuilder, combine: type[Operation], folded: SSAValue, lanes: int
) -> SSAValue:
    """The lanes of ``folded`` combined pairwise: (0 with lanes/2, ...), halving."""
    elem = folded.type.element_type  # type: ignore[attr-defined]
    values = [b.add(vector.ExtractOp(folded, [lane], elem)) for lane in range(lanes)]
    while len(values) > 1:
        half = len(values) // 2
        paired = [b.add(combine(values[i], values[i + half])) for i in range(half)]
        values = paired + values[2 * half:]
    return values[0]


def mean_scale(b: KernelBuilder, k: LoopKernel, total: SSAValue) -> SSAValue:
    """``total / count`` for a mean, else ``total``."""
    if k.reduce_kind != "mean":
        return total
    count = k.mean_count or math.prod(k.reduced)
    if isinstance(total.type, IntegerType):
        return b.add(arith.DivSIOp(total, b.scalar(count, total.type)))
    return b.add(arith.MulfOp(total, b.scalar(1.0 / count, total.type)))


LOCAL_MEMORY = IntegerAttr(3, i64)
"""The memory space of ``__local`` (work-group) buffers."""


def build_group_reduction(k: LoopKernel) -> kernel.FuncOp:
    """One work-group per output: each work-item folds every ``local_size``-th reduced element,
    the partial results meet in local memory, and a tree halves them down to work-item 0::

        %lid = kernel.local_id 0
        %acc = scf.for %r = %lid to %R step %L iter_args(...) { body; combine }
        memref.store %acc, %scratch[%lid]        // %scratch: memref<L x T, 3 : i64>
        kernel.barrier
        scf.if %lid < L/2 { scratch[lid] = combine(scratch[lid], scratch[lid + L/2]) }
        ...                                      // L/4, ..., 1
        scf.if %lid == 0 { out[point] = scratch[0] (* 1/R for a mean) }
    """
    size = k.local_size
    assert size & (size - 1) == 0, "the work-group size of a group reduction is a power of 2"
    fn = kernel.FuncOp(k.name, k.arg_types)
    args = fn.args
    b = KernelBuilder(fn.body.block)
    elem = k.arg_types[k.store.arg].element_type
    is_int = isinstance(elem, IntegerType)
    combine = REDUCE_COMBINE[k.reduce_kind or "sum"][1 if is_int else 0]
    scratch = b.add(memref.AllocaOp.get(elem, shape=[size], memory_space=LOCAL_MEMORY))
    lid = b.add(kernel.LocalIdOp(0))
    group = b.add(kernel.GroupIdOp(0))
    point = b.delinearize(group, k.parallel)
    start, stop, outer = lid, None, point
    if k.split > 1:  # this work-group folds the chunk [part * chunk, (part + 1) * chunk)
        count = math.prod(k.reduced)
        chunk = _round_up(-(-count // k.split), size)
        first = b.add(arith.MuliOp(point[-1], b.index(chunk)))
        start = b.add(arith.AddiOp(first, lid))
        stop = b.add(arith.MinUIOp(b.add(arith.AddiOp(first, b.index(chunk))), b.index(count)))
        outer = point[:-1]  # the loads index the outputs' dimensions and the reduced ones
    partial = _reduce_loop(b, k, args, outer, start=start, stop=stop, step=size, scale=False)
    b.add(memref.StoreOp.get(partial, scratch, [lid]))
    half = size // 2
    while half >= 1:
        b.add(kernel.BarrierOp())
        active = b.add(arith.CmpiOp(lid, b.index(half), "ult"))
        step = Block()
        inner = KernelBuilder(step)
        other = inner.add(arith.AddiOp(lid, inner.index(half)))
        mine = inner.add(memref.LoadOp.get(scratch, [lid]))
        theirs = inner.add(memref.LoadOp.get(scratch, [other]))
        inner.add(memref.StoreOp.get(inner.add(combine(mine, theirs)), scratch, [lid]))
        inner.add(scf.YieldOp())
        b.add(scf.IfOp(active, [], Region(step)))
        half //= 2
    first = b.add(arith.CmpiOp(lid, b.index(0), "eq"))
    final = Block()
    last = KernelBuilder(final)
    total = mean_scale(last, k, last.add(memref.LoadOp.get(scratch, [last.index(0)])))
    last.add(memref.StoreOp.get(total, args[k.store.arg], last.subscript(k.store, point)))
    last.add(scf.YieldOp())
    b.add(scf.IfOp(first, [], Region(final)))
    b.add(kernel.ReturnOp())
    return fn
