"""The C side of a ``row_reduce`` template: its body split into stage functions, and how each
input is read from a row.

A row body holds scalar ops and ``fused.reduce_value`` ops ``R_0 .. R_{n-1}`` (program order).
Stage ``j`` computes the operand of ``R_j`` from the inputs and ``R_0 .. R_{j-1}`` (SSA order
guarantees it needs no later one); the last stage computes the yielded value from the inputs
and every reduction. Each stage becomes one C function (``<kernel>_s<j>``) and, when every op
works lane-wise on f32 vectors, a ``float<width>`` twin (``<kernel>_s<j>_v``). Ops a stage
does not need are printed too and left to the OpenCL compiler to drop. The vector twins spell
``math.exp`` as `vector_exp_function` (a polynomial; the built-in is a library call on the CPU).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import BFloat16Type, Float16Type, MemRefType, VectorType, f32
from xdsl.ir import Attribute, Block, Operation, SSAValue

from fusec.codegen.emitter import emit_value_function
from fusec.codegen.kernels.common import vector_exp_function
from fusec.codegen.kernels.row_reduce import RowInput, RowStage
from fusec.dialects import fused, kernel
from fusec.dialects.common import str_prop
from fusec.lowering.kernel_builder import VECTOR_SAFE, KernelBuilder, clone_body


def stage_blocks(body: Block, keep: bool = True) -> list[tuple[Block, str | None]]:
    """One block per stage (arguments: the inputs, then the reductions so far; ending in
    ``kernel.yield``) with its reduction kind (None for the last). When `kept_value` gives a
    value (and ``keep``), the last block takes it as one more argument instead of computing
    it."""
    ops = [o for o in body.ops if o is not body.last_op]
    reductions = [o for o in ops if isinstance(o, fused.ReduceValueOp)]
    term = body.last_op
    assert term is not None
    kept = kept_value(body) if keep else None
    stages: list[tuple[Block, str | None]] = []
    for j in range(len(reductions) + 1):
        stop = reductions[j] if j < len(reductions) else None
        target = stop.value if stop is not None else term.operands[0]
        stages.append((_stage(body, ops, reductions[:j], stop, target,
                              kept if stop is None else None),
                       str_prop(stop, "kind") if stop is not None else None))
    return stages


def kept_value(body: Block) -> SSAValue | None:
    """The value the last reduction folds, when it is computed (not an argument or a
    constant) and the ops after that reduction use it again: the kernel then stores it while
    it reduces and reads it back (softmax's ``exp(x - max)`` is computed once)."""
    ops = [o for o in body.ops]
    reductions = [i for i, o in enumerate(ops) if isinstance(o, fused.ReduceValueOp)]
    if not reductions:
        return None
    last = ops[reductions[-1]]
    value = last.operands[0]
    owner = value.owner
    if not isinstance(owner, Operation) or isinstance(owner, arith.ConstantOp):
        return None
    if value.type != f32:
        return None
    later = ops[reductions[-1] + 1:]
    return value if any(value in o.operands for o in later) else None


def _stage(body: Block, ops: Sequence[Operation], before: Sequence[fused.ReduceValueOp],
           stop: Operation | None, target: SSAValue, kept: SSAValue | None = None) -> Block:
    types = [*(a.type for a in body.args), *(r.result.type for r in before)]
    block = Block(arg_types=[*types, *([kept.type] if kept is not None else [])])
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, block.args, strict=False))
    for r, arg in zip(before, block.args[len(body.args):], strict=False):
        mapping[r.result] = arg
    if kept is not None:
        mapping[kept] = block.args[-1]
    for op in ops:
        if op is stop:
            break
        if isinstance(op, fused.ReduceValueOp):
            continue
        new = op.clone()
        for i, v in enumerate(op.operands):
            new.operands[i] = mapping.get(v, v)
        block.add_op(new)
        for old, res in zip(op.results, new.results, strict=True):
            if old is not kept:
                mapping[old] = res
    block.add_op(kernel.YieldOp(mapping.get(target, target)))
    return block


HALF_FLOATS = (Float16Type(), BFloat16Type())


def float_view(block: Block, out: Attribute | None = None) -> Block:
    """``block`` as the vector stages see it: f16 and bf16 arguments are floats (the template
    loads them so), so an ``arith.extf`` of one to f32 is dropped; and when ``block`` yields an
    ``arith.truncf`` to ``out`` (a 16-bit type), that rounding is left to the store, so the
    view yields the float before it. Other ops are copied unchanged."""
    view = Block(arg_types=[f32 if t in HALF_FLOATS else t for t in (a.type for a in block.args)])
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, view.args, strict=True))
    term = block.last_op
    assert term is not None
    for op in block.ops:
        operands = [mapping.get(v, v) for v in op.operands]
        dropped = (
            isinstance(op, arith.ExtFOp) and op.operands[0].type in HALF_FLOATS
            and op.results[0].type == f32
        ) or (
            isinstance(op, arith.TruncFOp) and out in HALF_FLOATS and op.results[0].type == out
            and op.results[0] is term.operands[0] and op.operands[0].type == f32
            and op.results[0].has_one_use()
        )
        if dropped:
            mapping[op.results[0]] = operands[0]
            continue
        new = op.clone()
        for i, v in enumerate(operands):
            new.operands[i] = v
        view.add_op(new)
        for old, res in zip(op.results, new.results, strict=True):
            mapping[old] = res
    return view


def vector_safe(block: Block) -> bool:
    """Every value is f32 and every op works lane-wise on vectors."""
    if any(a.type != f32 for a in block.args):
        return False
    for op in block.ops:
        if op is block.last_op:
            return all(v.type == f32 for v in op.operands)
        if op.name not in VECTOR_SAFE or any(r.type != f32 for r in op.results):
            return False
    return True


def vector_twin(block: Block, width: int) -> Block:
    """``block`` on ``vector<width x f32>`` values."""
    twin = Block(arg_types=[VectorType(f32, [width])] * len(block.args))
    builder = KernelBuilder(twin)
    value = clone_body(builder, block, twin.args, width)
    if value.owner is not None and value not in _values_of(twin):
        # A constant (or an argument) of the scalar block: splat it.
        from xdsl.dialects import vector

        if isinstance(value.type, VectorType):
            raise AssertionError("unexpected vector value from outside the block")
        from xdsl.dialects import arith

        owner = value.owner
        assert isinstance(owner, arith.ConstantOp)
        scalar = builder.add(owner.clone())
        value = builder.add(vector.BroadcastOp(scalar, VectorType(f32, [width])))
    twin.add_op(kernel.YieldOp(value))
    return twin


def _values_of(block: Block) -> set[SSAValue]:
    return {*block.args, *(r for o in block.ops for r in o.results)}


def stage_functions(name: str, body: Block, width: int,
                    out: Attribute = f32) -> tuple[str, list[RowStage]]:
    """The C source of every stage function of ``body`` and the stages calling them; ``out``
    is the element type the template stores (the kept value needs f32, vector stages a
    float type)."""
    inputs = len(body.args)
    exp = f"{name}_exp{width}"
    sources: list[str] = [vector_exp_function(exp, width)] if width > 1 else []
    calls = {mathd.ExpOp: exp}
    stages: list[RowStage] = []
    blocks = stage_blocks(body, keep=out == f32)
    keeps = out == f32 and kept_value(body) is not None
    vectors = width > 1 and out in (f32, *HALF_FLOATS)
    for j, (block, kind) in enumerate(blocks):
        names = [*(f"a{i}" for i in range(inputs)), *(f"r{k}" for k in range(j))]
        if kind is None and keeps:
            names.append("kept")
        scalar = f"{name}_s{j}"
        sources.append(emit_value_function(scalar, block, names))
        vector_name = None
        view = float_view(block, out if kind is None else None) if vectors else None
        if view is not None and vector_safe(view):
            vector_name = f"{scalar}_v"
            sources.append(
                emit_value_function(vector_name, vector_twin(view, width), names, calls))
        stages.append(RowStage(scalar, vector_name, kind,
                               keeps=keeps and j == len(blocks) - 2))
    return "".join(sources), stages


def row_inputs(inputs: Sequence[SSAValue], out: SSAValue, axis: int = -1) -> list[RowInput]:
    """How each input buffer is read at (``row``, ``c``) of the ``[rows, cols]`` output (its
    rows along ``axis``, default the last)."""
    out_type = out.type
    assert isinstance(out_type, MemRefType)
    shape = tuple(out_type.get_shape())
    if axis % len(shape) != len(shape) - 1:
        return [strided_row_input(f"in{i}", v, shape, axis % len(shape))
                for i, v in enumerate(inputs)]
    return [row_input(f"in{i}", v, shape) for i, v in enumerate(inputs)]


def strided_row_input(name: str, value: SSAValue | None, out_shape: tuple[int, ...],
                      axis: int) -> RowInput:
    """How a buffer of ``value``'s shape (``out_shape`` when None: the output itself),
    broadcast to ``out_shape``, is read at (``row``, ``c``) when the rows run along ``axis``:
    ``row`` numbers the elements of the other axes in row-major order, ``c`` the position on
    ``axis``, whose stride is the column stride (0 for a value broadcast along it)."""
    rank = len(out_shape)
    if value is None:
        shape, dtype = out_shape, "f32"
    else:
        t = value.type
        assert isinstance(t, MemRefType)
        dtype = str(t.element_type)
        shape = (1,) * (rank - len(t.get_shape())) + tuple(t.get_shape())
    strides = [math.prod(shape[d + 1:]) for d in range(rank)]
    others = [d for d in range(rank) if d != axis]
    lead = [out_shape[d] for d in others]
    terms = []
    for k, d in enumerate(others):
        if shape[d] == 1 or out_shape[d] == 1:
            continue
        inner = math.prod(lead[k + 1:])
        index = "row" if inner == 1 else f"(row / {inner})"
        if k > 0 and math.prod(lead[:k]) > 1:
            index = f"({index} % {lead[k]})"
        terms.append(index if strides[d] == 1 else f"{index} * {strides[d]}")
    column_stride = strides[axis] if shape[axis] != 1 and out_shape[axis] != 1 else 0
    return RowInput(name, " + ".join(terms) or "0", column_stride, dtype)


def row_input(name: str, value: SSAValue, out_shape: tuple[int, ...]) -> RowInput:
    t = value.type
    assert isinstance(t, MemRefType)
    dtype = str(t.element_type)
    rank = len(out_shape)
    shape = (1,) * (rank - len(t.get_shape())) + tuple(t.get_shape())
    cols = out_shape[-1]
    column_stride = 1 if shape[-1] == cols and cols != 1 else 0
    lead, own = out_shape[:-1], shape[:-1]
    strides = [math.prod(shape[d + 1:]) for d in range(rank - 1)]
    if own == lead and all(s != 1 for s in lead):
        return RowInput(name, f"row * {shape[-1]}" if shape[-1] != 1 else "row", column_stride,
                        dtype)
    terms = []
    for d in range(rank - 1):
        if own[d] == 1 or lead[d] == 1:
            continue
        inner = math.prod(lead[d + 1:])
        index = "row" if inner == 1 else f"(row / {inner})"
        if d > 0 and math.prod(lead[:d]) > 1:
            index = f"({index} % {lead[d]})"
        terms.append(index if strides[d] == 1 else f"{index} * {strides[d]}")
    return RowInput(name, " + ".join(terms) or "0", column_stride, dtype)
