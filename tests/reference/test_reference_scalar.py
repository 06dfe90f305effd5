"""The numpy reference of scalar arith/math ops inside ``fused.elementwise`` bodies: each op's
semantics on hand-picked values (signedness, truncation, NaN ordering, rounding, i1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.reference.executor import run_function
from fusec.reference.ops import UnsupportedOpError

NAN = float("nan")
SCALAR = {np.float32: "f32", np.float16: "f16", np.int32: "i32", np.bool_: "i1"}


def body_run(lines: str, result: str, *args: np.ndarray) -> np.ndarray:
    """Runs a one-block ``fused.elementwise`` over 1-D ``args``; the body's arguments are
    ``%a0, %a1, ...`` and it yields ``%r`` of scalar type ``result``."""
    n = args[0].shape[0]
    elems = [SCALAR[a.dtype.type] for a in args]
    tensors = [f"tensor<{n}x{e}>" for e in elems]
    res = f"tensor<{n}x{result}>"
    params = ", ".join(f"%x{i}: {t}" for i, t in enumerate(tensors))
    inputs = ", ".join(f"%x{i}" for i in range(len(args)))
    block_args = ", ".join(f"%a{i}: {e}" for i, e in enumerate(elems))
    text = (
        f"func.func @f({params}) -> {res} {{\n"
        f"  %e = fused.elementwise {inputs} : ({', '.join(tensors)}) -> {res} {{\n"
        f"  ^bb0({block_args}):\n"
        f"    {lines}\n"
        f"    fused.yield %r : {result}\n"
        "  }\n"
        f"  func.return %e : {res}\n"
        "}\n"
    )
    module = parse_module(make_context(), Source(text, "body.mlir"))
    (out,) = run_function(module, list(args))
    return out


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def i32(*values: int) -> np.ndarray:
    return np.array(values, np.int32)


def i1(*values: bool) -> np.ndarray:
    return np.array(values, np.bool_)


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        ("divsi", i32(7, -7, 7, -7, 1), i32(2, 2, -2, -2, 0), [3, -3, -3, 3, 0]),
        ("remsi", i32(7, -7, 7, -7), i32(2, 2, -2, -2), [1, -1, 1, -1]),
        ("floordivsi", i32(7, -7), i32(2, 2), [3, -4]),
        ("ceildivsi", i32(7, -7, 6), i32(2, 2, 2), [4, -3, 3]),
        ("divui", i32(-1, 7), i32(2, 2), [2**31 - 1, 3]),
        ("remui", i32(-1, 7), i32(16, 4), [15, 3]),
        ("maxsi", i32(-1, 3), i32(1, 2), [1, 3]),
        ("maxui", i32(-1, 3), i32(1, 2), [-1, 3]),
        ("minui", i32(-1, 3), i32(1, 2), [1, 2]),
        ("muli", i32(2**16, 3), i32(2**16, -3), [0, -9]),
        ("shrsi", i32(-8, 8), i32(1, 1), [-4, 4]),
        ("shrui", i32(-8, 8), i32(28, 1), [15, 4]),
        ("shli", i32(1, 3), i32(4, 1), [16, 6]),
        ("xori", i32(6, -1), i32(3, 0), [5, -1]),
    ],
)
def test_integer_ops(op: str, a, b, expected):
    out = body_run(f"%r = arith.{op} %a0, %a1 : i32", "i32", a, b)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        ("oeq", [True, False, False]),
        ("one", [False, True, False]),
        ("olt", [False, True, False]),
        ("ult", [False, True, True]),
        ("une", [False, True, True]),
        ("ueq", [True, False, True]),
        ("uge", [True, False, True]),
        ("ord", [True, True, False]),
        ("uno", [False, False, True]),
        ("true", [True, True, True]),
        ("false", [False, False, False]),
    ],
)
def test_cmpf_nan_ordering(predicate: str, expected):
    out = body_run(
        f"%r = arith.cmpf {predicate}, %a0, %a1 : f32", "i1", f32(1, 1, NAN), f32(1, 2, 1)
    )
    np.testing.assert_array_equal(out, expected)


def test_cmpi_signedness():
    a, b = i32(-1, 1), i32(1, -1)
    np.testing.assert_array_equal(
        body_run("%r = arith.cmpi slt, %a0, %a1 : i32", "i1", a, b), [True, False]
    )
    np.testing.assert_array_equal(
        body_run("%r = arith.cmpi ult, %a0, %a1 : i32", "i1", a, b), [False, True]
    )


def test_float_min_max_nan():
    a, b = f32(NAN, 1), f32(2, 3)
    out = body_run("%r = arith.maximumf %a0, %a1 : f32", "f32", a, b)
    assert math.isnan(out[0]) and out[1] == 3
    np.testing.assert_array_equal(
        body_run("%r = arith.maxnumf %a0, %a1 : f32", "f32", a, b), [2, 3]
    )
    np.testing.assert_array_equal(
        body_run("%r = arith.minnumf %a0, %a1 : f32", "f32", a, b), [2, 1]
    )


def test_select_and_constants():
    lines = "%c = arith.constant 2.5 : f32\n    %r = arith.select %a0, %a1, %c : f32"
    out = body_run(lines, "f32", i1(True, False), f32(1, 1))
    np.testing.assert_array_equal(out, [1, 2.5])


@pytest.mark.parametrize(
    ("line", "arg", "result", "expected"),
    [
        ("%r = arith.fptosi %a0 : f32 to i32", f32(1.9, -1.9), "i32", [1, -1]),
        ("%r = arith.sitofp %a0 : i32 to f32", i32(-3, 4), "f32", [-3, 4]),
        ("%r = arith.uitofp %a0 : i32 to f32", i32(-1, 4), "f32", [np.float32(2.0**32 - 1), 4]),
        ("%r = arith.extui %a0 : i1 to i32", i1(True, False), "i32", [1, 0]),
        ("%r = arith.extsi %a0 : i1 to i32", i1(True, False), "i32", [-1, 0]),
        ("%r = arith.uitofp %a0 : i1 to f32", i1(True, False), "f32", [1, 0]),
        ("%r = arith.trunci %a0 : i32 to i1", i32(3, 2), "i1", [True, False]),
        (
            "%r = arith.truncf %a0 : f32 to f16",
            f32(1 / 3, 70000),
            "f16",
            [np.float16(1 / 3), np.inf],
        ),
        ("%r = arith.bitcast %a0 : f32 to i32", f32(1.0, -0.0), "i32", [0x3F800000, -(2**31)]),
    ],
)
def test_conversions(line: str, arg, result: str, expected):
    out = body_run(line, result, arg)
    assert (
        out.dtype == {"i32": np.int32, "f32": np.float32, "f16": np.float16, "i1": np.bool_}[result]
    )
    np.testing.assert_array_equal(out, expected)


def test_i1_arithmetic_wraps():
    out = body_run(
        "%r = arith.addi %a0, %a1 : i1", "i1", i1(True, True, False), i1(True, False, False)
    )
    np.testing.assert_array_equal(out, [False, True, False])


@pytest.mark.parametrize(
    ("op", "fn"),
    [
        ("math.erf", math.erf),
        ("math.tanh", math.tanh),
        ("math.exp", math.exp),
        ("math.absf", abs),
        ("math.floor", math.floor),
        ("math.ceil", math.ceil),
        ("math.trunc", math.trunc),
        ("math.round", lambda x: math.copysign(math.floor(abs(x) + 0.5), x)),
        ("math.roundeven", round),
        ("math.sin", math.sin),
        ("arith.negf", lambda x: -x),
    ],
)
def test_math_unary(op: str, fn):
    x = f32(-2.5, -0.5, 0.5, 1.5, 2.5, 0.3)
    out = body_run(f"%r = {op} %a0 : f32", "f32", x)
    np.testing.assert_allclose(out, [fn(float(v)) for v in x], rtol=1e-6)


@pytest.mark.parametrize(
    ("op", "fn"),
    [("math.sqrt", math.sqrt), ("math.rsqrt", lambda x: 1 / math.sqrt(x)), ("math.log", math.log)],
)
def test_math_positive(op: str, fn):
    x = f32(0.25, 2, 9)
    np.testing.assert_allclose(
        body_run(f"%r = {op} %a0 : f32", "f32", x), [fn(float(v)) for v in x], rtol=1e-6
    )


def test_powf_fma_ipowi():
    out = body_run("%r = math.powf %a0, %a1 : f32", "f32", f32(2, 9), f32(10, 0.5))
    np.testing.assert_allclose(out, [1024, 3], rtol=1e-7)
    out = body_run("%r = math.fma %a0, %a1, %a2 : f32", "f32", f32(2), f32(3), f32(4))
    np.testing.assert_array_equal(out, [10])
    out = body_run("%r = math.ipowi %a0, %a1 : i32", "i32", i32(3, 2, -1, 1), i32(3, -1, -3, -5))
    np.testing.assert_array_equal(out, [27, 0, -1, 1])


def test_f32_rounding_after_every_op():
    # 1 + 1e-8 rounds to 1 in f32, so the difference is 0; in f64 it would be 1e-8.
    lines = "%s = arith.addf %a0, %a1 : f32\n    %r = arith.subf %s, %a0 : f32"
    np.testing.assert_array_equal(body_run(lines, "f32", f32(1), f32(1e-8)), [0])


def test_f16_body():
    x = np.array([1, 2, 3], np.float16)
    out = body_run("%r = arith.divf %a0, %a1 : f16", "f16", x, np.array([3, 3, 3], np.float16))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, (x / np.float16(3)).astype(np.float16))


def test_unsupported_scalar_op_is_named():
    with pytest.raises(UnsupportedOpError, match=r"body\.mlir:\d+:\d+: .*'math\.ctlz'"):
        body_run("%r = math.ctlz %a0 : i32", "i32", i32(1, 2))
