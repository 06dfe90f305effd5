"""Casts in row regions (``fuse-row-reduce``), by numbers: a prologue that reads f16, bf16,
i8 or i32 inputs and casts them to f32, reductions in f32, and an epilogue that casts the
result to bf16, f16 or i8 are one ``fused.row_reduce`` and one launch; the kernel reads each
input and stores the result in its own type (vectorised on the CPU for f32, f16 and bf16, the
16-bit result rounded by the vector store). The fused run on the device (both layouts: a
work-item per row, a work-group per row), the un-fused run and the reference of the fused IR
agree with the reference of the program as written, on random rows of length 1, 17, 1000 and
10,000 and on adversarial ones (NaN, +-inf, constant rows, every i8 value, results past the
range of i8 that must saturate)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.dtypes import bf16_bits, bf16_to_f32
from fusec.reference.executor import run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

SHAPES = [(5, 1), (4, 17), (3, 1000), (2, 10000)]
GPU_LAYOUT = DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256)

# (atol, rtol) per output: one unit of the output type's last place, as the fused kernel
# rounds an f32 value that differs from the reference's in its last bits.
BF16_TOL = (1e-6, 8e-3)
F16_TOL = (2e-5, 1e-3)  # atol: centring cancels (a mean is a sum times 1/n, in f32)
I8_TOL = (1.0, 0.0)


def softmax_bf16(shape: tuple[int, ...]) -> str:
    t, r = "x".join(map(str, shape)), "x".join(map(str, (*shape[:-1], 1)))
    return f"""
func.func @softmax_bf16(%x: tensor<{t}xbf16>) -> tensor<{t}xbf16> {{
  %a = nn.cast %x : tensor<{t}xbf16> -> tensor<{t}xf32>
  %m = nn.reduce_max %a {{axes = array<i64: -1>, keepdims = true}} : tensor<{t}xf32> -> tensor<{r}xf32>
  %d = nn.sub %a, %m : tensor<{t}xf32>, tensor<{r}xf32> -> tensor<{t}xf32>
  %e = nn.exp %d : tensor<{t}xf32> -> tensor<{t}xf32>
  %s = nn.reduce_sum %e {{axes = array<i64: -1>, keepdims = true}} : tensor<{t}xf32> -> tensor<{r}xf32>
  %y = nn.div %e, %s : tensor<{t}xf32>, tensor<{r}xf32> -> tensor<{t}xf32>
  %z = nn.cast %y : tensor<{t}xf32> -> tensor<{t}xbf16>
  func.return %z : tensor<{t}xbf16>
}}"""


def center_f16(shape: tuple[int, ...]) -> str:
    """f16 rows centred in f32, scaled by an i32 per-row count, stored as f16."""
    t, r = "x".join(map(str, shape)), "x".join(map(str, (*shape[:-1], 1)))
    return f"""
func.func @center_f16(%x: tensor<{t}xf16>, %k: tensor<{r}xi32>) -> tensor<{t}xf16> {{
  %a = nn.cast %x : tensor<{t}xf16> -> tensor<{t}xf32>
  %m = nn.reduce_mean %a {{axes = array<i64: -1>, keepdims = true}} : tensor<{t}xf32> -> tensor<{r}xf32>
  %d = nn.sub %a, %m : tensor<{t}xf32>, tensor<{r}xf32> -> tensor<{t}xf32>
  %c = nn.cast %k : tensor<{r}xi32> -> tensor<{r}xf32>
  %y = nn.mul %d, %c : tensor<{t}xf32>, tensor<{r}xf32> -> tensor<{t}xf32>
  %z = nn.cast %y : tensor<{t}xf32> -> tensor<{t}xf16>
  func.return %z : tensor<{t}xf16>
}}"""


def requantize_i8(shape: tuple[int, ...]) -> str:
    """i8 rows dequantized by a per-column f32 scale, normalized (a LayerNorm without gain),
    quantized back to i8 by x 48 (saturating: |y| > 2.65 is past 127)."""
    t, r, c = "x".join(map(str, shape)), "x".join(map(str, (*shape[:-1], 1))), shape[-1]
    return f"""
func.func @requantize_i8(%x: tensor<{t}xi8>, %s: tensor<{c}xf32>) -> tensor<{t}xi8> {{
  %a = nn.cast %x : tensor<{t}xi8> -> tensor<{t}xf32>
  %q = nn.mul %a, %s : tensor<{t}xf32>, tensor<{c}xf32> -> tensor<{t}xf32>
  %m = nn.reduce_mean %q {{axes = array<i64: -1>, keepdims = true}} : tensor<{t}xf32> -> tensor<{r}xf32>
  %d = nn.sub %q, %m : tensor<{t}xf32>, tensor<{r}xf32> -> tensor<{t}xf32>
  %sq = nn.mul %d, %d : tensor<{t}xf32>, tensor<{t}xf32> -> tensor<{t}xf32>
  %v = nn.reduce_mean %sq {{axes = array<i64: -1>, keepdims = true}} : tensor<{t}xf32> -> tensor<{r}xf32>
  %eps = nn.constant {{value = dense<1.0e-05> : tensor<f32>}} : tensor<f32>
  %ve = nn.add %v, %eps : tensor<{r}xf32>, tensor<f32> -> tensor<{r}xf32>
  %rs = nn.rsqrt %ve : tensor<{r}xf32> -> tensor<{r}xf32>
  %n = nn.mul %d, %rs : tensor<{t}xf32>, tensor<{r}xf32> -> tensor<{t}xf32>
  %k = nn.constant {{value = dense<48.0> : tensor<f32>}} : tensor<f32>
  %y = nn.mul %n, %k : tensor<{t}xf32>, tensor<f32> -> tensor<{t}xf32>
  %z = nn.cast %y : tensor<{t}xf32> -> tensor<{t}xi8>
  func.return %z : tensor<{t}xi8>
}}"""


def softmax_args(shape: tuple[int, ...], rng: np.random.Generator) -> list[np.ndarray]:
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    rows = x.reshape(-1, shape[-1])
    if rows.shape[0] > 2 and shape[-1] > 2:
        rows[0, 1] = np.nan  # a NaN row stays NaN
        rows[1, :] = 3.0  # constant: uniform probabilities
        rows[2, 0] = -np.inf  # probability 0
        rows[2, 1] = 80.0  # dominates
    return [bf16_bits(x)]


def center_args(shape: tuple[int, ...], rng: np.random.Generator) -> list[np.ndarray]:
    x = (rng.standard_normal(shape) * 4).astype(np.float16)
    rows = x.reshape(-1, shape[-1])
    rows[0, :] = np.float16(7.5)  # constant: exactly 0 after centring
    k = rng.integers(-3, 4, (*shape[:-1], 1)).astype(np.int32)
    return [x, k]


def requantize_args(shape: tuple[int, ...], rng: np.random.Generator) -> list[np.ndarray]:
    x = rng.integers(-128, 128, shape).astype(np.int8)
    rows = x.reshape(-1, shape[-1])
    rows[0, : min(256, shape[-1])] = np.arange(-128, 128, dtype=np.int8)[: min(256, shape[-1])]
    if rows.shape[0] > 1:
        rows[1, :] = 5  # constant: variance 0, result 0
    if rows.shape[0] > 2 and shape[-1] > 3:
        rows[2, :] = 0
        rows[2, 0] = 127  # one outlier: normalized past 2.65, so it saturates at 127
    s = rng.uniform(0.5, 2.0, shape[-1]).astype(np.float32)
    return [x, s]


CASES = {
    "softmax_bf16": (softmax_bf16, softmax_args, BF16_TOL),
    "center_f16": (center_f16, center_args, F16_TOL),
    "requantize_i8": (requantize_i8, requantize_args, I8_TOL),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_cast_row_region_one_launch_and_agrees(numeric, name: str, shape) -> None:
    ir, make_args, (atol, rtol) = CASES[name]
    text = ir(shape)
    assert numeric.top_ops(text) == ["fused.row_reduce"]
    assert numeric.launches(text) == 1
    args = make_args(shape, np.random.default_rng(shape[-1]))
    with np.errstate(all="ignore"):
        numeric.check(text, args, tol=(atol, rtol))


@pytest.mark.parametrize("name", list(CASES))
def test_cast_row_region_work_group_layout(name: str) -> None:
    """The GPU shape of the kernel (a work-group per row), run on the test device."""
    ir, make_args, (atol, rtol) = CASES[name]
    shape = (3, 1000)
    text = ir(shape)
    args = make_args(shape, np.random.default_rng(7))
    with np.errstate(all="ignore"):
        expected = run_function(load(text), args)
    plan = lower(load(text), pipeline="default", device_info=GPU_LAYOUT).plan
    assert len(plan.launches) == 1
    outputs = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)


def test_saturation_and_bf16_rounding_are_the_kernels() -> None:
    """Hand-computed: in a row of 16 holding one 127 and zeros the 127 normalizes to
    sqrt(15) = 3.87, x 48 = 185.9, which saturates at 127 (a wrap would give -71); the zeros
    give -48 / sqrt(15) = -12.39 -> -12 (toward zero); a constant row gives 0. And the bf16
    softmax of a constant row of 4 is 0.25 exactly."""
    text = requantize_i8((3, 16))
    x = np.zeros((3, 16), np.int8)
    x[0] = np.arange(16)
    x[1] = 5
    x[2, 0] = 127
    (out,) = Executable(lower(load(text), pipeline="default").plan, select_device("cpu"))(
        x, np.ones(16, np.float32))
    assert out[2].tolist() == [127] + [-12] * 15
    assert out[1].tolist() == [0] * 16
    text = softmax_bf16((1, 4))
    (p,) = Executable(lower(load(text), pipeline="default").plan, select_device("cpu"))(
        bf16_bits(np.full((1, 4), 3.0, np.float32)))
    assert bf16_to_f32(p).tolist() == [[0.25] * 4]


EXACT_ROW = [257, -257, 259, -259, 1000, -1000, 3, -3, 2**20 + 1, -(2**20) - 1, 129, -129,
             70000, -70000, 65520, -65520]


@pytest.mark.parametrize("dst", ["bf16", "f16", "i8", "i32"])
@pytest.mark.parametrize("src", ["i32", "f32"])
@pytest.mark.parametrize("layout", ["cpu", "gpu"])
def test_cast_epilogue_rounds_like_the_reference_bit_for_bit(dst: str, src: str,
                                                             layout: str) -> None:
    """Rows (i32, or f32: the CPU layout's vector path) whose mean is 0 and whose sums are
    exact in f32, so the centred value is the input exactly and the cast after it decides
    every bit: bf16 and f16 ties to even, past f16's range to inf, i8 saturating; the kernel
    must equal the reference exactly."""
    t16, r16 = f"tensor<2x16x{src}>", "tensor<2x1xf32>"
    text = f"""
func.func @f(%x: {t16}) -> tensor<2x16x{dst}> {{
  %a = nn.cast %x : {t16} -> tensor<2x16xf32>
  %m = nn.reduce_mean %a {{axes = array<i64: -1>, keepdims = true}} : tensor<2x16xf32> -> {r16}
  %d = nn.sub %a, %m : tensor<2x16xf32>, {r16} -> tensor<2x16xf32>
  %z = nn.cast %d : tensor<2x16xf32> -> tensor<2x16x{dst}>
  func.return %z : tensor<2x16x{dst}>
}}"""
    x = np.array([EXACT_ROW, EXACT_ROW[::-1]], np.int32 if src == "i32" else np.float32)
    with np.errstate(all="ignore"):
        (expected,) = run_function(load(text), [x])
    device = GPU_LAYOUT if layout == "gpu" else DeviceInfo(name="CPU layout", is_cpu=True)
    plan = lower(load(text), pipeline="default", device_info=device).plan
    assert len(plan.launches) == 1
    (out,) = Executable(plan, select_device("cpu"))(x)  # type: ignore[arg-type]
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)
    if dst == "bf16":
        assert bf16_to_f32(out)[0, :4].tolist() == [256, -256, 260, -260]
    if dst == "i8":
        assert out[0, :6].tolist() == [127, -128, 127, -128, 127, -128]
