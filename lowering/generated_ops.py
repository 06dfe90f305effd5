"""``lower-to-kernels``: the ops that become generated loop kernels (``kernel_builder``).

One function per op family; each takes the `FunctionLowering` and the op, and returns the
buffers holding the op's results. Scalar bodies come from the op itself (``fused.elementwise``,
``fused.reduce``) or from the ``nn`` -> scalar tables of ``scalar_ops``; data movement
(transpose, narrow, concat) is an identity body with the right accesses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from fusec.dialects import fused, kernel, nn
from fusec.dialects.common import (
    bool_attr,
    bool_prop,
    broadcast_shapes,
    element_of,
    int_prop,
    ints_prop,
    shape_of,
)
from fusec.dialects.index_maps import clamp_bounds
from fusec.dialects.scalar_ops import ELEMENTWISE_OPS, build_scalar
from fusec.lowering.kernel_builder import Access, broadcast_access, identity_access
from fusec.lowering.lower_to_kernels import FunctionLowering, LoweringError, buffer_type

Lowering = Callable[[FunctionLowering, Operation], list[SSAValue]]




def identity_body(t: Attribute) -> Block:
    """``^bb0(%x): yield %x``."""
    block = Block(arg_types=[t])
    block.add_op(fused.YieldOp(block.args[0]))
    return block


def map_kernel(
    lo: FunctionLowering,
    kind: str,
    inputs: Sequence[SSAValue],
    body: Block,
    result: SSAValue,
) -> list[SSAValue]:
    """``result[i] = body(inputs broadcast to i)``: one generated elementwise kernel."""
    out_shape = shape_of(result)
    out = lo.alloc(result.type)
    buffers = [lo.buffer(v) for v in inputs]
    loads = [broadcast_access(i, shape_of(v), out_shape) for i, v in enumerate(inputs)]
    store = identity_access(len(buffers), len(out_shape))
    lo.launch(kind, [*buffers, out], out_shape, loads, body, store)
    return [out]


# --- elementwise ---------------------------------------------------------------------------------


def lower_nn_elementwise(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """A single-op elementwise kernel whose body is the op's scalar IR."""
    body = Block(arg_types=[element_of(v) for v in op.operands])
    ops, value = build_scalar(op, body.args)
    body.add_ops([*ops, fused.YieldOp(value)])
    return map_kernel(lo, op.name.removeprefix("nn."), op.operands, body, op.results[0])


def mapped_kernel(lo: FunctionLowering, op: fused.ElementwiseOp) -> list[SSAValue]:
    """A region with index maps: each input read through its map (one buffer per distinct
    tensor, however many maps read it), clamped where a map may leave the input's bounds."""
    out_shape = shape_of(op.result)
    tensors = list(dict.fromkeys(op.inputs))
    position = {v: i for i, v in enumerate(tensors)}
    loads = []
    for v, m in zip(op.inputs, op.input_maps(), strict=True):
        loads.append(Access(position[v], m, clamp_bounds(m, shape_of(v), out_shape)))
    out = lo.alloc(op.result.type)
    buffers = [*(lo.buffer(v) for v in tensors), out]
    store = identity_access(len(tensors), len(out_shape))
    lo.launch("elementwise", buffers, out_shape, loads, op.body.block, store)
    return [out]


def lower_elementwise(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """One kernel; a region with several results stores each of them (``extra_stores``)."""
    assert isinstance(op, fused.ElementwiseOp)
    if op.indexing_maps is not None:
        assert len(op.results) == 1, "fuse-elementwise makes mapped regions of one result"
        return mapped_kernel(lo, op)
    if len(op.results) == 1:
        return map_kernel(lo, "elementwise", op.inputs, op.body.block, op.result)
    out_shape = shape_of(op.result)
    outs = [lo.alloc(r.type) for r in op.results]
    buffers = [*(lo.buffer(v) for v in op.inputs), *outs]
    loads = [broadcast_access(i, shape_of(v), out_shape) for i, v in enumerate(op.inputs)]
    first = len(op.inputs)
    stores = [identity_access(first + i, len(out_shape)) for i in range(len(outs))]
    names = [*(f"in{i}" for i in range(len(op.inputs))), *(f"out{i}" for i in range(len(outs)))]
    lo.launch("elementwise", buffers, out_shape, loads, op.body.block, stores[0],
              arg_names=names, extra_stores=stores[1:])
    return outs


# --- reductions ----------------------------------------------------------------------------------


def reduce_kernel(
    lo: FunctionLowering,
    kind: str,
    inputs: Sequence[SSAValue],
    body: Block,
    axes: Sequence[int],
    keepdims: bool,
    result: SSAValue,
) -> list[SSAValue]:
    """``result = kind over axes of body(inputs broadcast)``.

    Iteration dimensions: the kept dimensions of the broadcast shape first (parallel), then the
    reduced ones."""
    shape = broadcast_shapes(*(shape_of(v) for v in inputs))
    assert shape is not None
    kept = [d for d in range(len(shape)) if d not in axes]
    order = [*kept, *axes]
    position = {d: i for i, d in enumerate(order)}

    def remap(access: Access) -> Access:
        terms = tuple((None if d is None else position[d], c) for d, c in access.index)
        return Access(access.arg, terms)

    loads = [remap(broadcast_access(i, shape_of(v), shape)) for i, v in enumerate(inputs)]
    if keepdims:
        terms = tuple((None, 0) if d in axes else (position[d], 0) for d in range(len(shape)))
    else:
        terms = tuple((position[d], 0) for d in kept)
    out = lo.alloc(result.type)
    buffers = [*(lo.buffer(v) for v in inputs), out]
    store = Access(len(inputs), terms)
    lo.launch(
        f"reduce_{kind}",
        buffers,
        [shape[d] for d in kept],
        loads,
        body,
        store,
        reduced=[shape[d] for d in axes],
        reduce_kind=kind,
    )
    return [out]


def lower_fused_reduce(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.ReduceOp)
    kind = op.kind.data
    return reduce_kernel(
        lo, kind, op.inputs, op.body.block, op.reduced_axes(), bool_prop(op, "keepdims"), op.result
    )


def lower_nn_reduce(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, nn.ReduceOp)
    rank = len(shape_of(op.input))
    axes = tuple(a % rank for a in ints_prop(op, "axes"))
    if op.KIND == "mean" and isinstance(element_of(op.input), IntegerType):
        raise LoweringError("the mean of integers is not supported")
    return reduce_kernel(
        lo,
        op.KIND,
        [op.input],
        identity_body(element_of(op.input)),
        axes,
        bool_prop(op, "keepdims"),
        op.result,
    )


# --- data movement -------------------------------------------------------------------------------


def copy_kernel(
    lo: FunctionLowering,
    kind: str,
    source: SSAValue,
    out: SSAValue,
    parallel: Sequence[int],
    load: Access,
    store: Access,
) -> None:
    body = identity_body(element_of(source))
    lo.launch(kind, [lo.buffer(source), out], parallel, [load], body, store)


def lower_transpose(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """``out[i_0..i_n] = in[j]`` with ``j[perm[k]] = i_k``."""
    assert isinstance(op, nn.TransposeOp)
    return [transposed(lo, op.input, ints_prop(op, "perm"), op.result.type)]


def transposed(
    lo: FunctionLowering, value: SSAValue, perm: Sequence[int], result_type: Attribute
) -> SSAValue:
    out = lo.alloc(result_type)
    terms: list[tuple[int | None, int]] = [(None, 0)] * len(perm)
    for k, p in enumerate(perm):
        terms[p] = (k, 0)
    out_shape = [shape_of(value)[p] for p in perm]
    copy_kernel(lo, "transpose", value, out, out_shape, Access(0, tuple(terms)),
                identity_access(1, len(perm)))
    return out


def lower_narrow(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """``out[.., i, ..] = in[.., i + start, ..]`` along ``axis``."""
    assert isinstance(op, nn.NarrowOp)
    shape = shape_of(op.result)
    rank = len(shape)
    axis = int_prop(op, "axis") % rank
    start = int_prop(op, "start")

    def build() -> SSAValue:
        out = lo.alloc(op.result.type, op.result.name_hint)
        load = Access(0, tuple((d, start if d == axis else 0) for d in range(rank)))
        copy_kernel(lo, "narrow", op.input, out, shape, load, identity_access(1, rank))
        return out

    if read_in_place(op):
        lo.deferred[op.result] = build
        return [op.result]  # a placeholder: the readers use the input buffer with an offset
    return [build()]


def read_in_place(op: nn.NarrowOp) -> bool:
    """Every reader of this slice reads it in place with a stride (`nn.slice_read_in_place`:
    a slice of the last axis of a rank-3 tensor, operands an op declares in ``SLICE_READS``)."""
    return bool(op.result.uses) and all(
        nn.slice_read_in_place(op, use.operation, use.index) for use in op.result.uses)


def lower_concat(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """One copy kernel per input into its slice of the result."""
    assert isinstance(op, nn.ConcatOp)
    rank = len(shape_of(op.result))
    axis = int_prop(op, "axis") % rank
    out = lo.alloc(op.result.type)
    offset = 0
    for value in op.inputs:
        shape = shape_of(value)
        store = Access(1, tuple((d, offset if d == axis else 0) for d in range(rank)))
        copy_kernel(lo, "concat", value, out, shape, identity_access(0, rank), store)
        offset += shape[axis]
    return [out]


def lower_reshape(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, nn.ReshapeOp)
    view = lo.add(kernel.ViewOp(lo.buffer(op.input), buffer_type(op.result.type)))
    return [view.results[0]]


def lower_constant(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, nn.ConstantOp)
    return [lo.global_constant(op.value, buffer_type(op.result.type))]


# --- swiglu and integer matmul -------------------------------------------------------------------


def lower_swiglu(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """``out[.., j] = up[.., j] * silu(gate[.., j])`` with both halves read from ``cat``; the
    launch carries ``kernel.SWIGLU_LAUNCH``."""
    assert isinstance(op, fused.SwigluOp)
    shape = shape_of(op.result)
    rank = len(shape)
    half = shape[-1]
    up, gate = (half, 0) if bool_prop(op, "gate_first") else (0, half)
    cat = lo.buffer(op.cat)
    out = lo.alloc(op.result.type)

    def at(offset: int) -> Access:
        return Access(0, tuple((d, offset if d == rank - 1 else 0) for d in range(rank)))

    body = Block(arg_types=[element_of(op.cat)] * 2)
    silu_ops, activated = build_scalar(nn.SiluOp(probe(op.cat.type)), [body.args[1]])
    product = arith.MulfOp(body.args[0], activated)
    body.add_ops([*silu_ops, product, fused.YieldOp(product.result)])
    lo.launch("swiglu", [cat, out], shape, [at(up), at(gate)], body, identity_access(1, rank),
              arg_names=["cat", "out"])
    launch = lo.block.last_op
    if isinstance(launch, kernel.LaunchOp):  # what it computes, for the plan builder
        launch.attributes[kernel.SWIGLU_LAUNCH] = bool_attr(bool_prop(op, "gate_first"))
    return [out]


def probe(t: Attribute) -> SSAValue:
    """A detached value of type ``t``, to build an ``nn`` op that only serves as a table key."""
    return Block(arg_types=[t]).args[0]


def lower_int_matmul(lo: FunctionLowering, op: nn.MatmulOp) -> list[SSAValue]:
    """``out[.., m, n] = sum_k a[.., m, k] * b[(..,) k, n]`` as a generated reduction."""
    a_shape, b_shape, out_shape = shape_of(op.lhs), shape_of(op.rhs), shape_of(op.result)
    rank = len(out_shape)
    k_dim = rank  # the reduced iteration dimension follows the parallel ones
    lead = tuple((d, 0) for d in range(rank - 2))
    a = Access(0, (*lead, (rank - 2, 0), (k_dim, 0)))
    b_lead = lead if len(b_shape) == len(a_shape) else ()
    b = Access(1, (*b_lead, (k_dim, 0), (rank - 1, 0)))
    elem = element_of(op.lhs)
    body = Block(arg_types=[elem, elem])
    product = arith.MuliOp(body.args[0], body.args[1])
    body.add_ops([product, fused.YieldOp(product.result)])
    out = lo.alloc(op.result.type)
    buffers = [lo.buffer(op.lhs), lo.buffer(op.rhs), out]
    lo.launch("matmul", buffers, out_shape, [a, b], body, identity_access(2, rank),
              reduced=[a_shape[-1]], reduce_kind="sum")
    return [out]


GENERATED_LOWERINGS: dict[type[Operation], Lowering] = {
    **{cls: lower_nn_elementwise for cls in ELEMENTWISE_OPS},
    fused.ElementwiseOp: lower_elementwise,
    fused.ReduceOp: lower_fused_reduce,
    **{cls: lower_nn_reduce for cls in nn.REDUCE_OPS.values()},
    nn.TransposeOp: lower_transpose,
    nn.NarrowOp: lower_narrow,
    nn.ConcatOp: lower_concat,
    nn.ReshapeOp: lower_reshape,
    nn.ConstantOp: lower_constant,
    fused.SwigluOp: lower_swiglu,
}
