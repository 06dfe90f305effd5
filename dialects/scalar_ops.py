"""Tables between the ``nn`` elementwise ops and the scalar ``arith``/``math`` IR of fused bodies.

Forward, ``build_scalar(op, operands)`` gives the detached scalar ops that compute one element of
an ``nn`` elementwise op from scalar operands (block arguments or earlier scalar results)::

    nn.silu          ->  x * (1 / (1 + exp(-x)))           arith.negf, math.exp, arith.addf, ...
    nn.gelu          ->  0.5 * x * (1 + erf(x * 0.7071..))  math.erf
    nn.cast f32->f16 ->  arith.truncf        (a real conversion; same-type casts vanish)
    nn.cast f32->i8  ->  arith.fptosi        (saturating, NaN -> 0: see "Casts" below)
    nn.cast i32->i8  ->  arith.trunci(arith.maxsi(arith.minsi(x, 127), -128))
    nn.cmp "lt"      ->  arith.cmpf olt | arith.cmpi slt
    nn.where         ->  arith.select
    splat nn.constant -> arith.constant

Backward, ``decompose_elementwise`` and ``decompose_reduce`` turn a ``fused.elementwise`` or
``fused.reduce`` back into ``nn`` ops. The composite forms above (relu, integer neg, sigmoid,
silu, both gelus, casts to ``i1``) are recognised as a whole, from the value they compute, and
come back as the one ``nn`` op; every other scalar op maps to one ``nn`` op. Each new value
gets the broadcast shape of its operands (inputs keep their own shapes; scalar constants become
rank-0 ``nn.constant``) and the element type of its scalar op, so casts change the dtype of what
follows. Only the ops a value actually needs are emitted.

Scalar ops a body may hold (whether written by a user or by ``build_scalar``):
    arith.addf/addi subf/subi mulf/muli divf/divsi maximumf/maxsi minimumf/minsi negf
    arith.cmpf (oeq une olt ole ogt oge) arith.cmpi (eq ne slt sle sgt sge) arith.select
    arith.extf truncf sitofp fptosi uitofp extui extsi trunci arith.constant (scalar)
    math.powf tanh exp log sqrt rsqrt erf sin cos absf absi.
Anything else raises ``ScalarOpError`` naming the op and where it is.

Casts. ``nn.cast`` to an integer type truncates toward zero and saturates to the type's range,
NaN giving 0, from a float as from a wider integer. In a body, ``arith.fptosi`` carries that
meaning: MLIR leaves an out-of-range ``fptosi`` poison, so defining it (as LLVM's
``fptosi.sat`` does) refines MLIR's semantics rather than changing them. ``arith.trunci``
keeps MLIR's meaning (the low bits), so a saturating i32 -> i8 cast is a clamp then a
``trunci``, recognised as one ``nn.cast`` by the decomposition; a bare ``trunci`` has no
``nn`` counterpart. i8 -> i32 is ``arith.extsi``; i1 -> integer ``arith.extui`` (0 or 1).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from functools import cache

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from fusec.dialects import fused, nn
from fusec.dialects.common import (
    FLOAT_TYPES,
    I8,
    bool_prop,
    broadcast_shapes,
    element_of,
    ints_prop,
    shape_of,
    str_prop,
)
from fusec.dialects.op_kinds import OpKind, declared_kind, op_kind


class ScalarOpError(ValueError):
    """A scalar op (or an ``nn`` op) that has no counterpart on the other side of the tables.

    ``op`` is the op at fault; passes report the error at its location.
    """

    def __init__(self, message: str, op: Operation):
        super().__init__(message)
        self.op = op


def is_float(t: Attribute) -> bool:
    return t in FLOAT_TYPES


def is_bool(t: Attribute) -> bool:
    return t == i1


def float_width(t: Attribute) -> int:
    """16 for f16, 32 for f32, and 32 for bf16 (its exponent is f32's: f16 -> bf16 is an
    ``extf``, bf16 -> f16 a ``truncf``; both round)."""
    return 16 if t == FLOAT_TYPES[1] else 32


def element_type(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t


# --- forward: nn op -> scalar ops ----------------------------------------------------------------

# nn binary op -> (scalar op on floats, scalar op on integers or None)
BINARY: dict[type[Operation], tuple[type[Operation], type[Operation] | None]] = {
    nn.AddOp: (arith.AddfOp, arith.AddiOp),
    nn.SubOp: (arith.SubfOp, arith.SubiOp),
    nn.MulOp: (arith.MulfOp, arith.MuliOp),
    nn.DivOp: (arith.DivfOp, arith.DivSIOp),
    nn.MaxOp: (arith.MaximumfOp, arith.MaxSIOp),
    nn.MinOp: (arith.MinimumfOp, arith.MinSIOp),
    nn.PowOp: (math.PowFOp, None),
}

# nn unary op that is one math op on floats
UNARY_MATH: dict[type[Operation], type[Operation]] = {
    nn.TanhOp: math.TanhOp,
    nn.ExpOp: math.ExpOp,
    nn.LogOp: math.LogOp,
    nn.SqrtOp: math.SqrtOp,
    nn.RsqrtOp: math.RsqrtOp,
    nn.ErfOp: math.ErfOp,
    nn.SinOp: math.SinOp,
    nn.CosOp: math.CosOp,
}

# nn.cmp predicate -> (arith.cmpf predicate, arith.cmpi predicate). ``ne`` is unordered, as
# numpy's ``!=`` is true when either side is NaN.
CMP: dict[str, tuple[str, str]] = {
    "eq": ("oeq", "eq"),
    "ne": ("une", "ne"),
    "lt": ("olt", "slt"),
    "le": ("ole", "sle"),
    "gt": ("ogt", "sgt"),
    "ge": ("oge", "sge"),
}

ELEMENTWISE_OPS: tuple[type[Operation], ...] = tuple(
    cls for cls in nn.NN.operations if declared_kind(cls) is OpKind.ELEMENTWISE
)
"""The ``nn`` ops that declare the elementwise kind; `build_scalar` has a scalar form of each
(``tests/dialects/test_op_kinds.py`` checks that the two agree)."""


def is_elementwise(op: Operation) -> bool:
    """``op`` is an ``nn`` op of the elementwise kind, which ``build_scalar`` turns into
    scalar ops."""
    return op_kind(op) is OpKind.ELEMENTWISE and op.dialect_name() == "nn"


def splat_value(op: Operation) -> int | float | None:
    """The one value of a splat (or rank-0) ``nn.constant``, else ``None`` (also for a
    constant of no elements, which xDSL's ``is_splat`` does not take)."""
    if not isinstance(op, nn.ConstantOp) or not op.value.get_values():
        return None
    return op.value.get_values()[0] if op.value.is_splat() else None


class ScalarBuilder:
    """Collects detached scalar ops in program order."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def const(self, value: float | int, t: Attribute) -> SSAValue:
        return self.add(arith.ConstantOp(scalar_attr(value, t)))


def scalar_attr(value: float | int, t: Attribute) -> FloatAttr | IntegerAttr:
    if is_float(t):
        return FloatAttr(float(value), t)  # type: ignore[arg-type]
    assert isinstance(t, IntegerType)
    if is_bool(t):
        return IntegerAttr(-1 if value else 0, t)
    return IntegerAttr(int(value), t)


def sigmoid(b: ScalarBuilder, x: SSAValue) -> SSAValue:
    """``1 / (1 + exp(-x))``."""
    one = b.const(1.0, x.type)
    e = b.add(math.ExpOp(b.add(arith.NegfOp(x))))
    return b.add(arith.DivfOp(one, b.add(arith.AddfOp(one, e))))


def gelu(b: ScalarBuilder, x: SSAValue, approximate: str) -> SSAValue:
    """``0.5 * x * (1 + erf(x / sqrt(2)))``, or for ``tanh`` ``0.5 * x * (1 + tanh(z))`` with
    ``z = c * (x + 0.044715 x^3)``, computed as ``x / (1 + exp(-2 z))`` (the same value):
    ``1 + tanh(z)`` cancels to 0 in float32 below ``z`` of about -9, where the value is a tiny
    negative, not -0 (so ``sqrt`` of it is NaN, as the float64 reference's; fuzz program
    600508)."""
    t = x.type
    if approximate == "tanh":
        cube = b.add(arith.MulfOp(b.add(arith.MulfOp(x, x)), x))
        inner = b.add(arith.AddfOp(x, b.add(arith.MulfOp(b.const(0.044715, t), cube))))
        scaled = b.add(arith.MulfOp(b.const(-2.0 * pymath.sqrt(2.0 / pymath.pi), t), inner))
        one = b.const(1.0, t)
        return b.add(arith.DivfOp(x, b.add(arith.AddfOp(one, b.add(math.ExpOp(scaled))))))
    core = b.add(math.ErfOp(b.add(arith.MulfOp(x, b.const(1.0 / pymath.sqrt(2.0), t)))))
    half_x = b.add(arith.MulfOp(b.const(0.5, t), x))
    return b.add(arith.MulfOp(half_x, b.add(arith.AddfOp(b.const(1.0, t), core))))


def cast(b: ScalarBuilder, x: SSAValue, to: Attribute) -> SSAValue:
    """The conversion of ``x`` to ``to``; ``x`` itself when the types are equal."""
    src = x.type
    if src == to:
        return x
    if is_bool(to):  # x != 0, NaN included
        if is_float(src):
            return b.add(arith.CmpfOp(x, b.const(0.0, src), "une"))
        return b.add(arith.CmpiOp(x, b.const(0, src), "ne"))
    if is_float(to):
        if is_float(src):
            widen = to == FLOAT_TYPES[0] or float_width(to) > float_width(src)
            return b.add(arith.ExtFOp(x, to) if widen else arith.TruncFOp(x, to))
        if is_bool(src):
            return b.add(arith.UIToFPOp(x, to))  # type: ignore[arg-type]
        return b.add(arith.SIToFPOp(x, to))  # type: ignore[arg-type]
    assert isinstance(to, IntegerType)
    if is_float(src):
        return b.add(arith.FPToSIOp(x, to))  # saturating, NaN -> 0 (see the module doc)
    if is_bool(src):
        return b.add(arith.ExtUIOp(x, to))  # i1 -> i8, i32
    assert isinstance(src, IntegerType)
    if to.width.data > src.width.data:
        return b.add(arith.ExtSIOp(x, to))  # i8 -> i32
    low, high = -(1 << (to.width.data - 1)), (1 << (to.width.data - 1)) - 1
    clamped = b.add(arith.MaxSIOp(b.add(arith.MinSIOp(x, b.const(high, src))), b.const(low, src)))
    return b.add(arith.TruncIOp(clamped, to))  # i32 -> i8, saturated


def unary(b: ScalarBuilder, op: Operation, x: SSAValue) -> SSAValue:
    t = x.type
    if type(op) in UNARY_MATH:
        return b.add(UNARY_MATH[type(op)](x))
    if isinstance(op, nn.ReluOp):
        if is_float(t):
            return b.add(arith.MaximumfOp(x, b.const(0.0, t)))
        return b.add(arith.MaxSIOp(x, b.const(0, t)))
    if isinstance(op, nn.NegOp):
        if is_float(t):
            return b.add(arith.NegfOp(x))
        return b.add(arith.SubiOp(b.const(0, t), x))
    if isinstance(op, nn.AbsOp):
        return b.add(math.AbsFOp(x) if is_float(t) else math.AbsIOp(x))
    if isinstance(op, nn.SigmoidOp):
        return sigmoid(b, x)
    if isinstance(op, nn.SiluOp):
        return b.add(arith.MulfOp(x, sigmoid(b, x)))
    if isinstance(op, nn.GeluOp):
        return gelu(b, x, str_prop(op, "approximate"))
    raise ScalarOpError(f"'{op.name}' is not an elementwise op fusec can fuse", op)


def build_scalar(op: Operation, operands: Sequence[SSAValue]) -> tuple[list[Operation], SSAValue]:
    """The detached scalar ops computing one element of the ``nn`` op ``op``, and their value.

    ``operands`` are scalars of the element types of ``op``'s operands. A same-type cast builds
    no op and returns its operand.
    """
    b = ScalarBuilder()
    if type(op) in BINARY:
        float_op, int_op = BINARY[type(op)]
        scalar_op = float_op if is_float(operands[0].type) else int_op
        assert scalar_op is not None, f"{op.name} on {operands[0].type}"
        value = b.add(scalar_op(operands[0], operands[1]))
    elif isinstance(op, nn.CastOp):
        value = cast(b, operands[0], element_type(op.result.type))
    elif isinstance(op, nn.CmpOp):
        fpred, ipred = CMP[str_prop(op, "predicate")]
        if is_float(operands[0].type):
            value = b.add(arith.CmpfOp(operands[0], operands[1], fpred))
        else:
            value = b.add(arith.CmpiOp(operands[0], operands[1], ipred))
    elif isinstance(op, nn.WhereOp):
        value = b.add(arith.SelectOp(*operands))
    else:
        value = unary(b, op, operands[0])
    return b.ops, value


def step_count(ops: Sequence[Operation]) -> int:
    """How many steps (scalar ops other than constants and the terminator) ``ops`` hold."""
    return sum(1 for o in ops if not isinstance(o, arith.ConstantOp | fused.YieldOp))


# --- backward: scalar ops -> nn ops --------------------------------------------------------------

# Builds an nn op from its operands' tensors and its result type.
NNFactory = Callable[[list[SSAValue], TensorType], Operation]


def binary_factory(cls: type[Operation]) -> NNFactory:
    return lambda args, t: cls(args[0], args[1], t)


def unary_factory(cls: type[Operation]) -> NNFactory:
    return lambda args, t: cls(args[0])


def cast_factory(args: list[SSAValue], t: TensorType) -> Operation:
    return nn.CastOp(args[0], t)


# scalar op class -> its one nn op
INVERSE: dict[type[Operation], NNFactory] = {
    **{s: binary_factory(n) for n, pair in BINARY.items() for s in pair if s is not None},
    **{s: unary_factory(n) for n, s in UNARY_MATH.items()},
    arith.NegfOp: unary_factory(nn.NegOp),
    math.AbsFOp: unary_factory(nn.AbsOp),
    math.AbsIOp: unary_factory(nn.AbsOp),
    arith.SelectOp: lambda args, t: nn.WhereOp(args[0], args[1], args[2], t),
    arith.ExtFOp: cast_factory,
    arith.TruncFOp: cast_factory,
    arith.SIToFPOp: cast_factory,
    arith.FPToSIOp: cast_factory,
    arith.UIToFPOp: cast_factory,
    arith.ExtUIOp: cast_factory,
    arith.ExtSIOp: cast_factory,
}

# arith.cmpf / arith.cmpi predicate -> nn.cmp predicate
CMP_INVERSE: dict[str, str] = {f: p for p, (f, _) in CMP.items()} | {
    i: p for p, (_, i) in CMP.items()
}


def cmp_predicate(op: arith.CmpfOp | arith.CmpiOp) -> str:
    names = (
        arith.CMPF_COMPARISON_OPERATIONS
        if isinstance(op, arith.CmpfOp)
        else arith.CMPI_COMPARISON_OPERATIONS
    )
    return names[op.predicate.value.data]


def inverse_factory(op: Operation) -> NNFactory:
    """How to rebuild the one ``nn`` op of the scalar op ``op``."""
    if type(op) in INVERSE:
        return INVERSE[type(op)]
    if isinstance(op, arith.CmpfOp | arith.CmpiOp):
        pred = cmp_predicate(op)
        if pred in CMP_INVERSE:
            nn_pred = CMP_INVERSE[pred]
            return lambda args, t: nn.CmpOp(args[0], args[1], nn_pred, t)
        supported = ", ".join(sorted(CMP_INVERSE))
        raise ScalarOpError(
            f"'{op.name}' predicate {pred} has no nn.cmp equivalent (supported: {supported})",
            op,
        )
    raise ScalarOpError(
        f"'{op.name}' in a fused body has no nn equivalent (supported ops are "
        "listed in fusec.dialects.scalar_ops)",
        op,
    )


# --- composite patterns --------------------------------------------------------------------------

# nn unary ops whose scalar form is several ops: (nn op builder, result element type or None
# for the input's)
COMPOSITES: tuple[tuple[NNFactory, Attribute | None], ...] = (
    (unary_factory(nn.ReluOp), None),
    (unary_factory(nn.NegOp), None),
    (unary_factory(nn.SigmoidOp), None),
    (unary_factory(nn.SiluOp), None),
    (lambda args, t: nn.GeluOp(args[0], "none"), None),
    (lambda args, t: nn.GeluOp(args[0], "tanh"), None),
    (cast_factory, i1),
    (cast_factory, I8),  # i32 -> i8: clamp, then truncate
)


class Template:
    """The scalar ops that ``build_scalar`` makes of one composite ``nn`` op, on a placeholder."""

    def __init__(self, make: NNFactory, elem: Attribute, result_elem: Attribute):
        tensor_arg = Block(arg_types=[TensorType(elem, [1])]).args[0]
        self.make = make
        self.nn_op = make([tensor_arg], TensorType(result_elem, [1]))
        self.placeholder = Block(arg_types=[elem]).args[0]
        self.ops, self.root = build_scalar(self.nn_op, [self.placeholder])

    def applies(self) -> bool:
        """The nn op accepts this element type and is more than one scalar op."""
        allowed = getattr(type(self.nn_op), "ALLOWED_TYPES", None)
        elem = self.placeholder.type
        return (allowed is None or elem in allowed) and len(self.ops) > 1

    def match(self, value: SSAValue) -> SSAValue | None:
        """The value in the placeholder's place if this pattern computes ``value``."""
        binding: list[SSAValue] = []
        return binding[0] if self.match_value(self.root, value, binding) else None

    def match_value(self, pattern: SSAValue, value: SSAValue, binding: list[SSAValue]) -> bool:
        if pattern is self.placeholder:
            if not binding:
                binding.append(value)
            return binding[0] is value
        if not isinstance(pattern, OpResult) or not isinstance(value, OpResult):
            return False
        p, v = pattern.op, value.op
        if (
            type(p) is not type(v)
            or pattern.index != value.index
            or p.properties != v.properties
            or len(p.operands) != len(v.operands)
        ):
            return False
        return all(
            self.match_value(a, b, binding) for a, b in zip(p.operands, v.operands, strict=True)
        )


@cache
def templates_by_root(elem: Attribute) -> dict[str, list[Template]]:
    """The composite patterns on inputs of type ``elem``, by the name of their last op."""
    table: dict[str, list[Template]] = {}
    for make, result_elem in COMPOSITES:
        template = Template(make, elem, result_elem or elem)
        if template.applies():
            table.setdefault(template.ops[-1].name, []).append(template)
    return table


def match_composite(value: SSAValue) -> tuple[Template, SSAValue] | None:
    """The composite pattern computing ``value``, and the value it is applied to."""
    if not isinstance(value, OpResult):
        return None
    for elem in {o.type for o in value.op.operands}:
        for template in templates_by_root(elem).get(value.op.name, ()):
            x = template.match(value)
            if x is not None:
                return template, x
    return None


# --- decomposition -------------------------------------------------------------------------------


class Decomposer:
    """Rebuilds a scalar body (``block``, whose arguments stand for ``inputs``) as ``nn`` ops.

    With ``row`` (the result shape of a ``fused.row_reduce``), each ``fused.reduce_value`` becomes
    an ``nn.reduce_<kind>`` over ``axis`` (default the last) with ``keepdims``, of its operand
    broadcast to ``row`` first (a per-row value summed over the row counts once per element).
    """

    def __init__(
        self,
        block: Block,
        inputs: Sequence[SSAValue],
        row: tuple[int, ...] | None = None,
        axis: int = -1,
    ):
        self.block = block
        self.row = row
        self.axis = axis
        self.new_ops: list[Operation] = []
        self.tensor: dict[SSAValue, SSAValue] = dict(zip(block.args, inputs, strict=True))

    @classmethod
    def of(cls, op: fused.ElementwiseOp | fused.ReduceOp) -> Decomposer:
        return cls(op.body.block, list(op.inputs))

    def emit(self, new_op: Operation) -> SSAValue:
        self.new_ops.append(new_op)
        return new_op.results[0]

    def result_type(self, elem: Attribute, args: Sequence[SSAValue]) -> TensorType:
        shape = broadcast_shapes(*(shape_of(v) for v in args))
        assert shape is not None, "a verified body broadcasts"
        return TensorType(elem, shape)

    def constant(self, op: arith.ConstantOp) -> SSAValue:
        attr = op.value
        if not isinstance(attr, FloatAttr | IntegerAttr):
            raise ScalarOpError("'arith.constant' in a fused body must be a scalar", op)
        value = attr.value.data
        if attr.type == i1:
            value = 1 if value else 0
        dense = DenseIntOrFPElementsAttr.from_list(TensorType(attr.type, []), [value])
        return self.emit(nn.ConstantOp(dense))

    def terminator(self) -> fused.YieldOp:
        term = self.block.last_op
        assert isinstance(term, fused.YieldOp)
        return term

    def plan(self) -> list[tuple[Operation, tuple[Template, SSAValue] | None]]:
        """The body ops that the yielded values need, in program order, each with the composite
        pattern it is the last op of (if any). Walks back from the yield, so the ops inside a
        recognised pattern are planned only when something else needs them."""
        term = self.terminator()
        needed: set[SSAValue] = set(term.values)
        plan: list[tuple[Operation, tuple[Template, SSAValue] | None]] = []
        for body_op in reversed(list(self.block.ops)):
            if body_op is term or not any(r in needed for r in body_op.results):
                continue
            found = match_composite(body_op.results[0])
            plan.append((body_op, found))
            if found is not None:
                needed.add(found[1])
            else:
                needed.update(body_op.operands)
        plan.reverse()
        return plan

    def broadcast(self, value: SSAValue, target: tuple[int, ...]) -> SSAValue:
        """``value`` broadcast to ``target`` (``nn.where`` of an all-true constant)."""
        if shape_of(value) == target:
            return value
        true = DenseIntOrFPElementsAttr.from_list(TensorType(i1, target), [1])
        cond = self.emit(nn.ConstantOp(true))
        return self.emit(
            nn.WhereOp(cond, value, value, TensorType(element_type(value.type), target))
        )

    def reduce_row(self, op: fused.ReduceValueOp) -> SSAValue:
        if self.row is None:
            raise ScalarOpError("'fused.reduce_value' outside a fused.row_reduce body", op)
        full = self.broadcast(self.tensor[op.value], self.row)
        axis = self.axis % len(self.row)
        kept_shape = [*self.row]
        kept_shape[axis] = 1
        kept = TensorType(element_type(full.type), kept_shape)
        reduce_cls = nn.REDUCE_OPS[str_prop(op, "kind")]
        return self.emit(reduce_cls(full, [axis], kept, True))

    def run_values(self) -> list[SSAValue]:
        """Emits the nn ops; returns the tensors of the yielded values (not broadcast)."""
        for body_op, found in self.plan():
            result = body_op.results[0]
            if isinstance(body_op, arith.ConstantOp):
                self.tensor[result] = self.constant(body_op)
                continue
            if isinstance(body_op, fused.ReduceValueOp):
                self.tensor[result] = self.reduce_row(body_op)
                continue
            if found is not None:
                template, x = found
                make, args = template.make, [self.tensor[x]]
            else:
                make, args = inverse_factory(body_op), [self.tensor[v] for v in body_op.operands]
            self.tensor[result] = self.emit(make(args, self.result_type(result.type, args)))
        return [self.tensor[v] for v in self.terminator().values]

    def run(self, target: tuple[int, ...]) -> SSAValue:
        """Emits the nn ops; returns the (first) yielded value, broadcast to ``target``.
        Inputs the body does not read (or its constants) may have given a smaller shape."""
        return self.broadcast(self.run_values()[0], target)



def decompose_elementwise(op: fused.ElementwiseOp) -> tuple[list[Operation], list[SSAValue]]:
    """New detached ``nn`` ops computing ``op``, in program order, and the values replacing its
    results (one per result)."""
    decomposer = Decomposer.of(op)
    target = shape_of(op.results[0])
    values = [decomposer.broadcast(v, target) for v in decomposer.run_values()]
    return decomposer.new_ops, values


def decompose_reduce(op: fused.ReduceOp) -> tuple[list[Operation], list[SSAValue]]:
    """New detached ``nn`` ops computing ``op``: its prologue, then one ``nn.reduce_*``."""
    decomposer = Decomposer.of(op)
    shape = broadcast_shapes(*(shape_of(v) for v in op.inputs))
    assert shape is not None, "verified inputs broadcast"
    value = decomposer.run(shape)
    reduce_cls = nn.REDUCE_OPS[str_prop(op, "kind")]
    reduce = reduce_cls(
        value, list(ints_prop(op, "axes")), op.result.type, bool_prop(op, "keepdims")
    )
    decomposer.new_ops.append(reduce)
    return decomposer.new_ops, [reduce.result]


def decompose_row_reduce(op: fused.RowReduceOp) -> tuple[list[Operation], list[SSAValue]]:
    """New detached ``nn`` ops computing ``op``: the body's ops, each ``fused.reduce_value`` an
    ``nn.reduce_<kind>`` over ``op``'s axis with ``keepdims``."""
    row = shape_of(op.result)
    decomposer = Decomposer(op.body.block, list(op.inputs), row, op.row_axis())
    return decomposer.new_ops, [decomposer.run(row)]


def decompose_matmul_epilogue(
    op: fused.MatmulEpilogueOp,
) -> tuple[list[Operation], list[SSAValue]]:
    """``nn.matmul`` (of the operands' type), then the body's ops over the product and the
    extras (which may end in a cast to the result's type)."""
    result = op.result.type
    assert isinstance(result, TensorType)
    product = nn.MatmulOp(op.x, op.w, TensorType(element_of(op.x), result.get_shape()))
    decomposer = Decomposer(op.body.block, [product.result, *op.extras])
    decomposer.new_ops.append(product)
    return decomposer.new_ops, [decomposer.run(shape_of(op.result))]
