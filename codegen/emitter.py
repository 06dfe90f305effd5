"""OpenCL C for the device side of the kernel-level IR: ``kernel.func``s and epilogue regions.

Spellings live in tables (types, operators, builtins, predicates); each op kind has one small
method; what one kernel needs while it is printed (value names, lines, indentation) lives on the
`CEmitter` instance, which prints one function and is then thrown away (as tinygrad's
``OpenCLRenderer`` does). Every SSA value becomes a ``const`` local named ``v<N>``; constants are
written inline as literals. A buffer access linearises its indices row-major with the strides of
the memref's static shape (a size-1 dimension contributes nothing).

    kernel.func @k(%x: memref<4x8xf32>, %b: memref<8xf32>, %out: memref<4x8xf32>) { ... }

becomes::

    __kernel void k(__global const float *restrict x, __global const float *restrict b,
                    __global float *restrict out) {
      const int v0 = get_global_id(0);
      if (v0 < 32) {
        const int v1 = v0 % 8;
        ...
        out[v2 * 8 + v1] = v5;
      }
    }
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    VectorType,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import float_expression
from fusec.dialects import kernel
from fusec.dialects.common import HALF_TYPES, I8
from fusec.dialects.locations import first_place


class EmitError(ValueError):
    """An op or type the OpenCL emitter has no spelling for."""


# --- spellings ---------------------------------------------------------------------------------

# Scalar types of values held in registers. i1 values are ints holding 0 or 1; the 16-bit
# floats are computed on as float (see `fusec.codegen.kernels.half`).
VALUE_TYPES: dict[Attribute, str] = {
    Float32Type(): "float", Float16Type(): "float", BFloat16Type(): "float", i32: "int", i1: "int",
    I8: "char",
}

# Element types of buffers (numpy's bool is one byte; bf16 is held as its bit pattern).
BUFFER_TYPES: dict[Attribute, str] = {
    Float32Type(): "float", Float16Type(): "half", BFloat16Type(): "ushort", i32: "int",
    i1: "uchar", I8: "char",
}


INFIX: dict[type[Operation], str] = {
    arith.AddfOp: "+",
    arith.SubfOp: "-",
    arith.MulfOp: "*",
    arith.DivfOp: "/",
    arith.AddiOp: "+",
    arith.SubiOp: "-",
    arith.MuliOp: "*",
    arith.DivUIOp: "/",
    arith.RemUIOp: "%",
    arith.RemSIOp: "%",
    arith.AndIOp: "&",
    arith.OrIOp: "|",
    arith.XOrIOp: "^",
}

WRAPPING: tuple[type[Operation], ...] = (arith.AddiOp, arith.SubiOp, arith.MuliOp)
"""On ``i32`` these wrap modulo 2**32 (as numpy's int32 does): they are printed in ``uint``,
because signed overflow is undefined in OpenCL C and the compiler reasons from it (with
``x * x`` taken to never wrap, ``x * x == 0 ? 0 : y / (x * x)`` became ``x == 0 ? ..``, and
``x = INT_MIN`` divided by the wrapped 0: SIGFPE in the CPU runtime, fuzz seed 1839)."""

UNSIGNED: tuple[type[Operation], ...] = (arith.DivUIOp, arith.RemUIOp)
"""Printed in the unsigned type, as they are defined: a generated kernel's index arithmetic
(`kernel_builder.KernelBuilder.delinearize`) divides by constants, which costs a GPU fewer
instructions unsigned (no rounding toward zero of a negative dividend to correct for)."""

NAN_PROPAGATING: dict[type[Operation], str] = {
    arith.MaximumfOp: "fmax",
    arith.MinimumfOp: "fmin",
}
"""arith.maximumf/minimumf are IEEE 754-2019 maximum/minimum: NaN when either operand is NaN
(as numpy's maximum), and -0 < +0 whatever the order (``relu(-0)`` is +0: fuzz seed 1878).
OpenCL's fmax/fmin return the other operand for a NaN, and either zero for two zeros, so both
cases are selected around them (`Emitter.nan_propagating`)."""

CALLS: dict[type[Operation], str] = {
    arith.MaxSIOp: "max",
    arith.MinSIOp: "min",
    arith.MinUIOp: "min",
    mathd.ExpOp: "exp",
    mathd.LogOp: "log",
    mathd.TanhOp: "tanh",
    mathd.ErfOp: "erf",
    mathd.SqrtOp: "sqrt",
    mathd.RsqrtOp: "rsqrt",
    mathd.AbsFOp: "fabs",
    mathd.PowFOp: "pow",
    # OpenCL built-ins of the same meaning, for bodies written by hand
    mathd.AcosOp: "acos",
    mathd.AcoshOp: "acosh",
    mathd.AsinOp: "asin",
    mathd.AsinhOp: "asinh",
    mathd.AtanOp: "atan",
    mathd.Atan2Op: "atan2",
    mathd.AtanhOp: "atanh",
    mathd.CbrtOp: "cbrt",
    mathd.CeilOp: "ceil",
    mathd.CopySignOp: "copysign",
    mathd.CosOp: "cos",
    mathd.CoshOp: "cosh",
    mathd.Exp2Op: "exp2",
    mathd.ExpM1Op: "expm1",
    mathd.FloorOp: "floor",
    mathd.FmaOp: "fma",
    mathd.Log10Op: "log10",
    mathd.Log1pOp: "log1p",
    mathd.Log2Op: "log2",
    mathd.RoundOp: "round",
    mathd.RoundEvenOp: "rint",
    mathd.SinOp: "sin",
    mathd.SinhOp: "sinh",
    mathd.TanOp: "tan",
    mathd.TruncOp: "trunc",
}

_CALLED = frozenset([*CALLS.values(), *NAN_PROPAGATING.values()])

CMPF: dict[str, str] = {
    "oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<=", "une": "!=",
}
CMPI: dict[str, str] = {
    "eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
    "ult": "<", "ule": "<=", "ugt": ">", "uge": ">=",
}

WORK_ITEM_IDS: dict[type[Operation], str] = {
    kernel.GlobalIdOp: "get_global_id",
    kernel.LocalIdOp: "get_local_id",
    kernel.GroupIdOp: "get_group_id",
}

CASTS: tuple[type[Operation], ...] = (
    arith.UIToFPOp,
    arith.ExtUIOp,
    arith.ExtSIOp,
    arith.TruncIOp,
    arith.IndexCastOp,
)
"""Conversions that are a C cast: exact, or (``trunci``) keeping the low bits."""

SATURATING: dict[Attribute, str] = {i32: "convert_int_sat_rtz", I8: "convert_char_sat_rtz"}
"""``arith.fptosi`` to each integer type: toward zero, saturated, NaN -> 0 (fusec's meaning of
``fptosi``, see ``fusec.dialects.scalar_ops``; a C cast is undefined out of range)."""

VECTOR_LANES = "0123456789abcdef"
"""Lane names of OpenCL vector components (``.s0`` .. ``.sf``)."""

LOCAL_MEMORY_SPACE = IntegerAttr(3, 64)
"""``memref<..., 3 : i64>`` lives in ``__local`` memory."""

INDEX_LIMIT = 2**31 - 1
"""Largest element count indexed with ``int``; bigger buffers make a kernel index with ``long``."""


def int_literal(value: int, t: Attribute) -> str:
    if t == i1:
        return "1" if value else "0"
    if value == -(2**31):
        return "(-2147483647 - 1)"
    return f"({value})" if value < 0 else str(value)


def where(op: Operation) -> str:
    """`` at file:line:col`` of ``op`` (body ops keep their source location), else ``""``."""
    place = first_place(op.location)
    return "" if place is None else f" at {place}"


_C_WORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while bool true false _Bool _Complex _Imaginary
    __kernel kernel __global global __local local __constant constant __private private
    __read_only read_only __write_only write_only __read_write read_write uniform pipe
    uchar ushort uint ulong half size_t ptrdiff_t intptr_t uintptr_t event_t sampler_t
    image1d_t image2d_t image3d_t NULL
    abs fabs fmax fmin max min mad select isnan isinf isfinite signbit barrier mem_fence
    get_global_id get_local_id get_group_id get_global_size get_local_size get_num_groups
    get_work_dim convert_float convert_int sign clamp mix step dot length
""".split())
"""Words an argument of a generated kernel may not be named: C and OpenCL C keywords and
types, and the built-ins that fusec's kernels call (a parameter ``exp`` would hide ``exp()``)."""

_C_TYPE_OR_BUILTIN = re.compile(
    r"(?:char|uchar|short|ushort|int|uint|long|ulong|float|double|half|bool)(?:2|3|4|8|16)?"
    r"|(?:vload|vstore|convert_|as_|native_|half_|atomic_|async_|read_image|write_image)\w*"
    r"|__\w*"
)


def c_identifier(name: str | None) -> str | None:
    """``name`` (an argument's name in the IR) if it is safe as an OpenCL C identifier: not a
    keyword, type or built-in the kernel may use, and not ``v...`` (fusec's temporaries)."""
    if not name or not name.isidentifier() or not name.isascii() or name.startswith("v"):
        return None
    if name in _C_WORDS or name in _CALLED or _C_TYPE_OR_BUILTIN.fullmatch(name):
        return None
    return name


class CEmitter:
    """Prints one ``kernel.func`` or one epilogue region as OpenCL C."""

    def __init__(self, index_type: str = "int",
                 calls: dict[type[Operation], str] | None = None):
        self.index_type = index_type
        self.calls = {**CALLS, **(calls or {})}
        """Function spelled for each call-like op (``calls`` overrides `CALLS`)."""
        self.names: dict[SSAValue, str] = {}
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0
        self.handlers: dict[type[Operation], Callable[[Operation], None]] = {
            **{cls: self.infix for cls in INFIX},
            **{cls: self.call for cls in CALLS},
            **{cls: self.nan_propagating for cls in NAN_PROPAGATING},
            **{cls: self.work_item_id for cls in WORK_ITEM_IDS},
            **{cls: self.cast for cls in CASTS},
            arith.ConstantOp: self.constant,
            arith.ExtFOp: self.convertf,
            arith.TruncFOp: self.convertf,
            arith.SIToFPOp: self.sitofp,
            arith.FPToSIOp: self.fptosi,
            arith.NegfOp: self.negf,
            arith.DivSIOp: self.divsi,
            arith.CmpfOp: self.cmpf,
            arith.CmpiOp: self.cmpi,
            arith.SelectOp: self.select,
            mathd.AbsIOp: self.absi,
            memref.AllocaOp: self.alloca,
            memref.LoadOp: self.load,
            memref.StoreOp: self.store,
            vector.LoadOp: self.vload,
            vector.StoreOp: self.vstore,
            vector.BroadcastOp: self.broadcast,
            vector.ExtractOp: self.extract,
            scf.IfOp: self.if_,
            scf.ForOp: self.for_,
            scf.YieldOp: self.yield_,
            kernel.BarrierOp: self.barrier,
            kernel.ReturnOp: self.return_,
            kernel.YieldOp: self.epilogue_yield,
        }
        self.loop_results: list[list[str]] = []
        self.uses_half = False
        """Whether the printed code calls the 16-bit float helpers (`half.HELPERS`)."""
        self.bf16_widths: set[int] = set()
        """The widths of the bf16 vectors stored (each needs `half.bf16_vector_helper`)."""
        self.uses_aligned = False
        """Whether the printed code reads or writes 16-bit vectors as ``uint4``s
        (`half.ALIGNED_HELPERS`)."""

    # --- whole functions --------------------------------------------------------------------

    def kernel_function(self, fn: kernel.FuncOp) -> str:
        """``__kernel void name(...) { ... }``."""
        written = {op.operands[1] if isinstance(op, memref.StoreOp | vector.StoreOp) else None
                   for op in fn.walk()}
        params = []
        for i, arg in enumerate(fn.args):
            name = self.name_arg(arg, f"a{i}")
            params.append(self.pointer(arg.type, name, const=arg not in written))
        self.block(fn.body.block)
        body = "\n".join(self.lines)
        signature = ",\n    ".join(params)
        return (f"{self.preamble()}__kernel void {fn.sym_name.data}(\n    {signature}) "
                f"{{\n{body}\n}}\n")

    def epilogue_function(self, name: str, block: Block, extra_names: Sequence[str]) -> str:
        """``inline T name(float acc, int row, int col, <buffers>) { ... }``; ``T`` is the value
        type of what the region yields (``float``, or ``int``/``char`` after a cast)."""
        params = self.epilogue_params(block, extra_names, self.value_type(block.args[0].type))
        self.block(block)
        body = "\n".join(self.lines)
        term = block.last_op
        assert term is not None and len(term.operands) == 1
        result = self.value_type(term.operands[0].type)
        return f"{self.preamble()}inline {result} {name}({', '.join(params)}) {{\n{body}\n}}\n"

    def epilogue_params(self, block: Block, extra_names: Sequence[str], acc_type: str) -> list[str]:
        """Names an epilogue region's arguments (``acc``, ``row``, ``col``, `extra_names`) and
        returns the function's parameter declarations, the accumulator of C type `acc_type`."""
        acc, row, col, *extras = block.args
        self.names.update({acc: "acc", row: "row", col: "col"})
        params = [f"{acc_type} acc", "int row", "int col"]
        for arg, extra in zip(extras, extra_names, strict=False):
            self.names[arg] = extra
            params.append(self.pointer(arg.type, extra, const=True))
        return params

    def value_function(self, name: str, block: Block, arg_names: Sequence[str]) -> str:
        """``inline T name(T0 a0, ...) { ...; return v; }`` of a block of scalar (or vector)
        ops whose arguments are values and which ends in ``kernel.yield`` of one value."""
        params = []
        for arg, arg_name in zip(block.args, arg_names, strict=True):
            self.names[arg] = arg_name
            params.append(f"{self.value_type(arg.type)} {arg_name}")
        self.block(block)
        term = block.last_op
        assert term is not None and len(term.operands) == 1
        result = self.value_type(term.operands[0].type)
        body = "\n".join(self.lines)
        return f"{self.preamble()}inline {result} {name}({', '.join(params)}) {{\n{body}\n}}\n"

    def pointer(self, t: Attribute, name: str, const: bool) -> str:
        if not isinstance(t, MemRefType):
            raise EmitError(f"kernel argument {name} of type {t} is not a buffer")
        elem = self.buffer_type(t.element_type)
        return f"__global {'const ' if const else ''}{elem} *restrict {name}"

    def preamble(self) -> str:
        """The 16-bit float helpers when the code uses them, else nothing."""
        if not self.uses_half:
            return ""
        return (half.HELPERS + (half.ALIGNED_HELPERS if self.uses_aligned else "")
                + "".join(half.bf16_vector_helper(w) for w in sorted(self.bf16_widths)))

    # --- names, types, lines ------------------------------------------------------------------

    def name_arg(self, arg: SSAValue, fallback: str) -> str:
        name = c_identifier(arg.name_hint) or fallback
        if name in self.names.values():
            name = f"{name}_{len(self.names)}"
        self.names[arg] = name
        return name

    def fresh(self, value: SSAValue) -> str:
        name = f"v{self.counter}"
        self.counter += 1
        self.names[value] = name
        return name

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def value_type(self, t: Attribute) -> str:
        if isinstance(t, IndexType):
            return self.index_type
        if isinstance(t, VectorType):
            return f"{self.value_type(t.element_type)}{t.get_shape()[0]}"
        if t not in VALUE_TYPES:
            raise EmitError(f"the OpenCL backend has no value type for {t}")
        return VALUE_TYPES[t]

    def buffer_type(self, t: Attribute) -> str:
        if t not in BUFFER_TYPES:
            raise EmitError(f"the OpenCL backend has no buffer element type for {t}")
        return BUFFER_TYPES[t]

    def ref(self, value: SSAValue) -> str:
        """How an operand is written: its name, or a literal for a constant."""
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return self.literal(owner)
        return self.names[value]

    def define(self, op: Operation, expr: str) -> None:
        result = op.results[0]
        self.line(f"const {self.value_type(result.type)} {self.fresh(result)} = {expr};")

    def block(self, block: Block) -> None:
        for op in block.ops:
            handler = self.handlers.get(type(op))
            if handler is None:
                raise EmitError(f"the OpenCL emitter cannot print '{op.name}'{where(op)}")
            handler(op)

    # --- ops ----------------------------------------------------------------------------------

    def literal(self, op: arith.ConstantOp) -> str:
        value = op.value
        if isinstance(value, FloatAttr):
            return float_expression(value.value.data)
        if isinstance(value, IntegerAttr):
            return int_literal(value.value.data, value.type)
        raise EmitError(f"the OpenCL emitter cannot write the constant {value}")

    def constant(self, op: Operation) -> None:
        return  # written inline where used

    def infix(self, op: Operation) -> None:
        lhs, rhs = (self.ref(v) for v in op.operands)
        if isinstance(op, WRAPPING) and op.results[0].type == i32:
            self.define(op, f"(int)((uint){lhs} {INFIX[type(op)]} (uint){rhs})")
            return
        if isinstance(op, UNSIGNED) and not isinstance(op.results[0].type, VectorType):
            t = self.value_type(op.results[0].type)
            self.define(op, f"({t})((u{t}){lhs} {INFIX[type(op)]} (u{t}){rhs})")
            return
        self.define(op, f"{lhs} {INFIX[type(op)]} {rhs}")

    def call(self, op: Operation) -> None:
        args = ", ".join(self.ref(v) for v in op.operands)
        self.define(op, f"{self.calls[type(op)]}({args})")

    def nan_propagating(self, op: Operation) -> None:
        lhs, rhs = (self.ref(v) for v in op.operands)
        call = f"{NAN_PROPAGATING[type(op)]}({lhs}, {rhs})"
        # Where an operand is NaN or both are zeros, the result is their sum: NaN, or the zero
        # signed as IEEE maximum has it (-0 + +0 is +0); for minimum, -(-a - b) (-0 if either
        # is). |a| + |b| has the result's type (vector or scalar), so its tests select by lane.
        both = f"{lhs} + {rhs}" if isinstance(op, arith.MaximumfOp) else f"-(-({lhs}) - {rhs})"
        size = f"fabs({lhs}) + fabs({rhs})"
        self.define(op, f"select({call}, {both}, isnan({size}) | ({size} == 0.0f))")

    def negf(self, op: Operation) -> None:
        self.define(op, f"-{self.ref(op.operands[0])}")

    def divsi(self, op: Operation) -> None:
        """Truncating division as the reference's: ``x / 0`` is 0 and ``x / -1`` is ``-x``
        wrapped (``INT_MIN / -1`` is ``INT_MIN``). Both are undefined in OpenCL C (and trap in
        x86's ``idiv``), so the division is by a safe divisor (1 in their place) and the two
        cases are selected after: no division sits behind a branch the compiler could hoist
        it out of."""
        lhs, rhs = (self.ref(v) for v in op.operands)
        divisor = op.operands[1].owner
        if (isinstance(divisor, arith.ConstantOp) and isinstance(divisor.value, IntegerAttr)
                and divisor.value.value.data not in (0, -1)):
            self.define(op, f"{lhs} / {rhs}")
            return
        t = self.value_type(op.results[0].type)
        safe = f"v{self.counter}"
        self.counter += 1
        self.line(f"const {t} {safe} = ({rhs} == 0 | {rhs} == -1) ? 1 : {rhs};")
        negated = f"({t})(({'u' + t})0 - ({'u' + t}){lhs})"
        self.define(op, f"{rhs} == 0 ? 0 : {rhs} == -1 ? {negated} : {lhs} / {safe}")

    def absi(self, op: Operation) -> None:
        self.define(op, f"(int)abs({self.ref(op.operands[0])})")

    def cmpf(self, op: Operation) -> None:
        assert isinstance(op, arith.CmpfOp)
        pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        if pred not in CMPF:
            raise EmitError(f"the OpenCL emitter has no spelling for arith.cmpf {pred}")
        lhs, rhs = (self.ref(v) for v in op.operands)
        self.define(op, f"{lhs} {CMPF[pred]} {rhs}")

    def cmpi(self, op: Operation) -> None:
        assert isinstance(op, arith.CmpiOp)
        pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        lhs, rhs = (self.ref(v) for v in op.operands)
        self.define(op, f"{lhs} {CMPI[pred]} {rhs}")

    def select(self, op: Operation) -> None:
        cond, lhs, rhs = (self.ref(v) for v in op.operands)
        self.define(op, f"{cond} ? {lhs} : {rhs}")

    def convertf(self, op: Operation) -> None:
        """``arith.extf`` / ``arith.truncf``: every float is a ``float`` in registers, so a
        conversion to a 16-bit type rounds to its precision (f16 -> bf16 is an ``extf`` that
        rounds too), and one to f32 is exact."""
        to = op.results[0].type
        if to in HALF_TYPES:
            self.uses_half = True
        self.define(op, half.round_to(str(to), self.ref(op.operands[0])))

    def sitofp(self, op: Operation) -> None:
        """``arith.sitofp``: to float (nearest even), then to a 16-bit type's precision (so i32
        -> bf16 rounds through f32, as the reference does)."""
        to = op.results[0].type
        if to in HALF_TYPES:
            self.uses_half = True
        self.define(op, half.round_to(str(to), f"(float){self.ref(op.operands[0])}"))

    def fptosi(self, op: Operation) -> None:
        to = op.results[0].type
        if to not in SATURATING:
            raise EmitError(f"the OpenCL backend has no conversion of floats to {to}{where(op)}")
        self.define(op, f"{SATURATING[to]}({self.ref(op.operands[0])})")

    def cast(self, op: Operation) -> None:
        to = self.value_type(op.results[0].type)
        self.define(op, f"({to}){self.ref(op.operands[0])}")

    def work_item_id(self, op: Operation) -> None:
        assert isinstance(op, kernel.WorkItemIdOp)
        fn = WORK_ITEM_IDS[type(op)]
        self.define(op, f"({self.index_type}){fn}({op.dim.value.data})")

    def offset(self, mtype: Attribute, indices: Sequence[SSAValue]) -> str:
        """The row-major element offset of ``indices`` in a buffer of type ``mtype``."""
        assert isinstance(mtype, MemRefType)
        shape = mtype.get_shape()
        stride = 1
        const = 0
        terms: list[str] = []
        for size, index in reversed(list(zip(shape, indices, strict=False))):
            owner = index.owner
            if isinstance(owner, arith.ConstantOp):
                assert isinstance(owner.value, IntegerAttr)
                const += owner.value.value.data * stride
            elif size != 1:
                name = self.names[index]
                terms.append(name if stride == 1 else f"{name} * {stride}")
            stride *= size
        terms.reverse()
        if const or not terms:
            terms.append(str(const))
        return " + ".join(terms)

    def alloca(self, op: Operation) -> None:
        """A work-group buffer (memory space 3): ``__local float vN[size];``."""
        assert isinstance(op, memref.AllocaOp)
        t = op.memref.type
        assert isinstance(t, MemRefType)
        if t.memory_space != LOCAL_MEMORY_SPACE:
            raise EmitError(f"the OpenCL emitter prints memref.alloca in local memory only: {t}")
        name = self.fresh(op.memref)
        elem = "float" if t.element_type in HALF_TYPES else self.buffer_type(t.element_type)
        self.line(f"__local {elem} {name}[{t.element_count()}];")

    def load(self, op: Operation) -> None:
        assert isinstance(op, memref.LoadOp)
        at = self.offset(op.memref.type, op.indices)
        self.define(op, half.load(self.storage(op.memref), self.names[op.memref], at))

    def store(self, op: Operation) -> None:
        assert isinstance(op, memref.StoreOp)
        at = self.offset(op.memref.type, op.indices)
        value = self.ref(op.value)
        if op.value.type == i1:
            value = f"(uchar)({value} != 0)"
        self.line(f"{half.store(self.storage(op.memref), self.names[op.memref], at, value)};")

    def storage(self, buffer: SSAValue) -> str:
        """How `half` spells the element type of ``buffer`` (``f16``, ``bf16``, or any other
        name for a plain access); local 16-bit buffers hold floats."""
        t = buffer.type
        assert isinstance(t, MemRefType)
        if t.element_type not in HALF_TYPES or t.memory_space == LOCAL_MEMORY_SPACE:
            return "plain"
        self.uses_half = True
        return str(t.element_type)

    def vload(self, op: Operation) -> None:
        assert isinstance(op, vector.LoadOp)
        lanes = op.result.type.get_shape()[0]
        at = self.offset(op.base.type, op.indices)
        pointer = f"{self.names[op.base]} + {at}"
        if kernel.ALIGNED in op.attributes and lanes == kernel.ALIGNED_LANES:
            self.uses_aligned = True
            self.define(op, half.aligned_vload(self.storage(op.base), pointer))
            return
        self.define(op, half.vload(self.storage(op.base), lanes, "0", pointer))

    def vstore(self, op: Operation) -> None:
        assert isinstance(op, vector.StoreOp)
        lanes = op.vector.type.get_shape()[0]
        at = self.offset(op.base.type, op.indices)
        storage = self.storage(op.base)
        if storage == "bf16":
            self.bf16_widths.add(lanes)
        pointer = f"{self.names[op.base]} + {at}"
        if kernel.ALIGNED in op.attributes and lanes == kernel.ALIGNED_LANES:
            self.uses_aligned = True
            self.line(f"{half.aligned_vstore(storage, self.ref(op.vector), pointer)};")
            return
        self.line(f"{half.vstore(storage, lanes, self.ref(op.vector), '0', pointer)};")

    def broadcast(self, op: Operation) -> None:
        t = self.value_type(op.results[0].type)
        self.define(op, f"({t})({self.ref(op.operands[0])})")

    def extract(self, op: Operation) -> None:
        """One lane of a vector at a constant position: ``v.s3``."""
        assert isinstance(op, vector.ExtractOp)
        position = op.static_position.get_values()
        if len(position) != 1 or op.dynamic_position:
            raise EmitError("the OpenCL emitter prints vector.extract of one constant lane only")
        self.define(op, f"{self.ref(op.vector)}.s{VECTOR_LANES[position[0]]}")

    def if_(self, op: Operation) -> None:
        assert isinstance(op, scf.IfOp)
        if op.results:
            raise EmitError("the OpenCL emitter prints scf.if without results only")
        self.line(f"if ({self.ref(op.cond)}) {{")
        self.nested(op.true_region.block)
        if op.false_region.blocks:
            self.line("} else {")
            self.nested(op.false_region.block)
        self.line("}")

    def for_(self, op: Operation) -> None:
        assert isinstance(op, scf.ForOp)
        carried: list[str] = []
        for init, result in zip(op.iter_args, op.results, strict=False):
            name = self.fresh(result)
            self.line(f"{self.value_type(result.type)} {name} = {self.ref(init)};")
            carried.append(name)
        body = op.body.block
        index = self.fresh(body.args[0])
        for arg, name in zip(body.args[1:], carried, strict=False):
            self.names[arg] = name
        lb, ub, step = self.ref(op.lb), self.ref(op.ub), self.ref(op.step)
        increment = f"++{index}" if step == "1" else f"{index} += {step}"
        self.line(f"for ({self.index_type} {index} = {lb}; {index} < {ub}; {increment}) {{")
        self.loop_results.append(carried)
        self.nested(body)
        self.loop_results.pop()
        self.line("}")

    def yield_(self, op: Operation) -> None:
        if not op.operands:
            return
        if not isinstance(op.parent_op(), scf.ForOp):
            raise EmitError("the OpenCL emitter prints scf.yield of values in scf.for only")
        for name, value in zip(self.loop_results[-1], op.operands, strict=False):
            self.line(f"{name} = {self.ref(value)};")

    def nested(self, block: Block) -> None:
        self.depth += 1
        self.block(block)
        self.depth -= 1

    def barrier(self, op: Operation) -> None:
        self.line("barrier(CLK_LOCAL_MEM_FENCE);")

    def return_(self, op: Operation) -> None:
        return

    def epilogue_yield(self, op: Operation) -> None:
        self.line(f"return {self.ref(op.operands[0])};")


def needs_long_index(arg_types: Sequence[Attribute]) -> bool:
    return any(
        isinstance(t, MemRefType) and t.element_count() > INDEX_LIMIT for t in arg_types
    )


def emit_kernel(fn: kernel.FuncOp) -> str:
    """The OpenCL C of one generated kernel."""
    index = "long" if needs_long_index(fn.function_type.inputs.data) else "int"
    return CEmitter(index).kernel_function(fn)


def emit_epilogue(name: str, block: Block, extra_names: Sequence[str]) -> str:
    """The OpenCL C function of an epilogue region; its buffers are named ``extra_names``."""
    return CEmitter().epilogue_function(name, block, extra_names)


def emit_value_function(name: str, block: Block, arg_names: Sequence[str],
                        calls: dict[type[Operation], str] | None = None) -> str:
    """The OpenCL C function of a block of value ops ending in ``kernel.yield`` (see
    `CEmitter.value_function`); ``calls`` respells call-like ops (``math.exp`` -> a helper)."""
    return CEmitter(calls=calls).value_function(name, block, arg_names)


__all__ = ["CEmitter", "EmitError", "emit_epilogue", "emit_kernel", "emit_value_function"]
