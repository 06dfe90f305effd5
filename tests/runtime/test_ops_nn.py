"""Every ``nn`` op, lowered on its own (no fusion), runs on the CPU OpenCL device and matches the
numpy reference on random inputs.

Shapes have odd sizes (not multiples of the work-group size or the float4 width), broadcast
operands and batch dimensions. Tolerances (``|out - ref| <= atol + rtol * |ref|``):
- exact ops (add, sub, mul, max, min, neg, abs, relu, cast, cmp, where, data movement, integer
  ops): ``atol = rtol = 0`` except division (``rtol = 1e-6``, OpenCL's ``/`` may be 2.5 ulp);
- transcendental ops (tanh, exp, erf in gelu, log, sqrt, rsqrt, pow, sigmoid, silu): rtol 1e-5,
  atol 1e-6 (OpenCL's built-ins are a few ulp from the float64 reference);
- reductions, matmul, norms, softmax, attention (summation order differs): rtol 1e-4,
  atol 1e-5.
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.compiler.check import compare, run_with_reference

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
"""The OpenCL device kind the tests run on (the GPU machine sets ``gpu``)."""

EXACT = (0.0, 0.0)
ROUNDED = (1e-6, 1e-6)
TRANSCENDENTAL = (1e-6, 1e-5)
ACCUMULATED = (1e-5, 1e-4)


def check(source: str, tol: tuple[float, float], seed: int = 0) -> None:
    outputs, expected = run_with_reference(source, seed=seed, pipeline="none", device=DEVICE)
    atol, rtol = tol
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)
    for out, ref in zip(outputs, expected, strict=False):
        assert out.shape == ref.shape and out.dtype == ref.dtype


def unary_program(op: str, t: str = "3x5x7xf32", attrs: str = "") -> str:
    return f"""
func.func @f(%x: tensor<{t}>) -> tensor<{t}> {{
  %y = nn.{op} %x {attrs}: tensor<{t}> -> tensor<{t}>
  func.return %y : tensor<{t}>
}}"""


def binary_program(op: str, lhs: str, rhs: str, out: str) -> str:
    return f"""
func.func @f(%a: tensor<{lhs}>, %b: tensor<{rhs}>) -> tensor<{out}> {{
  %y = nn.{op} %a, %b : tensor<{lhs}>, tensor<{rhs}> -> tensor<{out}>
  func.return %y : tensor<{out}>
}}"""


BINARY_TOL = {
    "add": EXACT, "sub": EXACT, "mul": EXACT, "max": EXACT, "min": EXACT,
    "div": ROUNDED, "pow": TRANSCENDENTAL,
}

# (lhs, rhs, out): same shape, trailing broadcast, both sides broadcast, a scalar, batch dims
SHAPES = [
    ("3x5x7xf32", "3x5x7xf32", "3x5x7xf32"),
    ("3x5x7xf32", "7xf32", "3x5x7xf32"),
    ("3x1x8xf32", "5x1xf32", "3x5x8xf32"),
    ("2x3x13xf32", "f32", "2x3x13xf32"),
    ("1x6x4xf32", "2x1x4xf32", "2x6x4xf32"),
]


@pytest.mark.parametrize("op", sorted(BINARY_TOL))
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "_".join(s))
def test_binary_float(op: str, shapes: tuple[str, str, str]) -> None:
    check(binary_program(op, *shapes), BINARY_TOL[op])


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min"])
def test_binary_int(op: str) -> None:
    check(binary_program(op, "3x5x7xi32", "7xi32", "3x5x7xi32"), EXACT)


UNARY_TOL = {
    "relu": EXACT, "neg": EXACT, "abs": EXACT,
    "tanh": TRANSCENDENTAL, "exp": TRANSCENDENTAL, "log": TRANSCENDENTAL,
    "sqrt": TRANSCENDENTAL, "rsqrt": TRANSCENDENTAL, "sigmoid": TRANSCENDENTAL,
    "silu": TRANSCENDENTAL, "gelu": TRANSCENDENTAL,
}


@pytest.mark.parametrize("op", sorted(UNARY_TOL))
@pytest.mark.parametrize("t", ["3x5x7xf32", "2x3x8xf32", "f32"])
def test_unary_float(op: str, t: str) -> None:
    check(unary_program(op, t), UNARY_TOL[op])


def test_gelu_tanh() -> None:
    check(unary_program("gelu", attrs='{approximate = "tanh"} '), TRANSCENDENTAL)


@pytest.mark.parametrize("op", ["relu", "neg", "abs"])
def test_unary_int(op: str) -> None:
    check(unary_program(op, "3x5x7xi32"), EXACT)


@pytest.mark.parametrize("src,dst", [("f32", "i32"), ("i32", "f32"), ("f32", "i1"),
                                     ("i1", "f32"), ("i1", "i32"), ("i32", "i1"), ("f32", "f32")])
def test_cast(src: str, dst: str) -> None:
    check(f"""
func.func @f(%x: tensor<3x5x{src}>) -> tensor<3x5x{dst}> {{
  %s = nn.cast %x : tensor<3x5x{src}> -> tensor<3x5x{src}>
  %y = nn.cast %s : tensor<3x5x{src}> -> tensor<3x5x{dst}>
  func.return %y : tensor<3x5x{dst}>
}}""", EXACT)


@pytest.mark.parametrize("pred", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("t", ["f32", "i32"])
def test_cmp(pred: str, t: str) -> None:
    check(f"""
func.func @f(%a: tensor<3x5x{t}>, %b: tensor<5x{t}>) -> tensor<3x5xi1> {{
  %y = nn.cmp %a, %b {{predicate = "{pred}"}} : tensor<3x5x{t}>, tensor<5x{t}> -> tensor<3x5xi1>
  func.return %y : tensor<3x5xi1>
}}""", EXACT)


def test_where() -> None:
    check("""
func.func @f(%c: tensor<3x1x7xi1>, %a: tensor<5x7xf32>, %b: tensor<7xf32>) -> tensor<3x5x7xf32> {
  %y = nn.where %c, %a, %b : tensor<3x1x7xi1>, tensor<5x7xf32>, tensor<7xf32> -> tensor<3x5x7xf32>
  func.return %y : tensor<3x5x7xf32>
}""", EXACT)


def test_constant() -> None:
    check("""
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi32>) {
  %c = nn.constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]> : tensor<2x3xf32>} : tensor<2x3xf32>
  %s = nn.constant {value = dense<0.25> : tensor<2x3xf32>} : tensor<2x3xf32>
  %i = nn.constant {value = dense<[7, -1, 3]> : tensor<3xi32>} : tensor<3xi32>
  %y = nn.mul %x, %c : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %y, %s, %i : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi32>
}""", EXACT)


@pytest.mark.parametrize("lhs,rhs,out", [
    ("5x7xf32", "7x3xf32", "5x3xf32"),
    ("2x5x7xf32", "7x9xf32", "2x5x9xf32"),
    ("2x5x7xf32", "2x7x9xf32", "2x5x9xf32"),
    ("2x3x5x17xf32", "2x3x17x6xf32", "2x3x5x6xf32"),
    ("33x65xf32", "65x47xf32", "33x47xf32"),
    ("3x5x7xi32", "7x3xi32", "3x5x3xi32"),
    ("2x5x7xi32", "2x7x3xi32", "2x5x3xi32"),
])
def test_matmul(lhs: str, rhs: str, out: str) -> None:
    check(f"""
func.func @f(%a: tensor<{lhs}>, %b: tensor<{rhs}>) -> tensor<{out}> {{
  %y = nn.matmul %a, %b : tensor<{lhs}>, tensor<{rhs}> -> tensor<{out}>
  func.return %y : tensor<{out}>
}}""", ACCUMULATED)


@pytest.mark.parametrize("perm,shape,out", [
    ("1, 0", "5x7", "7x5"),
    ("0, 2, 1", "3x5x7", "3x7x5"),
    ("2, 0, 1", "3x5x7", "7x3x5"),
    ("1, 0, 2", "3x5x8", "5x3x8"),
])
def test_transpose(perm: str, shape: str, out: str) -> None:
    check(f"""
func.func @f(%x: tensor<{shape}xf32>) -> tensor<{out}xf32> {{
  %y = nn.transpose %x {{perm = array<i64: {perm}>}} : tensor<{shape}xf32> -> tensor<{out}xf32>
  func.return %y : tensor<{out}xf32>
}}""", EXACT)


def test_reshape_is_a_view() -> None:
    check("""
func.func @f(%x: tensor<3x5x7xf32>) -> (tensor<15x7xf32>, tensor<105xf32>) {
  %r = nn.reshape %x : tensor<3x5x7xf32> -> tensor<15x7xf32>
  %e = nn.exp %r : tensor<15x7xf32> -> tensor<15x7xf32>
  %f = nn.reshape %e : tensor<15x7xf32> -> tensor<105xf32>
  func.return %r, %f : tensor<15x7xf32>, tensor<105xf32>
}""", TRANSCENDENTAL)


@pytest.mark.parametrize("axis,start,length", [(0, 1, 2), (1, 2, 3), (2, 3, 4), (-1, 0, 1)])
def test_narrow(axis: int, start: int, length: int) -> None:
    shape = [3, 5, 7]
    out = list(shape)
    out[axis] = length
    s, o = "x".join(map(str, shape)), "x".join(map(str, out))
    check(f"""
func.func @f(%x: tensor<{s}xf32>) -> tensor<{o}xf32> {{
  %y = nn.narrow %x {{axis = {axis} : i64, start = {start} : i64, length = {length} : i64}} : tensor<{s}xf32> -> tensor<{o}xf32>
  func.return %y : tensor<{o}xf32>
}}""", EXACT)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concat(axis: int) -> None:
    a, b = [3, 5, 7], [3, 5, 7]
    b[axis] = 2
    out = list(a)
    out[axis] = 2 * a[axis] + b[axis]
    sa, sb, so = ("x".join(map(str, s)) for s in (a, b, out))
    check(f"""
func.func @f(%a: tensor<{sa}xf32>, %b: tensor<{sb}xf32>) -> tensor<{so}xf32> {{
  %y = nn.concat %a, %b, %a {{axis = {axis} : i64}} : (tensor<{sa}xf32>, tensor<{sb}xf32>, tensor<{sa}xf32>) -> tensor<{so}xf32>
  func.return %y : tensor<{so}xf32>
}}""", EXACT)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_layer_norm(axis: int) -> None:
    size = [3, 5, 37][axis]
    check(f"""
func.func @f(%x: tensor<3x5x37xf32>, %g: tensor<{size}xf32>, %b: tensor<{size}xf32>) -> tensor<3x5x37xf32> {{
  %y = nn.layer_norm %x, %g, %b {{axis = {axis} : i64, eps = 1.0e-05 : f32}} : tensor<3x5x37xf32>, tensor<{size}xf32>, tensor<{size}xf32> -> tensor<3x5x37xf32>
  func.return %y : tensor<3x5x37xf32>
}}""", ACCUMULATED)


@pytest.mark.parametrize("axis", [-1, 1])
def test_rms_norm(axis: int) -> None:
    size = [3, 5, 37][axis]
    check(f"""
func.func @f(%x: tensor<3x5x37xf32>, %g: tensor<{size}xf32>) -> tensor<3x5x37xf32> {{
  %y = nn.rms_norm %x, %g {{axis = {axis} : i64}} : tensor<3x5x37xf32>, tensor<{size}xf32> -> tensor<3x5x37xf32>
  func.return %y : tensor<3x5x37xf32>
}}""", ACCUMULATED)


@pytest.mark.parametrize("axis,shape", [(-1, "3x5x37"), (0, "3x5x37"), (1, "3x5x37"),
                                        (-1, "2x1030")])
def test_softmax(axis: int, shape: str) -> None:
    check(unary_program("softmax", f"{shape}xf32", f"{{axis = {axis} : i64}} "), ACCUMULATED)


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("axes,keepdims", [("2", False), ("0", True), ("0, 2", False),
                                           ("1", True), ("0, 1, 2", False)])
def test_reduce(kind: str, axes: str, keepdims: bool) -> None:
    shape = [3, 5, 37]
    reduced = [int(a) for a in axes.split(",")]
    out = [1 if i in reduced else d for i, d in enumerate(shape)] if keepdims else \
        [d for i, d in enumerate(shape) if i not in reduced]
    o = "x".join(map(str, out)) + "x" if out else ""
    keep = "true" if keepdims else "false"
    check(f"""
func.func @f(%x: tensor<3x5x37xf32>) -> tensor<{o}f32> {{
  %y = nn.reduce_{kind} %x {{axes = array<i64: {axes}>, keepdims = {keep}}} : tensor<3x5x37xf32> -> tensor<{o}f32>
  func.return %y : tensor<{o}f32>
}}""", ACCUMULATED)


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_reduce_int(kind: str) -> None:
    check(f"""
func.func @f(%x: tensor<3x5x7xi32>) -> tensor<3x7xi32> {{
  %y = nn.reduce_{kind} %x {{axes = array<i64: 1>}} : tensor<3x5x7xi32> -> tensor<3x7xi32>
  func.return %y : tensor<3x7xi32>
}}""", EXACT)


@pytest.mark.parametrize("mask,causal,mask_type", [
    (False, False, "f32"), (True, False, "f32"), (False, True, "f32"), (True, True, "i1"),
    (True, False, "i32"),
])
def test_attention(mask: bool, causal: bool, mask_type: str) -> None:
    mask_arg = f", %mask: tensor<2x11x{mask_type}>" if mask else ""
    mask_use = " mask %mask" if mask else ""
    mask_t = f", tensor<2x11x{mask_type}>" if mask else ""
    check(f"""
func.func @f(%q: tensor<2x11x24xf32>, %k: tensor<2x11x24xf32>, %v: tensor<2x11x24xf32>{mask_arg}) -> tensor<2x11x24xf32> {{
  %y = nn.attention %q, %k, %v{mask_use} {{num_heads = 3 : i64, head_dim = 8 : i64, causal = {str(causal).lower()}}} : tensor<2x11x24xf32>, tensor<2x11x24xf32>, tensor<2x11x24xf32>{mask_t} -> tensor<2x11x24xf32>
  func.return %y : tensor<2x11x24xf32>
}}""", ACCUMULATED)


def test_attention_reads_packed_qkv_in_place() -> None:
    """q, k, v sliced from one [B, S, 3E] buffer: no copies, the template reads with strides."""
    source = """
func.func @f(%qkv: tensor<2x9x48xf32>, %mask: tensor<2x9xf32>) -> tensor<2x9x16xf32> {
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 16 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %y = nn.attention %q, %k, %v mask %mask {num_heads = 2 : i64, head_dim = 8 : i64} : tensor<2x9x16xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32>, tensor<2x9xf32> -> tensor<2x9x16xf32>
  func.return %y : tensor<2x9x16xf32>
}"""
    check(source, ACCUMULATED)


def test_nan_reference_is_matched() -> None:
    """log of negative inputs gives NaN in both."""
    outputs, expected = run_with_reference(unary_program("log", "4x5xf32"), pipeline="none",
                                           device=DEVICE)
    assert np.isnan(expected[0]).any()
    assert np.array_equal(np.isnan(outputs[0]), np.isnan(expected[0]))


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("shape,axes,out", [
    ("3x20011", "1", "3"),           # few outputs: several work-groups per output, then a combine
    ("20011", "0", ""),              # one output
    ("5x700", "1", "5"),             # a work-group per output
    ("301x3x7", "0", "3x7"),         # a work-group per output, reduced axis outermost
])
def test_reduce_with_work_groups(kind: str, shape: str, axes: str, out: str) -> None:
    o = f"{out}x" if out else ""
    check(f"""
func.func @f(%x: tensor<{shape}xf32>) -> tensor<{o}f32> {{
  %y = nn.reduce_{kind} %x {{axes = array<i64: {axes}>}} : tensor<{shape}xf32> -> tensor<{o}f32>
  func.return %y : tensor<{o}f32>
}}""", ACCUMULATED)


def test_empty_tensors() -> None:
    """Zero-size results launch nothing; a sum over an empty axis is 0."""
    check("""
func.func @f(%x: tensor<0x4xf32>, %y: tensor<3x0xf32>) -> (tensor<0x4xf32>, tensor<3xf32>) {
  %e = nn.exp %x : tensor<0x4xf32> -> tensor<0x4xf32>
  %s = nn.reduce_sum %y {axes = array<i64: 1>} : tensor<3x0xf32> -> tensor<3xf32>
  func.return %e, %s : tensor<0x4xf32>, tensor<3xf32>
}""", EXACT)
