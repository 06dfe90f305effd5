"""The numpy reference of each nn op, against hand-computed values or independent checks
(Python ``math`` loops, closed forms), on small cases and edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.reference.executor import run_function

ELEMENT = {np.float32: "f32", np.float16: "f16", np.int32: "i32", np.bool_: "i1"}


def ttype(shape: tuple[int, ...], dtype: type) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{ELEMENT[dtype]}>"


def tof(a: np.ndarray) -> str:
    return ttype(a.shape, a.dtype.type)


def run1(op: str, result: str, *args: np.ndarray) -> np.ndarray:
    """Runs one op (``{sig}`` = the argument types, ``{res}`` = ``result``) on ``args``,
    bound to ``%a0, %a1, ...``."""
    params = ", ".join(f"%a{i}: {tof(a)}" for i, a in enumerate(args))
    body = op.format(sig=", ".join(tof(a) for a in args), res=result)
    text = f"func.func @f({params}) -> {result} {{\n  %r = {body}\n  func.return %r : {result}\n}}"
    module = parse_module(make_context(), Source(text, "test.mlir"))
    (out,) = run_function(module, list(args))
    return out


def f32(x: object) -> np.ndarray:
    return np.asarray(x, np.float32)


def i32(x: object) -> np.ndarray:
    return np.asarray(x, np.int32)


RNG = np.random.default_rng(1234)
X = f32(RNG.standard_normal((3, 4)))


# --- elementwise -------------------------------------------------------------------------------


def test_add_broadcasts_a_row_and_keeps_f32():
    row = f32([1, 2, 3, 4])
    out = run1("nn.add %a0, %a1 : {sig} -> {res}", "tensor<3x4xf32>", X, row)
    assert out.dtype == np.float32 and out.shape == (3, 4)
    np.testing.assert_array_equal(out, X + row)


def test_broadcast_both_sides():
    col, row = f32([[1], [2]]), f32([[10, 20, 30]])
    out = run1("nn.mul %a0, %a1 : {sig} -> {res}", "tensor<2x3xf32>", col, row)
    np.testing.assert_array_equal(out, [[10, 20, 30], [20, 40, 60]])


@pytest.mark.parametrize(
    ("name", "expected"),
    [("sub", [-1.0, 4.0]), ("div", [0.5, 3.0]), ("max", [2.0, 6.0]), ("min", [1.0, 2.0])],
)
def test_binary_float(name: str, expected: list[float]):
    a, b = f32([1, 6]), f32([2, 2])
    out = run1(f"nn.{name} %a0, %a1 : {{sig}} -> {{res}}", "tensor<2xf32>", a, b)
    np.testing.assert_array_equal(out, expected)


def test_pow():
    out = run1(
        "nn.pow %a0, %a1 : {sig} -> {res}", "tensor<3xf32>", f32([2, 9, 4]), f32([3, 0.5, -1])
    )
    np.testing.assert_allclose(out, [8, 3, 0.25], rtol=1e-7)


def test_integer_division_truncates_toward_zero():
    a, b = i32([7, -7, 7, -7, 5]), i32([2, 2, -2, -2, 0])
    out = run1("nn.div %a0, %a1 : {sig} -> {res}", "tensor<5xi32>", a, b)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [3, -3, -3, 3, 0])


def test_integer_add_wraps_to_32_bits():
    a = i32([2**31 - 1])
    out = run1("nn.add %a0, %a1 : {sig} -> {res}", "tensor<1xi32>", a, i32([1]))
    np.testing.assert_array_equal(out, [-(2**31)])


def scalar_gelu(x: float) -> float:
    return 0.5 * x * (1 + math.erf(x / math.sqrt(2)))


def scalar_gelu_tanh(x: float) -> float:
    return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize(
    ("op", "scalar"),
    [
        ("nn.relu %a0", lambda x: max(x, 0.0)),
        ("nn.gelu %a0", scalar_gelu),
        ('nn.gelu %a0 {{approximate = "tanh"}}', scalar_gelu_tanh),
        ("nn.silu %a0", lambda x: x / (1 + math.exp(-x))),
        ("nn.sigmoid %a0", lambda x: 1 / (1 + math.exp(-x))),
        ("nn.tanh %a0", math.tanh),
        ("nn.exp %a0", math.exp),
        ("nn.neg %a0", lambda x: -x),
        ("nn.abs %a0", abs),
    ],
)
def test_unary_against_math(op: str, scalar):
    out = run1(op + " : {sig} -> {res}", "tensor<3x4xf32>", X)
    expected = np.vectorize(scalar)(X.astype(np.float64))
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    ("op", "scalar"),
    [("nn.log", math.log), ("nn.sqrt", math.sqrt), ("nn.rsqrt", lambda x: 1 / math.sqrt(x))],
)
def test_unary_positive_domain(op: str, scalar):
    x = np.abs(X) + f32(0.1)
    out = run1(op + " %a0 : {sig} -> {res}", "tensor<3x4xf32>", x)
    np.testing.assert_allclose(out, np.vectorize(scalar)(x.astype(np.float64)), rtol=1e-6)


def test_gelu_known_values():
    out = run1("nn.gelu %a0 : {sig} -> {res}", "tensor<3xf32>", f32([0, 1, -1]))
    np.testing.assert_allclose(out, [0.0, 0.8413447, -0.1586553], rtol=1e-6)


def test_sigmoid_saturates_without_nan():
    out = run1("nn.sigmoid %a0 : {sig} -> {res}", "tensor<2xf32>", f32([-1000, 1000]))
    np.testing.assert_array_equal(out, [0.0, 1.0])


def test_f16_result_is_f16():
    x = X.astype(np.float16)
    out = run1("nn.tanh %a0 : {sig} -> {res}", "tensor<3x4xf16>", x)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, np.tanh(x.astype(np.float64)), rtol=1e-3)


# --- cast, cmp, where, constant --------------------------------------------------------------


def test_cast_float_to_int_truncates_and_to_bool_is_nonzero():
    x = f32([1.7, -1.7, 0.0, 2.0])
    np.testing.assert_array_equal(
        run1("nn.cast %a0 : {sig} -> {res}", "tensor<4xi32>", x), [1, -1, 0, 2]
    )
    out = run1("nn.cast %a0 : {sig} -> {res}", "tensor<4xi1>", x)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, [True, True, False, True])


def test_cast_bool_and_int_to_float():
    b = np.array([True, False])
    np.testing.assert_array_equal(run1("nn.cast %a0 : {sig} -> {res}", "tensor<2xf32>", b), [1, 0])
    out = run1("nn.cast %a0 : {sig} -> {res}", "tensor<2xf16>", i32([3, -2]))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, [3, -2])


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        ("eq", [False, True, False]),
        ("ne", [True, False, True]),
        ("lt", [True, False, False]),
        ("le", [True, True, False]),
        ("gt", [False, False, True]),
        ("ge", [False, True, True]),
    ],
)
def test_cmp_predicates(predicate: str, expected: list[bool]):
    out = run1(
        f'nn.cmp %a0, %a1 {{{{predicate = "{predicate}"}}}} : {{sig}} -> {{res}}',
        "tensor<3xi1>",
        f32([1, 2, 3]),
        f32([2]),
    )
    np.testing.assert_array_equal(out, expected)


def test_where_broadcasts():
    cond = np.array([[True], [False]])
    out = run1(
        "nn.where %a0, %a1, %a2 : {sig} -> {res}", "tensor<2x3xf32>", cond, f32([1, 2, 3]), f32([0])
    )
    np.testing.assert_array_equal(out, [[1, 2, 3], [0, 0, 0]])


def test_constant_splat_and_full():
    x = f32(np.zeros((2, 3)))
    splat = "nn.constant {{value = dense<1.5> : tensor<2x3xf32>}} : {res}"
    np.testing.assert_array_equal(run1(splat, "tensor<2x3xf32>", x), np.full((2, 3), 1.5))
    full = "nn.constant {{value = dense<[[1, -2, 3], [4, 5, 6]]> : tensor<2x3xi32>}} : {res}"
    out = run1(full, "tensor<2x3xi32>", x)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[1, -2, 3], [4, 5, 6]])
    bools = "nn.constant {{value = dense<[true, false]> : tensor<2xi1>}} : {res}"
    np.testing.assert_array_equal(run1(bools, "tensor<2xi1>", x), [True, False])


# --- contraction and data movement -------------------------------------------------------------


def naive_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = sum(float(a[i, k]) * float(b[k, j]) for k in range(a.shape[1]))
    return out


def test_matmul_2d_rhs_against_loops():
    a, b = f32(RNG.standard_normal((2, 3, 4))), f32(RNG.standard_normal((4, 5)))
    out = run1("nn.matmul %a0, %a1 : {sig} -> {res}", "tensor<2x3x5xf32>", a, b)
    for n in range(2):
        np.testing.assert_allclose(out[n], naive_matmul(a[n], b), rtol=1e-5, atol=1e-6)


def test_matmul_batched_rhs():
    a, b = f32(RNG.standard_normal((2, 3, 4))), f32(RNG.standard_normal((2, 4, 2)))
    out = run1("nn.matmul %a0, %a1 : {sig} -> {res}", "tensor<2x3x2xf32>", a, b)
    for n in range(2):
        np.testing.assert_allclose(out[n], naive_matmul(a[n], b[n]), rtol=1e-5, atol=1e-6)


def test_matmul_int32():
    out = run1(
        "nn.matmul %a0, %a1 : {sig} -> {res}", "tensor<1x1xi32>", i32([[2, 3]]), i32([[4], [5]])
    )
    np.testing.assert_array_equal(out, [[23]])


def test_transpose_reshape_narrow_concat():
    x = f32(np.arange(24).reshape(2, 3, 4))
    out = run1(
        "nn.transpose %a0 {{perm = array<i64: 2, 0, 1>}} : {sig} -> {res}", "tensor<4x2x3xf32>", x
    )
    assert out[3, 1, 2] == x[1, 2, 3]
    out = run1("nn.reshape %a0 : {sig} -> {res}", "tensor<6x4xf32>", x)
    np.testing.assert_array_equal(out.ravel(), np.arange(24))
    out = run1(
        "nn.narrow %a0 {{axis = 2 : i64, start = 1 : i64, length = 2 : i64}} : {sig} -> {res}",
        "tensor<2x3x2xf32>",
        x,
    )
    np.testing.assert_array_equal(out, x[:, :, 1:3])
    y = f32(np.ones((2, 1, 4)))
    out = run1(
        "nn.concat %a0, %a1 {{axis = 1 : i64}} : ({sig}) -> {res}", "tensor<2x4x4xf32>", x, y
    )
    np.testing.assert_array_equal(out[:, 3], np.ones((2, 4)))
    np.testing.assert_array_equal(out[:, :3], x)


# --- normalisation, softmax, reductions --------------------------------------------------------


def test_layer_norm_hand_computed():
    x = f32([[1, 2, 3, 4]])
    gamma, beta = f32([1, 2, 1, 1]), f32([0, 0, 1, 0])
    out = run1(
        "nn.layer_norm %a0, %a1, %a2 {{eps = 0.0001 : f32}} : {sig} -> {res}",
        "tensor<1x4xf32>",
        x,
        gamma,
        beta,
    )
    # mean 2.5, biased variance 1.25
    z = (np.array([1, 2, 3, 4]) - 2.5) / math.sqrt(1.25 + np.float32(1e-4))
    np.testing.assert_allclose(out[0], z * [1, 2, 1, 1] + [0, 0, 1, 0], rtol=1e-6)


def test_layer_norm_on_axis_0():
    x = f32(RNG.standard_normal((3, 2)))
    gamma, beta = f32([1, 2, 3]), f32([0, 1, 0])
    out = run1(
        "nn.layer_norm %a0, %a1, %a2 {{axis = 0 : i64}} : {sig} -> {res}",
        "tensor<3x2xf32>",
        x,
        gamma,
        beta,
    )
    for j in range(2):
        col = x[:, j].astype(np.float64)
        z = (col - col.mean()) / math.sqrt(col.var() + np.float32(1e-5))
        np.testing.assert_allclose(out[:, j], z * gamma + beta, rtol=1e-5, atol=1e-6)


def test_rms_norm_hand_computed():
    x, gamma = f32([[3, 4]]), f32([1, 2])
    out = run1(
        "nn.rms_norm %a0, %a1 {{eps = 0.5 : f32}} : {sig} -> {res}", "tensor<1x2xf32>", x, gamma
    )
    # mean(x^2) = 12.5, + eps = 13
    np.testing.assert_allclose(out[0], [3 / math.sqrt(13), 8 / math.sqrt(13)], rtol=1e-6)


def test_softmax_rows_and_stability():
    x = f32([[1, 2, 3], [1000, 1000, 1000]])
    out = run1("nn.softmax %a0 : {sig} -> {res}", "tensor<2x3xf32>", x)
    e = [math.exp(v) for v in (1, 2, 3)]
    np.testing.assert_allclose(out[0], [v / sum(e) for v in e], rtol=1e-6)
    np.testing.assert_allclose(out[1], [1 / 3] * 3, rtol=1e-6)
    out = run1("nn.softmax %a0 {{axis = 0 : i64}} : {sig} -> {res}", "tensor<2x3xf32>", x)
    np.testing.assert_allclose(out[1], [1, 1, 1])


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("sum", [6.0, 15.0]), ("mean", [2.0, 5.0]), ("max", [3.0, 6.0]), ("min", [1.0, 4.0])],
)
def test_reduce_kinds(kind: str, expected: list[float]):
    x = f32([[1, 2, 3], [4, 5, 6]])
    op = f"nn.reduce_{kind} %a0 {{{{axes = array<i64: 1>}}}} : {{sig}} -> {{res}}"
    np.testing.assert_array_equal(run1(op, "tensor<2xf32>", x), expected)


def test_reduce_keepdims_and_several_axes():
    x = f32(np.arange(24).reshape(2, 3, 4))
    out = run1(
        "nn.reduce_sum %a0 {{axes = array<i64: 0, -1>, keepdims = true}} : {sig} -> {res}",
        "tensor<1x3x1xf32>",
        x,
    )
    np.testing.assert_array_equal(out.ravel(), [x[:, i, :].sum() for i in range(3)])


def test_reduce_mean_int_truncates():
    out = run1(
        "nn.reduce_mean %a0 {{axes = array<i64: 0>}} : {sig} -> {res}",
        "tensor<2xi32>",
        i32([[1, -1], [2, -2]]),
    )
    np.testing.assert_array_equal(out, [1, -1])


# --- attention ---------------------------------------------------------------------------------


def naive_attention(q, k, v, mask, heads, dim, scale, causal=False):
    """Python loops over batch, head and query."""
    batch, seq, _ = q.shape
    keys = k.shape[1]
    out = np.zeros(q.shape)
    for b in range(batch):
        for h in range(heads):
            cols = slice(h * dim, (h + 1) * dim)
            for i in range(seq):
                visible = [
                    j
                    for j in range(keys)
                    if (mask is None or mask[b, j] != 0) and not (causal and j > i)
                ]
                if not visible:
                    continue
                s = [float(np.dot(q[b, i, cols], k[b, j, cols])) * scale for j in visible]
                top = max(s)
                w = [math.exp(x - top) for x in s]
                for wj, j in zip(w, visible, strict=True):
                    out[b, i, cols] += wj / sum(w) * v[b, j, cols].astype(np.float64)
    return out


def attention_op(props: str, mask: bool = False) -> str:
    """``nn.attention`` on ``%a0, %a1, %a2`` (and mask ``%a3``), for ``run1``."""
    operands = "%a0, %a1, %a2" + (" mask %a3" if mask else "")
    return f"nn.attention {operands} {{{{{props}}}}} : {{sig}} -> {{res}}"


def attention_case(seq: int, keys: int, heads: int = 2, dim: int = 3):
    q = f32(RNG.standard_normal((2, seq, heads * dim)))
    k = f32(RNG.standard_normal((2, keys, heads * dim)))
    v = f32(RNG.standard_normal((2, keys, heads * dim)))
    return q, k, v, f"tensor<2x{seq}x{heads * dim}xf32>"


def test_attention_default_scale_no_mask():
    q, k, v, res = attention_case(4, 5)
    op = attention_op("num_heads = 2 : i64, head_dim = 3 : i64")
    out = run1(op, res, q, k, v)
    expected = naive_attention(q, k, v, None, 2, 3, 1 / math.sqrt(3))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_attention_mask_scale_and_fully_masked_row():
    q, k, v, res = attention_case(3, 4)
    mask = np.array([[1, 0, 1, 0], [0, 0, 0, 0]], np.int32)  # batch 1: every key masked
    op = attention_op("num_heads = 2 : i64, head_dim = 3 : i64, scale = 0.5 : f32", mask=True)
    out = run1(op, res, q, k, v, mask)
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_allclose(out, naive_attention(q, k, v, mask, 2, 3, 0.5), rtol=1e-5, atol=1e-6)
    # a masked key's values do not matter
    v2 = v.copy()
    v2[0, 1] = 1e6
    np.testing.assert_array_equal(run1(op, res, q, k, v2, mask), out)


def test_attention_bool_mask_and_causal():
    q, k, v, res = attention_case(4, 4)
    mask = np.array([[True, True, False, True], [False, True, True, True]])
    op = attention_op("num_heads = 2 : i64, head_dim = 3 : i64, causal = true", mask=True)
    out = run1(op, res, q, k, v, mask)
    expected = naive_attention(q, k, v, mask, 2, 3, 1 / math.sqrt(3), causal=True)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    # batch 1, query 0 sees only key 0, which is masked: zeros
    np.testing.assert_array_equal(out[1, 0], 0.0)
    # query 0 of batch 0 sees only key 0: its output is v[0, 0]
    np.testing.assert_allclose(out[0, 0], v[0, 0], rtol=1e-6)
