"""``lower-to-kernels``: the ops that become ``kernel.template`` launches.

Float matrix products become the ``gemm`` template, whose epilogue region is generated here
from scalar IR: the bias load and add, then the activation's scalar ops from the ``scalar_ops``
tables, so any activation folds without a new template. On a GPU a product with few output
tiles is split along K (`gemm_split`): ``gemm`` with ``split_k`` writes the parts' partial
products to a buffer, and ``gemm_split_sum`` adds them and applies the epilogue. Norms and
softmax over the last axis become the row templates (other axes: transpose to the last axis
and back); attention becomes the ``attention`` template, which reads q, k and v in place when
they are slices of one packed buffer. The attention block and the transformer layer are
compositions of these.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    BoolAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from fusec import knobs
from fusec.dialects import fused, kernel, nn
from fusec.dialects.common import HALF_TYPES, bool_prop, float_prop, int_prop, str_prop
from fusec.dialects.decompositions import ACTIVATION_OPS
from fusec.dialects.scalar_ops import build_scalar
from fusec.lowering.generated_ops import (
    lower_int_matmul,
    map_kernel,
    probe,
    shape_of,
    transposed,
)
from fusec.lowering.lower_to_kernels import FunctionLowering, LoweringError, LoweringOptions

Lowering = Callable[[FunctionLowering, Operation], list[SSAValue]]

Param = int | float | bool | str

# Buffer element type -> its OpenCL spelling in a template (a mask's, a gather's data).
MASK_DTYPES: dict[Attribute, str] = {Float32Type(): "float", i32: "int", i1: "uchar"}
GATHER_DTYPES: dict[Attribute, str] = {**MASK_DTYPES, Float16Type(): "ushort",
                                       BFloat16Type(): "ushort"}
"""The OpenCL type a gather (or a cache update) copies its elements as: half-precision
elements as their 16 bits (a copy needs no half arithmetic, so no cl_khr_fp16)."""


def params(**values: Param) -> dict[str, Attribute]:
    """Template parameters as attributes: i64, f32, i1 or string."""
    out: dict[str, Attribute] = {}
    for key, value in values.items():
        if isinstance(value, bool):
            out[key] = BoolAttr.from_bool(value)
        elif isinstance(value, int):
            out[key] = IntegerAttr(value, i64)
        elif isinstance(value, float):
            out[key] = FloatAttr(value, f32)
        else:
            out[key] = StringAttr(value)
    return out


"""The 16-bit floats: held in 16 bits, computed on in float32."""

FLOAT_DTYPES: dict[Attribute, str] = {Float32Type(): "f32", Float16Type(): "f16",
                                      BFloat16Type(): "bf16"}
"""Float element types -> the templates' name for them."""


def require_float(op: Operation, values: Sequence[SSAValue]) -> None:
    for v in values:
        t = v.type
        if isinstance(t, TensorType) and t.element_type not in FLOAT_DTYPES:
            raise LoweringError(f"the '{op.name}' kernel computes on f32, f16 or bf16 only, "
                                f"got {t}")


def dtype_of_any(value: SSAValue) -> Attribute:
    """The element type of tensor ``value``."""
    t = value.type
    assert isinstance(t, TensorType)
    return t.element_type


def dtype_of(value: SSAValue) -> str:
    t = value.type
    assert isinstance(t, TensorType)
    return FLOAT_DTYPES[t.element_type]


def converted(lo: FunctionLowering, value: SSAValue, to: Attribute) -> SSAValue:
    """A tensor value standing for ``value`` converted to element type ``to`` by a generated
    kernel (``arith.extf`` / ``arith.truncf``); ``value`` itself when it has that type."""
    t = value.type
    assert isinstance(t, TensorType)
    if t.element_type == to:
        return value
    body = Block(arg_types=[t.element_type])
    widen = to == f32
    cast = arith.ExtFOp(body.args[0], to) if widen else arith.TruncFOp(body.args[0], to)
    body.add_ops([cast, fused.YieldOp(cast.result)])
    result = Block(arg_types=[TensorType(to, t.get_shape())]).args[0]
    (buffer,) = map_kernel(lo, "to_f32" if widen else f"to_{FLOAT_DTYPES[to]}", [value], body,
                           result)
    return lo.stand_in(buffer, t.get_shape())


def through_f32(
    lo: FunctionLowering,
    values: Sequence[SSAValue | None],
    result_type: Attribute,
    compute: Callable[..., SSAValue],
) -> SSAValue:
    """``compute`` (a float32 kernel, given tensor values, returning a buffer) on float32
    copies of the 16-bit float ``values``, its result rounded back to ``result_type``'s
    element type; just ``compute(*values)`` when nothing is 16-bit. How a template that
    computes on float32 buffers runs on f16 and bf16 (a norm of mixed types, a softmax on a
    CPU, a 16-bit mask), at the cost of a conversion kernel per input and output."""
    assert isinstance(result_type, TensorType)
    halves = [v for v in values if v is not None and isinstance(v.type, TensorType)
              and v.type.element_type in HALF_TYPES]
    if not halves and result_type.element_type not in HALF_TYPES:
        return compute(*values)
    wide = [converted(lo, v, f32) if v in halves else v for v in values]
    shape = result_type.get_shape()
    result = compute(*wide)
    if result_type.element_type not in HALF_TYPES:
        return result
    narrow = converted(lo, lo.stand_in(result, shape), result_type.element_type)
    return lo.buffer(narrow)


# --- matmul --------------------------------------------------------------------------------------


def epilogue(bias: SSAValue | None, activation: str) -> tuple[Block, list[SSAValue]]:
    """``act(acc + bias[col])`` as an epilogue block; the bias buffer is its extra argument."""
    extras = [bias] if bias is not None else []
    block = kernel.epilogue_block(f32, [b.type for b in extras])
    acc, _row, col, *bias_args = block.args
    value = acc
    if bias_args:
        (bias_arg,) = bias_args
        bias_arg.name_hint = "bias"
        shape = bias_arg.type.get_shape()  # type: ignore[attr-defined]
        if len(shape) == 1 and shape[0] != 1:
            index = [col]
        else:
            zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
            block.add_op(zero)
            index = [zero.result] * len(shape)
        load = memref.LoadOp.get(bias_arg, index)
        block.add_op(load)
        bias_value = load.res
        if bias_value.type != f32:  # a 16-bit bias: widened in registers (exact)
            widen = arith.ExtFOp(bias_value, f32)
            block.add_op(widen)
            bias_value = widen.result
        add = arith.AddfOp(value, bias_value)
        block.add_op(add)
        value = add.result
    if activation != "none":
        ops, value = build_scalar(ACTIVATION_OPS[activation](probe(TensorType(f32, [1]))), [value])
        block.add_ops(ops)
    block.add_op(kernel.YieldOp(value))
    return block, extras


def gemm(
    lo: FunctionLowering,
    x: SSAValue,
    w: SSAValue,
    result_type: Attribute,
    bias: SSAValue | None = None,
    activation: str = "none",
    custom: tuple[Block, list[SSAValue]] | None = None,
) -> SSAValue:
    """``act(x @ w + bias)`` with the ``gemm`` template; leading dimensions of ``x`` are rows.
    ``custom`` is an epilogue block and its extra buffers, used instead of bias and act."""
    a, b = shape_of(x), shape_of(w)
    if len(b) == 2:
        batch, rows, rhs_batched = 1, math.prod(a[:-1]), False
    else:
        batch, rows, rhs_batched = math.prod(a[:-2]), a[-2], True
    n, k = b[-1], a[-1]
    out = lo.alloc(result_type)
    if custom is not None:
        block, extras = custom
    else:
        block, extras = epilogue(lo.buffer(bias) if bias is not None else None, activation)
    dtype = dtype_of(x)
    typed = params(dtype=dtype) if dtype != "f32" else {}  # f32 is the template's default
    if dtype == "f32" and lo.options.allow_tf32:
        typed = params(allow_tf32=True)
    result = str(result_type.element_type)  # type: ignore[attr-defined]
    # An epilogue ending in a cast stores another type than the operands'.
    stored = params(out_dtype=result) if result != dtype else {}
    shape = {**params(batch=batch, m=rows, n=n, k=k, rhs_batched=rhs_batched), **typed}
    # A general epilogue (fused.matmul_epilogue) stays one launch unless the product alone
    # would leave most of a GPU idle (`EPILOGUE_SPLIT_SHARE`).
    if skinny_gemm(lo.options, batch * rows, rhs_batched):  # one launch, never split
        lo.template("gemm", {**shape, **stored, **params(skinny=True)},
                    [lo.buffer(x), lo.buffer(w)], [out], extras, block)
        return out
    fewer = EPILOGUE_SPLIT_SHARE.get(dtype, 1) if custom is not None else 1
    if whole_tiles(lo.options, dtype, batch, rows, n, k, rhs_batched):
        split = whole_tile_split(lo.options, batch * rows * n, k)
    else:
        split = gemm_split(lo.options, batch * rows * n, k, lo.options.gemm_split_outputs // fewer)
    if split == 1:
        lo.template("gemm", {**shape, **stored}, [lo.buffer(x), lo.buffer(w)], [out], extras,
                    block)
        return out
    partials = lo.alloc(TensorType(f32, [split, batch, rows, n]), "partials")
    lo.template("gemm", {**shape, **params(split_k=split)}, [lo.buffer(x), lo.buffer(w)],
                [partials])
    summed = params(dtype=result) if result != "f32" else {}
    lo.template("gemm_split_sum", {**params(batch=batch, m=rows, n=n, split_k=split), **summed},
                [partials], [out], extras, block)
    return out


SKINNY_GEMM_ROWS = 8
"""On a GPU, a product of at most this many rows (``batch * M``) sharing one B (a decode step's
projections) is the skinny kernel (`codegen.kernels.gemm_skinny`: one launch reading B across
the whole GPU) instead of a tiled one split along K (knob ``skinny_gemm``)."""


def skinny_gemm(options: LoweringOptions, rows: int, rhs_batched: bool) -> bool:
    """Whether a product of `rows` rows takes the skinny kernel (`SKINNY_GEMM_ROWS`)."""
    return (options.device == "gpu" and not rhs_batched and rows <= SKINNY_GEMM_ROWS
            and knobs.value("skinny_gemm"))


EPILOGUE_SPLIT_SHARE = {"f32": 4, "f16": 8, "bf16": 8}
"""By operand type: a product with a general epilogue is split along K only below this share
of ``gemm_split_outputs`` output elements (by default f32 131,072, 16-bit 65,536). Measured on
an H200, kernel time (2026-11-26, two runs each):
- gemm_epilogue 512 x 768 x 768 f32 (row and column scales, a clamp): 0.057 ms in one launch,
  0.049 in two; one launch kept (issue 13 counts it as one kernel; torch.compile 0.09-0.11).
- The f32 Llama block at batch 1, whose attention-output and down projections (128 x 768
  outputs) carry the residual add: 0.31 ms with them whole, 0.214-0.216 split.
- The f16 one: 0.134 ms with them whole (mma.sync), 0.150-0.151 split."""


def whole_tiles(options: LoweringOptions, dtype: str, batch: int, rows: int, n: int, k: int,
                rhs_batched: bool) -> bool:
    """Whether a product runs on the device's tiled tensor-core kernel (``gemm-whole-tile``):
    16-bit operands, or f32 with TF32 allowed; one B; ``batch * rows`` and N whole tiles, K a
    multiple of 64. Such a product is split along K only into deep parts of whole steps
    (`whole_tile_split`). On an H200 (2026-12-02, bench/results/h200-2026-12-02-s13-blocks.log)
    a 512 x 768 x 768 f16 product split along K on the ``mma.sync`` kernels took 0.050 ms, and
    0.012 ms whole on ``wgmma``."""
    tile = options.gemm_whole_tile
    tensor_cores = dtype in ("f16", "bf16") or (dtype == "f32" and options.allow_tf32)
    return (tile > 0 and options.device == "gpu" and tensor_cores
            and not (rhs_batched and batch != 1) and (batch * rows) % tile == 0
            and n % tile == 0 and k % 64 == 0)


WHOLE_TILE_SPLIT_DEPTH = 512
"""The least K of one part of a whole-tile product split along K (`whole_tile_split`): 8 steps
of the ``wgmma`` kernel's 64, so that its pipeline of 4 stages fills. A batch-1 model's
128 x 768 x 3072 product is 6 blocks on 132 units; in 6 parts, 36."""


def whole_tile_split(options: LoweringOptions, outputs: int, k: int) -> int:
    """Parts of K a whole-tile product (`whole_tiles`) is split into, with the knob
    `wgmma_split_k` on and `wgmma_sum_parts` off: as `gemm_split`, with parts at least
    `WHOLE_TILE_SPLIT_DEPTH` deep and each a whole number of 64-deep steps; the sum of the
    parts applies the epilogue, as for any split product. Else 1: the product is one launch,
    whole or with its parts summed in the kernel (`gemm_wgmma.parts_for`)."""
    if not knobs.value("wgmma_split_k") or knobs.value("wgmma_sum_parts"):
        return 1  # whole, or split in the kernel (`gemm_wgmma.parts_for`)
    deep = replace(options, gemm_split_depth=max(options.gemm_split_depth,
                                                 WHOLE_TILE_SPLIT_DEPTH))
    split = gemm_split(deep, outputs, k)
    while split > 1 and k % (64 * split):
        split -= 1
    return split


def gemm_split(options: LoweringOptions, outputs: int, k: int,
               below: int | None = None) -> int:
    """Parts of K a matmul with `outputs` output elements is split into (1: not split): on a
    GPU, enough to bring the product to ``gemm_split_outputs`` (at most 16), each at least
    ``gemm_split_depth`` deep; only products of fewer than `below` outputs (by default
    ``gemm_split_outputs``) are split."""
    limit = options.gemm_split_outputs if below is None else below
    if options.device != "gpu" or outputs >= limit:
        return 1
    wanted = -(-options.gemm_split_outputs // outputs)
    return max(1, min(wanted, k // options.gemm_split_depth, MAX_GEMM_SPLIT))


MAX_GEMM_SPLIT = 16
"""Most parts of a split matmul (the sum kernel adds them one by one)."""


def lower_matmul(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, nn.MatmulOp)
    if isinstance(op.lhs.type, TensorType) and isinstance(op.lhs.type.element_type, IntegerType):
        return lower_int_matmul(lo, op)
    require_float(op, op.operands)
    return [gemm(lo, op.lhs, op.rhs, op.result.type)]


def lower_matmul_bias_act(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.MatmulBiasActOp)
    require_float(op, op.operands)
    return [gemm(lo, op.x, op.w, op.result.type, op.bias, str_prop(op, "activation"))]


# --- norms and softmax ---------------------------------------------------------------------------


def rows_cols(value: SSAValue) -> tuple[int, int]:
    shape = shape_of(value)
    cols = shape[-1] if shape else 1
    return math.prod(shape) // cols, cols


def norm(
    lo: FunctionLowering,
    x: SSAValue,
    gamma: SSAValue,
    beta: SSAValue | None,
    eps: float,
    rms: bool,
    residual: SSAValue | None = None,
) -> SSAValue:
    """LayerNorm or RMSNorm of ``x (+ residual)`` over the last axis, in the element type of
    ``x``: f32, or f16/bf16 when every operand has that type (the template reads and writes
    it, computing in float32)."""
    rows, cols = rows_cols(x)
    out = lo.alloc(x.type)
    inputs = [x, *([residual] if residual is not None else []), gamma]
    inputs += [beta] if beta is not None else []
    dtype = dtype_of(x)
    typed = params(dtype=dtype) if dtype != "f32" else {}
    lo.template(
        "rms_norm" if rms else "layer_norm",
        {**params(rows=rows, cols=cols, eps=eps, residual=residual is not None,
                  has_beta=beta is not None), **typed},
        [lo.buffer(v) for v in inputs],
        [out],
    )
    return out


def native_half(values: Sequence[SSAValue | None], result_type: Attribute) -> bool:
    """Whether a row template (norms, softmax) can read and write these operands as they are:
    all of them and the result of one 16-bit float type."""
    assert isinstance(result_type, TensorType)
    elem = result_type.element_type
    return elem in HALF_TYPES and all(
        dtype_of_any(v) == elem for v in values if v is not None)


def last_axis(op: Operation) -> bool:
    """Whether ``op`` normalises the last axis of its input."""
    rank = len(shape_of(op.operands[0]))
    return int_prop(op, "axis") % rank == rank - 1


def over_last_axis(
    lo: FunctionLowering, op: Operation, x: SSAValue, compute: Callable[[SSAValue], SSAValue]
) -> SSAValue:
    """``compute`` applied along ``op``'s axis: directly for the last axis, else between two
    transposes that move the axis last and back."""
    shape = shape_of(x)
    rank = len(shape)
    axis = int_prop(op, "axis") % rank
    if axis == rank - 1:
        return compute(x)
    perm = [d for d in range(rank) if d != axis] + [axis]
    inverse = [perm.index(d) for d in range(rank)]
    moved_shape = [shape[p] for p in perm]
    moved = transposed(lo, x, perm, TensorType(f32, moved_shape))
    result = compute(lo.stand_in(moved, moved_shape))
    return transposed(lo, lo.stand_in(result, moved_shape), inverse, x.type)


def lower_layer_norm(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, nn.LayerNormOp)
    require_float(op, op.operands)
    eps = float_prop(op, "eps")
    if native_half([op.input, op.gamma, op.beta], op.result.type) and last_axis(op):
        return [norm(lo, op.input, op.gamma, op.beta, eps, rms=False)]
    return [through_f32(lo, [op.input, op.gamma, op.beta], op.result.type, lambda x, g, b: (
        over_last_axis(lo, op, x, lambda x: norm(lo, x, g, b, eps, rms=False))
    ))]


def lower_rms_norm(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, nn.RmsNormOp)
    require_float(op, op.operands)
    eps = float_prop(op, "eps")
    if native_half([op.input, op.gamma], op.input.type) and last_axis(op):
        return [norm(lo, op.input, op.gamma, None, eps, rms=True)]
    return [through_f32(lo, [op.input, op.gamma], op.input.type, lambda x, g: (
        over_last_axis(lo, op, x, lambda x: norm(lo, x, g, None, eps, rms=True))
    ))]


def softmax(lo: FunctionLowering, x: SSAValue) -> SSAValue:
    """Softmax over the last axis in the element type of ``x`` (f32; f16 or bf16 read and
    written as they are, computing in float32)."""
    rows, cols = rows_cols(x)
    out = lo.alloc(x.type)
    dtype = dtype_of(x)
    typed = params(dtype=dtype) if dtype != "f32" else {}
    lo.template("softmax", {**params(rows=rows, cols=cols), **typed}, [lo.buffer(x)], [out])
    return out


def lower_softmax(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """On a GPU a 16-bit softmax over the last axis reads and writes its type (the template's
    GPU shapes); elsewhere it runs on float32 copies (`through_f32`: the CPU's softmax shapes
    read float32 vectors)."""
    assert isinstance(op, nn.SoftmaxOp)
    require_float(op, op.operands)
    if (lo.options.device == "gpu" and native_half([op.input], op.result.type)
            and last_axis(op)):
        return [softmax(lo, op.input)]
    return [through_f32(lo, [op.input], op.result.type, lambda x: (
        over_last_axis(lo, op, x, lambda x: softmax(lo, x))
    ))]


def lower_residual_layer_norm(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.ResidualLayerNormOp)
    require_float(op, op.operands)
    eps = float_prop(op, "eps")
    if native_half([op.x, op.gamma, op.beta, op.residual], op.result.type):
        return [norm(lo, op.x, op.gamma, op.beta, eps, False, residual=op.residual)]
    return [through_f32(lo, [op.x, op.gamma, op.beta, op.residual], op.result.type,
                        lambda x, g, b, r: norm(lo, x, g, b, eps, False, residual=r))]


def lower_residual_rms_norm(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.ResidualRmsNormOp)
    require_float(op, op.operands)
    eps = float_prop(op, "eps")
    if native_half([op.x, op.gamma, op.residual], op.result.type):
        return [norm(lo, op.x, op.gamma, None, eps, True, residual=op.residual)]
    return [through_f32(lo, [op.x, op.gamma, op.residual], op.result.type,
                        lambda x, g, r: norm(lo, x, g, None, eps, True, residual=r))]


# --- attention -----------------------------------------------------------------------------------


def heads_operand(lo: FunctionLowering, value: SSAValue) -> tuple[SSAValue, int, int]:
    """The buffer to read a ``[B, S, H*D]`` operand from, its row stride and column offset: a
    slice of the last axis (``nn.narrow`` lowered in place) is read from its source."""
    owner = value.owner
    if isinstance(owner, nn.NarrowOp) and value in lo.deferred:
        source = shape_of(owner.input)
        return lo.buffer(owner.input), source[-1], int_prop(owner, "start")
    return lo.buffer(value), shape_of(value)[-1], 0


def attention(
    lo: FunctionLowering,
    q: tuple[SSAValue, int, int],
    k: tuple[SSAValue, int, int],
    v: tuple[SSAValue, int, int],
    mask: SSAValue | None,
    shapes: tuple[tuple[int, ...], tuple[int, ...]],
    num_heads: int,
    head_dim: int,
    scale: float,
    causal: bool,
    result_type: Attribute,
    kv_heads: int | None = None,
    window: int | None = None,
    dtype: str | None = None,
) -> SSAValue:
    """The ``attention`` template; `kv_heads` (default `num_heads`) key and value heads,
    `window` a sliding window (with `causal`); q, k, v of `dtype` (default the result's), the
    result rounded to it and stored in `result_type` (f32 of 16-bit operands: a cast the
    attention stores, `fuse-attention-cast`)."""
    (batch, seq_q, _), (_, seq_k, _) = shapes
    mask_dtype = "float"
    if mask is not None:
        mask_dtype = MASK_DTYPES[mask.type.element_type]  # type: ignore[attr-defined]
    out = lo.alloc(result_type)
    stored = FLOAT_DTYPES[result_type.element_type]  # type: ignore[attr-defined]
    dtype = dtype or stored
    lo.template(
        "attention",
        {**params(
            batch=batch, seq_q=seq_q, seq_k=seq_k, num_heads=num_heads, head_dim=head_dim,
            scale=scale, causal=causal, has_mask=mask is not None, mask_dtype=mask_dtype,
            q_row_stride=q[1], q_offset=q[2], k_row_stride=k[1], k_offset=k[2],
            v_row_stride=v[1], v_offset=v[2],
        ), **(params(dtype=dtype) if dtype != "f32" else {}),
            **(params(out_dtype=stored) if stored != dtype else {}),
            **(params(kv_heads=kv_heads) if kv_heads not in (None, num_heads) else {}),
            **(params(window=window) if window is not None else {})},
        [q[0], k[0], v[0], *([mask] if mask is not None else [])],
        [out],
    )
    return out


def lower_attention(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, nn.AttentionOp)
    require_float(op, [op.q, op.k, op.v])
    if dtype_of(op.q) != "f32":
        return [half_attention(lo, op)]
    q, k, v = (heads_operand(lo, x) for x in (op.q, op.k, op.v))
    mask = lo.buffer(op.mask) if op.mask is not None else None
    return [attention(
        lo, q, k, v, mask, (shape_of(op.q), shape_of(op.k)),
        int_prop(op, "num_heads"), int_prop(op, "head_dim"), op.scale_value(),
        bool_prop(op, "causal"), op.result.type, op.kv_heads(), op.window_size(),
    )]


def half_attention(lo: FunctionLowering, op: nn.AttentionOp) -> SSAValue:
    """``op`` on f16/bf16 operands. Where q, k, v (or the tensors they are sliced from) share
    q's 16-bit type, the attention template reads them in that type (slices of a packed q/k/v
    read in place) and stores the result in its type (q's, or f32: rounded to q's first);
    otherwise it runs on float32 copies, one per source tensor (slices of one packed tensor
    share it), its result rounded back to q's type (and widened again for an f32 result). A
    16-bit mask is read from a float32 copy."""
    elem = dtype_of_any(op.q)
    result = dtype_of_any(op.result)
    sources = [source_of(lo, x) for x in (op.q, op.k, op.v)]
    native = all(dtype_of_any(source) == elem for source, _ in sources)
    wide: dict[SSAValue, SSAValue] = {}

    def operand(value: SSAValue) -> tuple[SSAValue, int, int]:
        source, offset = source_of(lo, value)
        if source not in wide:
            wide[source] = lo.buffer(source if native else converted(lo, source, f32))
        return wide[source], shape_of(source)[-1], offset

    q, k, v = (operand(x) for x in (op.q, op.k, op.v))
    mask = None
    if op.mask is not None:
        mask = lo.buffer(converted(lo, op.mask, f32) if dtype_of_any(op.mask) in HALF_TYPES
                         else op.mask)
    shape = shape_of(op.q)
    ctx = attention(lo, q, k, v, mask, (shape, shape_of(op.k)), int_prop(op, "num_heads"),
                    int_prop(op, "head_dim"), op.scale_value(), bool_prop(op, "causal"),
                    TensorType(result if native else f32, shape), op.kv_heads(),
                    op.window_size(), FLOAT_DTYPES[elem] if native else None)
    if native:
        return ctx
    rounded = converted(lo, lo.stand_in(ctx, shape), elem)
    return lo.buffer(rounded if result == elem else converted(lo, rounded, result))


def source_of(lo: FunctionLowering, value: SSAValue) -> tuple[SSAValue, int]:
    """The tensor an attention operand is read from and its column offset there: a slice of
    the last axis (``nn.narrow`` lowered in place) is read from its input."""
    owner = value.owner
    if isinstance(owner, nn.NarrowOp) and value in lo.deferred:
        return owner.input, int_prop(owner, "start")
    return value, 0


def attention_block(
    lo: FunctionLowering, op: Operation, hidden: SSAValue, weights: Sequence[SSAValue],
    mask: SSAValue, result_type: Attribute,
) -> SSAValue:
    """qkv projection (gemm + bias), attention read in place from the packed qkv buffer, output
    projection (gemm + bias): three launches."""
    qkv_w, qkv_b, out_w, out_b = weights
    heads, dim = int_prop(op, "num_heads"), int_prop(op, "head_dim")
    width = heads * dim
    batch, seq, _ = shape_of(hidden)
    elem = hidden.type.element_type  # type: ignore[attr-defined]
    qkv_type = TensorType(elem, [batch, seq, 3 * width])
    qkv = gemm(lo, hidden, qkv_w, qkv_type, qkv_b)  # attention reads it in its own type
    mask_buffer = lo.buffer(converted(lo, mask, f32) if dtype_of_any(mask) in HALF_TYPES
                            else mask)

    ctx = attention(
        lo, (qkv, 3 * width, 0), (qkv, 3 * width, width), (qkv, 3 * width, 2 * width),
        mask_buffer, ((batch, seq, width), (batch, seq, width)), heads, dim,
        1.0 / math.sqrt(dim), False, TensorType(elem, [batch, seq, width]),
    )
    return gemm(lo, lo.stand_in(ctx, (batch, seq, width)), out_w, result_type, out_b)


def lower_attention_block(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.AttentionBlockOp)
    require_float(op, [op.hidden])
    weights = (op.qkv_w, op.qkv_b, op.out_w, op.out_b)
    return [attention_block(lo, op, op.hidden, weights, op.mask, op.result.type)]


def lower_transformer_layer(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """Post-LN encoder layer: attention block, residual LayerNorm, fc1 + activation, fc2,
    residual LayerNorm: seven launches."""
    assert isinstance(op, fused.TransformerLayerOp)
    require_float(op, [op.hidden])
    shape = shape_of(op.hidden)
    inter = [*shape[:-1], int_prop(op, "intermediate_size")]
    weights = (op.qkv_w, op.qkv_b, op.out_w, op.out_b)
    elem = op.hidden.type.element_type  # type: ignore[attr-defined]
    attn = attention_block(lo, op, op.hidden, weights, op.mask, op.hidden.type)

    def residual_norm(x: SSAValue, gamma: SSAValue, beta: SSAValue, eps: float,
                      residual: SSAValue) -> SSAValue:
        if native_half([x, gamma, beta, residual], op.hidden.type):
            return norm(lo, x, gamma, beta, eps, False, residual=residual)
        return through_f32(lo, [x, gamma, beta, residual], op.hidden.type,
                           lambda x, g, b, r: norm(lo, x, g, b, eps, False, residual=r))

    h1 = lo.stand_in(residual_norm(lo.stand_in(attn, shape), op.ln1_g, op.ln1_b,
                                   float_prop(op, "eps1"), op.hidden), shape)
    fc1 = gemm(lo, h1, op.fc1_w, TensorType(elem, inter), op.fc1_b, str_prop(op, "activation"))
    fc2 = gemm(lo, lo.stand_in(fc1, inter), op.fc2_w, op.hidden.type, op.fc2_b)
    return [residual_norm(lo.stand_in(fc2, shape), op.ln2_g, op.ln2_b, float_prop(op, "eps2"),
                          h1)]


# --- gather --------------------------------------------------------------------------------------


def lower_gather(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """``data`` as ``[outer, dim, inner]`` around ``axis``, the indices flattened: the
    ``gather`` template."""
    assert isinstance(op, nn.GatherOp)
    shape = shape_of(op.data)
    axis = int_prop(op, "axis") % len(shape)
    count = math.prod(shape_of(op.indices))
    out = lo.alloc(op.result.type)
    if count == 0 or math.prod(shape) == 0:
        return [out]
    elem = op.data.type.element_type  # type: ignore[attr-defined]
    lo.template(
        "gather",
        params(outer=math.prod(shape[:axis]), dim=shape[axis], count=count,
               inner=math.prod(shape[axis + 1 :]), dtype=GATHER_DTYPES[elem], axis=axis),
        [lo.buffer(op.data), lo.buffer(op.indices)],
        [out],
    )
    return [out]


# --- KV cache and greedy choice --------------------------------------------------------------


def lower_cache_update(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """The ``cache_update`` template: in place, into the cache's buffer, where nothing reads
    the old cache afterwards (`FunctionLowering.reusable`); else into a copy of it. New rows
    along the next-to-last axis that are a slice of the last axis (``nn.narrow`` of a packed
    q/k/v) are read from the slice's source (`heads_operand`): no copy kernel for the slice."""
    assert isinstance(op, nn.CacheUpdateOp)
    shape = shape_of(op.cache)
    axis = int_prop(op, "axis") % len(shape)
    rows = shape_of(op.update)[axis]
    elem = op.cache.type.element_type  # type: ignore[attr-defined]
    in_place = lo.reusable(op.cache, op)
    out = lo.buffer(op.cache) if in_place else lo.alloc(op.result.type)
    if rows == 0:
        if not in_place:
            lo.copy(op.cache, lo.buffer(op.cache), into=out)
        return [out]
    update, strided = lo.buffer(op.update) if axis != len(shape) - 2 else None, {}
    if update is None:  # rows along the next-to-last axis: a slice of the last read in place
        update, stride, offset = heads_operand(lo, op.update)
        if stride != shape[-1]:
            strided = params(update_row_stride=stride, update_offset=offset)
    lo.template(
        "cache_update",
        {**params(outer=math.prod(shape[:axis]), length=shape[axis], rows=rows,
                  inner=math.prod(shape[axis + 1:]), dtype=GATHER_DTYPES[elem],
                  copy=not in_place), **strided},
        [update, lo.buffer(op.pos), *([] if in_place else [lo.buffer(op.cache)])],
        [out],
    )
    return [out]


CACHE_CHUNK = 64
"""Keys per work-group of the split cache attention on a GPU (its scores sit in local
memory): one key per work-item of its 64. On an H200 (2026-12-02) a GPT-2 small decode step
with a cache of 160 keys, one work-item per query row walking every key (what the GPU had for
caches of up to 256 keys before), spent 0.24 ms in each layer's attention, 57% of the step
(bench/results/h200-2026-12-02-s9-decode.log)."""

CACHE_GROUPS = 8192
"""Work-groups (query rows x chunks) from which the split cache attention cuts no more chunks
(`cache_splits`): a prefill's thousands of query rows fill the GPU with few chunks, and each
chunk costs ``rows x head_dim`` floats of partial sums (10 MiB a layer for a Llama-style
prompt of 128 at chunks of 64 keys of a 640-key cache)."""

MAX_CHUNK = 4096
"""Most keys of one chunk (its scores take 4 bytes each of local memory)."""


def cache_splits(options: LoweringOptions, keys: int, rows: int) -> int:
    """How many chunks of keys ``nn.cache_attention`` of `rows` query rows (batch x queries
    x heads) is split into: on a GPU chunks of `CACHE_CHUNK` keys, one work-group each
    (flash-decoding, also for a single chunk: a work-group shares its keys among its
    work-items), but only as many as give `CACHE_GROUPS` work-groups where the rows are many
    (a prefill), and chunks of at most `MAX_CHUNK` keys; 0 on a CPU, which keeps the one-pass
    kernel (a work-item per query walks every key)."""
    if options.device != "gpu":
        return 0
    return max(-(-keys // MAX_CHUNK), min(-(-keys // CACHE_CHUNK), -(-CACHE_GROUPS // rows)))


def lower_cache_attention(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """The ``cache_attention`` template (the attention kernel with the cache position and
    grouped kv heads); q read in place from a packed q/k/v. 16-bit operands are read in their
    type when the caches and the result share it."""
    assert isinstance(op, nn.CacheAttentionOp)
    require_float(op, [op.q, op.k_cache, op.v_cache])
    q = heads_operand(lo, op.q)
    dtype = dtype_of(op.result)
    batch, seq_q, _ = shape_of(op.q)
    seq_k = shape_of(op.k_cache)[1]
    out = lo.alloc(op.result.type)
    heads, dim = int_prop(op, "num_heads"), int_prop(op, "head_dim")
    rows = batch * seq_q * heads
    splits = cache_splits(lo.options, seq_k, rows)
    if splits:
        partial = lo.alloc(TensorType(f32, [rows, splits, dim]), "partial")
        stats = lo.alloc(TensorType(f32, [rows, splits, 2]), "stats")
        lo.template(
            "cache_attention_split",
            {**params(batch=batch, seq_q=seq_q, seq_k=seq_k, num_heads=heads,
                      kv_heads=int_prop(op, "num_kv_heads"), head_dim=dim,
                      scale=op.scale_value(), splits=splits, q_row_stride=q[1], q_offset=q[2]),
             **(params(dtype=dtype) if dtype != "f32" else {})},
            [q[0], lo.buffer(op.k_cache), lo.buffer(op.v_cache), lo.buffer(op.pos)],
            [partial, stats],
        )
        lo.template("cache_attention_combine",
                    {**params(rows=rows, head_dim=dim, splits=splits),
                     **(params(dtype=dtype) if dtype != "f32" else {})},
                    [partial, stats], [out])
        return [out]
    lo.template(
        "cache_attention",
        {**params(batch=batch, seq_q=seq_q, seq_k=shape_of(op.k_cache)[1],
                  num_heads=int_prop(op, "num_heads"), kv_heads=int_prop(op, "num_kv_heads"),
                  head_dim=int_prop(op, "head_dim"), scale=op.scale_value(),
                  q_row_stride=q[1], q_offset=q[2]),
         **(params(dtype=dtype) if dtype != "f32" else {})},
        [q[0], lo.buffer(op.k_cache), lo.buffer(op.v_cache), lo.buffer(op.pos)],
        [out],
    )
    return [out]


ARGMAX_GPU_GROUP = 1024
"""GPU: work-items per row of ``nn.argmax`` (a decoder's logits are a few rows of a whole
vocabulary); a CPU walks each row with one work-item. On an H200 (2026-12-02) 256 took 0.048
ms for a row of GPT-2's 50257 logits (one work-group walking 196 elements a work-item: the
largest kernel of a decode step, bench/results/h200-2026-12-02-s10-decode.log (a)); 1024 is
the most a work-group of NVIDIA's takes."""


def lower_argmax(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    """The ``argmax`` template over rows of the last axis (another axis is moved last): a
    work-item per row, on a GPU a work-group (`ARGMAX_GPU_GROUP`)."""
    assert isinstance(op, nn.ArgmaxOp)
    shape = shape_of(op.input)
    axis = int_prop(op, "axis") % len(shape)
    elem = op.input.type.element_type  # type: ignore[attr-defined]
    x = lo.buffer(op.input)
    if axis != len(shape) - 1:
        perm = [*(d for d in range(len(shape)) if d != axis), axis]
        x = transposed(lo, op.input, perm, TensorType(elem, [shape[d] for d in perm]))
    cols = shape[axis]
    out = lo.alloc(op.result.type)
    group = ARGMAX_GPU_GROUP if lo.options.device == "gpu" else 1
    lo.template("argmax", params(rows=math.prod(shape) // cols, cols=cols,
                                 dtype=FLOAT_DTYPES.get(elem, "i32"), group=group),
                [x], [out])
    return [out]


TEMPLATE_LOWERINGS: dict[type[Operation], Lowering] = {
    nn.MatmulOp: lower_matmul,
    fused.MatmulBiasActOp: lower_matmul_bias_act,
    nn.LayerNormOp: lower_layer_norm,
    nn.RmsNormOp: lower_rms_norm,
    nn.SoftmaxOp: lower_softmax,
    fused.ResidualLayerNormOp: lower_residual_layer_norm,
    fused.ResidualRmsNormOp: lower_residual_rms_norm,
    nn.AttentionOp: lower_attention,
    nn.GatherOp: lower_gather,
    nn.CacheUpdateOp: lower_cache_update,
    nn.CacheAttentionOp: lower_cache_attention,
    nn.ArgmaxOp: lower_argmax,
    fused.AttentionBlockOp: lower_attention_block,
    fused.TransformerLayerOp: lower_transformer_layer,
}
