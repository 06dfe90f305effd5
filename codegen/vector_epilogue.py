"""An epilogue region as an OpenCL C function over a vector of adjacent output columns.

A GEMM keeps its accumulators in ``float<N>`` registers, N adjacent columns of one row. The
scalar epilogue (`emitter.emit_epilogue`) is called once per lane; this one takes the whole
vector, so the epilogue's math runs on vectors too: a CPU runtime calls its vector ``erf`` or
``exp`` once instead of N scalar ones (an erf-GELU epilogue on a 128x768x3072 GEMM goes from
4.7 to 3.4 ms on two Zen 4 cores), and the epilogue's own operands (a bias row, a residual)
are read with one ``vload<N>``::

    inline float8 k_epilogue_v8(float8 acc, int row, int col, __global const float *epi0) {
      const float8 v0 = vload8(0, epi0 + col);   // lanes read epi0[col .. col + 7]
      ...
    }

Lane ``i`` is the output element at (``row``, ``col + i``). Each value of the region is one of

- *uniform*: the same in every lane (``row``, constants, what only they feed), a scalar;
- *affine*: an integer that is ``base + stride * i`` in lane ``i`` with a constant stride
  (``col``, ``row * n + col``), held as its scalar base, so that a load at an affine offset of
  stride 1 is one ``vload`` and one of stride 0 is a scalar load;
- *vector*: any other value, a ``float<N>`` or ``int<N>``;
- *mask*: a comparison of vectors, an ``int<N>`` of -1 (true) and 0 (false), as OpenCL's
  vector comparisons give them; used only as a ``select`` condition or in another mask.

Every lane computes what the scalar function computes on its element, with the same built-ins
in the same order, so the results are the same bits (the vector built-ins are the scalar ones
lane by lane: OpenCL requires the same accuracy of both). A region with an op outside this
subset (loops, integer wrapping, casts to integers, a mask used as a number) gets no vector
function (`emit_vector_epilogue` returns None) and the kernel stores lane by lane as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from fusec.codegen.emitter import (
    CALLS,
    CMPF,
    CMPI,
    NAN_PROPAGATING,
    VALUE_TYPES,
    VECTOR_LANES,
    CEmitter,
    EmitError,
)
from fusec.codegen.kernels import half
from fusec.dialects import kernel

VECTOR_WIDTHS = (2, 4, 8, 16)
"""The widths of OpenCL vectors a GEMM's register tiles use."""

FLOAT_CALLS = frozenset(
    cls for cls in CALLS if cls.__module__ == mathd.__name__
)
"""The ``math`` ops spelled as a float built-in; each has a ``float<N>`` overload."""

INDEX_ARITH: dict[type[Operation], str] = {
    arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*",
    arith.DivUIOp: "/", arith.RemUIOp: "%",
}
FLOAT_ARITH: dict[type[Operation], str] = {
    arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
}
MASK_LOGIC: dict[type[Operation], str] = {arith.AndIOp: "&", arith.OrIOp: "|"}


class NotVectorizable(EmitError):
    """The region has an op this emitter does not print on vectors."""


@dataclass(frozen=True)
class Lanes:
    """How a value varies across the lanes (see the module docstring)."""

    kind: str
    """``uniform``, ``affine``, ``vector`` or ``mask``."""
    stride: int = 0
    """Of an affine value: how much it grows from one lane to the next."""


UNIFORM = Lanes("uniform")
VECTOR = Lanes("vector")
MASK = Lanes("mask")


class VectorEpilogueEmitter(CEmitter):
    """Prints one epilogue region as a function of ``float<lanes>`` accumulators."""

    def __init__(self, lanes: int):
        super().__init__()
        if lanes not in VECTOR_WIDTHS:
            raise ValueError(f"no OpenCL vector has {lanes} lanes; widths: {VECTOR_WIDTHS}")
        self.width = lanes
        self.lanes: dict[SSAValue, Lanes] = {}
        handlers = {
            **{cls: self.index_arith for cls in INDEX_ARITH},
            **{cls: self.float_arith for cls in FLOAT_ARITH},
            **{cls: self.float_call for cls in FLOAT_CALLS},
            **{cls: self.nan_propagating_vector for cls in NAN_PROPAGATING},
            **{cls: self.mask_logic for cls in MASK_LOGIC},
            arith.ConstantOp: self.constant,
            arith.NegfOp: self.negf_vector,
            arith.CmpfOp: self.compare,
            arith.CmpiOp: self.compare,
            arith.SelectOp: self.select_vector,
            arith.IndexCastOp: self.index_cast,
            arith.SIToFPOp: self.int_to_float,
            arith.ExtFOp: self.round_float,
            arith.TruncFOp: self.round_float,
            memref.LoadOp: self.load_vector,
            kernel.YieldOp: self.yield_vector,
        }
        self.handlers = handlers

    def function(self, name: str, block: Block, extra_names: Sequence[str]) -> str:
        """``inline float<N> name(float<N> acc, int row, int col, <buffers>)``."""
        acc, row, col, *_ = block.args
        if VALUE_TYPES.get(acc.type) != "float":
            raise NotVectorizable(f"an accumulator of type {acc.type}")
        params = self.epilogue_params(block, extra_names, f"float{self.width}")
        self.lanes.update({acc: VECTOR, row: UNIFORM, col: Lanes("affine", 1)})
        self.block(block)
        body = "\n".join(self.lines)
        return (f"{self.preamble()}inline float{self.width} {name}({', '.join(params)}) "
                f"{{\n{body}\n}}\n")

    # --- lanes of values ------------------------------------------------------------------------

    def lanes_of(self, value: SSAValue) -> Lanes:
        if isinstance(value.owner, arith.ConstantOp):
            return UNIFORM
        return self.lanes[value]

    def vector_type(self, t: Attribute) -> str:
        scalar = self.value_type(t)
        if scalar not in ("float", "int"):
            raise NotVectorizable(f"a vector of {t}")
        return f"{scalar}{self.width}"

    def iota(self) -> str:
        """``(int<N>)(0, 1, ..., N-1)``: each lane's number."""
        return f"(int{self.width})({', '.join(str(i) for i in range(self.width))})"

    def as_vector(self, value: SSAValue) -> str:
        """``value`` as a vector of its lanes, whatever its kind."""
        lanes, ref = self.lanes_of(value), self.ref(value)
        if lanes.kind in ("vector", "mask"):
            return ref
        t = self.vector_type(value.type)
        if lanes.kind == "uniform":
            return f"(({t})({ref}))"
        return f"(({t})({ref}) + {self.iota()} * {lanes.stride})"

    def as_mask(self, value: SSAValue) -> str:
        """A condition as a mask: a uniform ``0``/``1`` becomes 0 or -1 in every lane."""
        lanes = self.lanes_of(value)
        if lanes.kind == "mask":
            return self.ref(value)
        if lanes.kind == "uniform":
            return f"((int{self.width})(-({self.ref(value)})))"
        raise NotVectorizable("a condition that is a number in each lane")

    def define_lanes(self, op: Operation, lanes: Lanes, expr: str) -> None:
        result = op.results[0]
        if lanes.kind == "vector":
            t = self.vector_type(result.type)
        elif lanes.kind == "mask":
            t = f"int{self.width}"
        else:
            t = self.value_type(result.type)
        self.lanes[result] = lanes
        self.line(f"const {t} {self.fresh(result)} = {expr};")

    # --- ops ----------------------------------------------------------------------------------

    def index_arith(self, op: Operation) -> None:
        """``+ - *`` keep a value affine where they can; ``/ %`` of one that is not uniform
        make a vector. Only on ``index`` (i32's wrapping arithmetic is not vectorised)."""
        if not isinstance(op.results[0].type, IndexType):
            raise NotVectorizable(f"'{op.name}' on {op.results[0].type}")
        lhs, rhs = op.operands
        a, b = self.lanes_of(lhs), self.lanes_of(rhs)
        symbol = INDEX_ARITH[type(op)]
        if a.kind == b.kind == "uniform":
            self.define_lanes(op, UNIFORM, f"{self.ref(lhs)} {symbol} {self.ref(rhs)}")
            return
        affine = a.kind in ("affine", "uniform") and b.kind in ("affine", "uniform")
        if affine and isinstance(op, arith.AddiOp | arith.SubiOp):
            stride = a.stride + b.stride if isinstance(op, arith.AddiOp) else a.stride - b.stride
            self.define_lanes(op, Lanes("affine", stride),
                              f"{self.ref(lhs)} {symbol} {self.ref(rhs)}")
            return
        if affine and isinstance(op, arith.MuliOp):
            factor = _constant_int(rhs) if a.kind == "affine" else _constant_int(lhs)
            if factor is not None:
                stride = (a.stride if a.kind == "affine" else b.stride) * factor
                self.define_lanes(op, Lanes("affine", stride),
                                  f"{self.ref(lhs)} {symbol} {self.ref(rhs)}")
                return
        self.define_lanes(op, VECTOR, f"{self.as_vector(lhs)} {symbol} {self.as_vector(rhs)}")

    def float_arith(self, op: Operation) -> None:
        lhs, rhs = op.operands
        symbol = FLOAT_ARITH[type(op)]
        if self.lanes_of(lhs).kind == self.lanes_of(rhs).kind == "uniform":
            self.define_lanes(op, UNIFORM, f"{self.ref(lhs)} {symbol} {self.ref(rhs)}")
            return
        self.define_lanes(op, VECTOR, f"{self.as_vector(lhs)} {symbol} {self.as_vector(rhs)}")

    def float_call(self, op: Operation) -> None:
        if VALUE_TYPES.get(op.results[0].type) != "float":
            raise NotVectorizable(f"'{op.name}' on {op.results[0].type}")
        if all(self.lanes_of(v).kind == "uniform" for v in op.operands):
            args = ", ".join(self.ref(v) for v in op.operands)
            self.define_lanes(op, UNIFORM, f"{self.calls[type(op)]}({args})")
            return
        args = ", ".join(self.as_vector(v) for v in op.operands)
        self.define_lanes(op, VECTOR, f"{self.calls[type(op)]}({args})")

    def nan_propagating_vector(self, op: Operation) -> None:
        """As `CEmitter.nan_propagating`, whose ``select`` on ``isnan`` already works lane by
        lane on vectors."""
        if all(self.lanes_of(v).kind == "uniform" for v in op.operands):
            lanes = UNIFORM
            lhs, rhs = (self.ref(v) for v in op.operands)
        else:
            lanes = VECTOR
            lhs, rhs = (self.as_vector(v) for v in op.operands)
        call = f"{NAN_PROPAGATING[type(op)]}({lhs}, {rhs})"
        both = f"{lhs} + {rhs}" if isinstance(op, arith.MaximumfOp) else f"-(-({lhs}) - {rhs})"
        size = f"fabs({lhs}) + fabs({rhs})"
        self.define_lanes(op, lanes, f"select({call}, {both}, isnan({size}) | ({size} == 0.0f))")

    def negf_vector(self, op: Operation) -> None:
        source = op.operands[0]
        if self.lanes_of(source).kind == "uniform":
            self.define_lanes(op, UNIFORM, f"-{self.ref(source)}")
            return
        self.define_lanes(op, VECTOR, f"-{self.as_vector(source)}")

    def compare(self, op: Operation) -> None:
        if isinstance(op, arith.CmpfOp):
            pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            if pred not in CMPF:
                raise NotVectorizable(f"arith.cmpf {pred}")
            symbol = CMPF[pred]
        else:
            assert isinstance(op, arith.CmpiOp)
            pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            if pred.startswith("u") or not isinstance(op.operands[0].type, IndexType):
                raise NotVectorizable(f"arith.cmpi {pred} on {op.operands[0].type}")
            symbol = CMPI[pred]
        lhs, rhs = op.operands
        if self.lanes_of(lhs).kind == self.lanes_of(rhs).kind == "uniform":
            self.define_lanes(op, UNIFORM, f"{self.ref(lhs)} {symbol} {self.ref(rhs)}")
            return
        self.define_lanes(op, MASK, f"{self.as_vector(lhs)} {symbol} {self.as_vector(rhs)}")

    def mask_logic(self, op: Operation) -> None:
        lhs, rhs = op.operands
        symbol = MASK_LOGIC[type(op)]
        if self.lanes_of(lhs).kind == self.lanes_of(rhs).kind == "uniform":
            self.define_lanes(op, UNIFORM, f"{self.ref(lhs)} {symbol} {self.ref(rhs)}")
            return
        self.define_lanes(op, MASK, f"{self.as_mask(lhs)} {symbol} {self.as_mask(rhs)}")

    def select_vector(self, op: Operation) -> None:
        cond, lhs, rhs = op.operands
        if all(self.lanes_of(v).kind == "uniform" for v in op.operands):
            self.define_lanes(op, UNIFORM,
                              f"{self.ref(cond)} ? {self.ref(lhs)} : {self.ref(rhs)}")
            return
        if VALUE_TYPES.get(op.results[0].type) != "float":
            raise NotVectorizable(f"a select of {op.results[0].type}")
        # select(a, b, c) is c ? b : a, lane by lane, on the sign bit of c's lanes.
        self.define_lanes(op, VECTOR, f"select({self.as_vector(rhs)}, {self.as_vector(lhs)}, "
                                      f"{self.as_mask(cond)})")

    def index_cast(self, op: Operation) -> None:
        source = op.operands[0]
        lanes = self.lanes_of(source)
        if lanes.kind not in ("uniform", "affine") or self.value_type(op.results[0].type) != "int":
            raise NotVectorizable(f"'{op.name}' of a {lanes.kind} value")
        self.define_lanes(op, lanes, f"(int){self.ref(source)}")

    def int_to_float(self, op: Operation) -> None:
        source = op.operands[0]
        if str(op.results[0].type) != "f32":
            raise NotVectorizable(f"'{op.name}' to {op.results[0].type}")
        if self.lanes_of(source).kind == "uniform":
            self.define_lanes(op, UNIFORM, f"(float){self.ref(source)}")
            return
        self.define_lanes(op, VECTOR,
                          f"convert_float{self.width}({self.as_vector(source)})")

    def round_float(self, op: Operation) -> None:
        """``extf``/``truncf``: to f32 the value itself; a uniform value rounded to a 16-bit
        type as the scalar emitter rounds it; a vector rounded to one is not printed here."""
        to = str(op.results[0].type)
        source = op.operands[0]
        if to == "f32":
            self.define_lanes(op, self.lanes_of(source), self.ref(source))
            return
        if self.lanes_of(source).kind == "uniform":
            self.uses_half = True
            self.define_lanes(op, UNIFORM, half.round_to(to, self.ref(source)))
            return
        raise NotVectorizable(f"a vector rounded to {to}")

    def load_vector(self, op: Operation) -> None:
        assert isinstance(op, memref.LoadOp)
        t = op.memref.type
        assert isinstance(t, MemRefType)
        storage = self.storage(op.memref)
        offset, lanes = self.linear_offset(t, op.indices)
        pointer = self.names[op.memref]
        if lanes.kind == "uniform" or (lanes.kind == "affine" and lanes.stride == 0):
            self.define_lanes(op, UNIFORM, half.load(storage, pointer, offset))
            return
        if VALUE_TYPES.get(t.element_type) != "float":
            raise NotVectorizable(f"a vector load of {t.element_type}")
        if lanes.kind == "affine" and lanes.stride == 1:
            self.define_lanes(op, VECTOR,
                              half.vload(storage, self.width, "0", f"{pointer} + {offset}"))
            return
        # Lanes at scattered offsets: one load each.
        at = f"v{self.counter}"
        self.counter += 1
        self.line(f"const int{self.width} {at} = {self.spread(offset, lanes)};")
        elements = ", ".join(half.load(storage, pointer, f"{at}.s{VECTOR_LANES[i]}")
                             for i in range(self.width))
        self.define_lanes(op, VECTOR, f"(float{self.width})({elements})")

    def linear_offset(self, t: MemRefType, indices: Sequence[SSAValue]) -> tuple[str, Lanes]:
        """The row-major offset of ``indices`` (as `CEmitter.offset`) and how it varies."""
        offset = self.offset(t, indices)
        shape = t.get_shape()
        stride, step, vector = 1, 0, False
        for size, index in reversed(list(zip(shape, indices, strict=False))):
            lanes = self.lanes_of(index)
            if size != 1 and lanes.kind == "affine":
                step += lanes.stride * stride
            elif size != 1 and lanes.kind != "uniform":
                vector = True
            stride *= size
        if vector:
            return offset, VECTOR
        return offset, (Lanes("affine", step) if step else UNIFORM)

    def spread(self, offset: str, lanes: Lanes) -> str:
        """An offset as an ``int<N>`` of each lane's offset."""
        if lanes.kind == "affine":
            return f"(int{self.width})({offset}) + {self.iota()} * {lanes.stride}"
        return f"convert_int{self.width}({offset})"

    def yield_vector(self, op: Operation) -> None:
        value = op.operands[0]
        if VALUE_TYPES.get(value.type) != "float":
            raise NotVectorizable(f"an epilogue yielding {value.type}")
        self.line(f"return {self.as_vector(value)};")


def _constant_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def emit_vector_epilogue(name: str, block: Block, extra_names: Sequence[str],
                         lanes: int) -> str | None:
    """The vector form of an epilogue region (see the module docstring), or None when the
    region has an op it does not print on vectors."""
    try:
        return VectorEpilogueEmitter(lanes).function(name, block, extra_names)
    except EmitError:  # NotVectorizable, or an op neither emitter prints (the scalar one says)
        return None
