"""Casts in matmul epilogues (``fuse-matmul-epilogue``), by numbers: an f32 GEMM whose
epilogue reads extras of f16, bf16 or i32 in their own types and ends in a cast to bf16, f16,
i8 or i32 is one ``fused.matmul_epilogue`` and one launch; the GEMM stores its result in the
cast's type (saturating for integers, rounding to nearest even for 16-bit floats). The fused
run (CPU and GPU layouts, and the GPU's split-K plan whose second kernel applies the
epilogue), the un-fused run and the reference of the fused IR agree with the reference of the
program as written; on integer-valued operands, where the product is exact, bit for bit."""

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

CPU_LAYOUT = DeviceInfo(name="CPU layout", is_cpu=True)
GPU_LAYOUT = DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256)


def scaled_bf16(m: int, k: int, n: int) -> str:
    """0.5 * (A @ B) + C, C bf16, the result bf16."""
    return f"""
func.func @f(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %c: tensor<{m}x{n}xbf16>) -> tensor<{m}x{n}xbf16> {{
  %p = nn.matmul %a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32> -> tensor<{m}x{n}xf32>
  %h = nn.constant {{value = dense<0.5> : tensor<f32>}} : tensor<f32>
  %s = nn.mul %p, %h : tensor<{m}x{n}xf32>, tensor<f32> -> tensor<{m}x{n}xf32>
  %cf = nn.cast %c : tensor<{m}x{n}xbf16> -> tensor<{m}x{n}xf32>
  %t = nn.add %s, %cf : tensor<{m}x{n}xf32>, tensor<{m}x{n}xf32> -> tensor<{m}x{n}xf32>
  %y = nn.cast %t : tensor<{m}x{n}xf32> -> tensor<{m}x{n}xbf16>
  func.return %y : tensor<{m}x{n}xbf16>
}}"""


def quantized_i8(m: int, k: int, n: int) -> str:
    """(A @ B) * column scale, quantized to i8 (saturating)."""
    return f"""
func.func @f(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %s: tensor<{n}xf32>) -> tensor<{m}x{n}xi8> {{
  %p = nn.matmul %a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32> -> tensor<{m}x{n}xf32>
  %q = nn.mul %p, %s : tensor<{m}x{n}xf32>, tensor<{n}xf32> -> tensor<{m}x{n}xf32>
  %y = nn.cast %q : tensor<{m}x{n}xf32> -> tensor<{m}x{n}xi8>
  func.return %y : tensor<{m}x{n}xi8>
}}"""


def relu_f16(m: int, k: int, n: int) -> str:
    """relu(A @ B * 1000 + bias (f16, per column) + rows (i32, per row)), stored as f16
    (past 65504: inf)."""
    return f"""
func.func @f(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %bias: tensor<{n}xf16>, %r: tensor<{m}x1xi32>) -> tensor<{m}x{n}xf16> {{
  %p = nn.matmul %a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32> -> tensor<{m}x{n}xf32>
  %k = nn.constant {{value = dense<1000.0> : tensor<f32>}} : tensor<f32>
  %s = nn.mul %p, %k : tensor<{m}x{n}xf32>, tensor<f32> -> tensor<{m}x{n}xf32>
  %bf = nn.cast %bias : tensor<{n}xf16> -> tensor<{n}xf32>
  %t = nn.add %s, %bf : tensor<{m}x{n}xf32>, tensor<{n}xf32> -> tensor<{m}x{n}xf32>
  %rf = nn.cast %r : tensor<{m}x1xi32> -> tensor<{m}x1xf32>
  %u = nn.add %t, %rf : tensor<{m}x{n}xf32>, tensor<{m}x1xf32> -> tensor<{m}x{n}xf32>
  %v = nn.relu %u : tensor<{m}x{n}xf32> -> tensor<{m}x{n}xf32>
  %y = nn.cast %v : tensor<{m}x{n}xf32> -> tensor<{m}x{n}xf16>
  func.return %y : tensor<{m}x{n}xf16>
}}"""


def big_i32(m: int, k: int, n: int) -> str:
    """(A @ B) * 1e9 as i32: most of it saturates."""
    return f"""
func.func @f(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xi32> {{
  %p = nn.matmul %a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32> -> tensor<{m}x{n}xf32>
  %k = nn.constant {{value = dense<1.0e+09> : tensor<f32>}} : tensor<f32>
  %s = nn.mul %p, %k : tensor<{m}x{n}xf32>, tensor<f32> -> tensor<{m}x{n}xf32>
  %y = nn.cast %s : tensor<{m}x{n}xf32> -> tensor<{m}x{n}xi32>
  func.return %y : tensor<{m}x{n}xi32>
}}"""


def operands(m: int, k: int, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    a[0, 0] = np.nan  # row 0 of the product is NaN: 0 as an integer, NaN as a float
    return [a, b]


def extras(name: str, m: int, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    if name == "scaled_bf16":
        return [bf16_bits(rng.standard_normal((m, n)).astype(np.float32))]
    if name == "quantized_i8":
        return [rng.uniform(20, 200, n).astype(np.float32)]  # many past +-127
    if name == "relu_f16":
        return [rng.standard_normal(n).astype(np.float16),
                rng.integers(-3, 4, (m, 1)).astype(np.int32)]
    return []


# (program, atol, rtol): one unit of the result's last place (the fused epilogue adds the
# column of extras to an unrounded f32 where the reference rounds each op), 1 for integers.
CASES = {
    "scaled_bf16": (scaled_bf16, 1e-6, 8e-3),
    "quantized_i8": (quantized_i8, 1.0, 0.0),
    "relu_f16": (relu_f16, 1e-3, 1e-3),
    "big_i32": (big_i32, 1e4, 1e-6),  # f32 cancellation in A @ B, times 1e9
}
SHAPES = [(1, 1, 1), (7, 33, 17), (64, 64, 48)]


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_cast_epilogue_one_launch_and_agrees(numeric, name: str, shape) -> None:
    ir, atol, rtol = CASES[name]
    text = ir(*shape)
    assert numeric.top_ops(text) == ["fused.matmul_epilogue"]
    assert numeric.launches(text) == 1
    rng = np.random.default_rng(sum(shape))
    m, k, n = shape
    args = [*operands(m, k, n, rng), *extras(name, m, n, rng)]
    with np.errstate(all="ignore"):
        numeric.check(text, args, tol=(atol, rtol))


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("layout", ["gpu", "gpu-split", "gpu-skinny"])
def test_cast_epilogue_gpu_layouts(name: str, layout: str) -> None:
    """The GPU-shaped GEMM, a small product with a deep K that the GPU plan splits along K
    (the epilogue, cast included, then runs in the sum kernel), and one of a few rows (the
    skinny kernel, cast in its one launch), on the test device."""
    ir, atol, rtol = CASES[name]
    m, k, n = {"gpu": (9, 40, 13), "gpu-split": (12, 1024, 3), "gpu-skinny": (4, 1024, 3)}[layout]
    text = ir(m, k, n)
    rng = np.random.default_rng(3)
    args = [*operands(m, k, n, rng), *extras(name, m, n, rng)]
    with np.errstate(all="ignore"):
        expected = run_function(load(text), args)
    plan = lower(load(text), pipeline="default", device_info=GPU_LAYOUT,
                 launch_fusion=False).plan
    assert len(plan.launches) == (2 if layout == "gpu-split" else 1)
    outputs = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)


@pytest.mark.parametrize("dst", ["bf16", "f16", "i8", "i32"])
@pytest.mark.parametrize("layout", ["cpu", "gpu", "gpu-split", "gpu-skinny"])
def test_cast_epilogue_bit_exact(dst: str, layout: str) -> None:
    """Integer operands make the product exact in f32; times 257/256 (exact too) it lands on
    bf16 ties, f16 values past 65504 and i8 values past 127: the stored result must equal the
    reference's bit for bit."""
    m, k, n = {"gpu-split": (12, 1024, 2), "gpu-skinny": (3, 1024, 2)}.get(layout, (6, 16, 5))
    text = f"""
func.func @f(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}x{dst}> {{
  %p = nn.matmul %a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32> -> tensor<{m}x{n}xf32>
  %c = nn.constant {{value = dense<1.00390625> : tensor<f32>}} : tensor<f32>
  %s = nn.mul %p, %c : tensor<{m}x{n}xf32>, tensor<f32> -> tensor<{m}x{n}xf32>
  %y = nn.cast %s : tensor<{m}x{n}xf32> -> tensor<{m}x{n}x{dst}>
  func.return %y : tensor<{m}x{n}x{dst}>
}}"""
    rng = np.random.default_rng(11)
    a = rng.integers(-40, 41, (m, k)).astype(np.float32)
    b = rng.integers(-40, 41, (k, n)).astype(np.float32)
    a[0, :] = 0
    a[0, 0], b[0, :] = 1, np.arange(n) * 2 + 1  # row 0: 1, 3, 5, ... times 257/256
    with np.errstate(all="ignore"):
        (expected,) = run_function(load(text), [a, b])
    device = CPU_LAYOUT if layout == "cpu" else GPU_LAYOUT
    plan = lower(load(text), pipeline="default", device_info=device, launch_fusion=False).plan
    assert len(plan.launches) == (2 if layout == "gpu-split" else 1)
    (out,) = Executable(plan, select_device("cpu"))(a, b)  # type: ignore[arg-type]
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)
    if dst == "bf16":  # 1 * 257/256 is a tie: to even, 1.0
        assert bf16_to_f32(out)[0, 0] == 1.0
    if dst == "i8":
        assert np.abs(out.astype(int)).max() == 128 or np.abs(out.astype(int)).max() == 127


def test_a_large_general_epilogue_is_one_launch_on_a_gpu():
    """gemm_epilogue's 512x768x768 product with its scales, clamp and added matrix: one launch
    on a GPU (not split along K), as on the CPU; a product of few outputs is still split, but
    one of at most 8 rows is one skinny launch."""
    from fusec.bench.workloads import gemm_epilogue

    gpu = DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256)
    plan = lower(load(gemm_epilogue(512, 768, 768).text()), device_info=gpu).plan
    assert len(plan.launches) == 1
    plan = lower(load(gemm_epilogue(12, 1024, 2).text()), device_info=gpu).plan
    assert len(plan.launches) == 2
    plan = lower(load(gemm_epilogue(3, 1024, 2).text()), device_info=gpu).plan
    assert len(plan.launches) == 1


@pytest.mark.parametrize("element,launches", [("f32", 11), ("f16", 9)])
def test_a_llama_block_at_batch_1_splits_its_f32_residual_gemms(element, launches):
    """The Llama block at batch 1: its attention-output and down projections (128 x 768
    outputs, the residual add as a general epilogue) are split along K in f32 (H200: 0.31 ms
    whole, 0.215 split) and kept whole in f16 (0.134 whole, 0.151 split). The QKV product
    (no epilogue) is split in both."""
    from fusec.bench.workloads import all_workloads, llama

    gpu = DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256)
    plan = lower(load(llama(1, 128, element=element).text()), device_info=gpu).plan
    splits = [launch.kernel for launch in plan.launches if "split_sum" in launch.kernel]
    assert len(plan.launches) == launches, [launch.kernel for launch in plan.launches]
    assert len(splits) == (3 if element == "f32" else 1), splits
    if element != "f32":
        return
    # the split plan's numbers, on the CPU device, against the float64 reference
    workload = next(w for w in all_workloads() if w.name == "llama_b1")
    module = load(workload.text)
    names = [spec.name for spec in plan.inputs]
    args = workload.inputs(names, [spec.shape for spec in plan.inputs], seed=3)
    (got,) = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    (want,) = run_function(module, args)
    for result in compare([got], [want], 1e-4, 1e-3):
        assert result.ok, result.describe(1e-4, 1e-3)
