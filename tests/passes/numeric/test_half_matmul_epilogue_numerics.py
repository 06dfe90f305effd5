"""Matmul epilogues of 16-bit products (``fuse-matmul-epilogue``), by numbers: an f16 or bf16
``nn.matmul`` whose elementwise consumer (a residual add, a scale) is one
``fused.matmul_epilogue`` and one launch, as for f32 products. The GEMM accumulates in f32 and
the epilogue first rounds the accumulator to the product's type, as the un-fused matmul stores
it; the body then computes in float registers and the result is rounded once when stored.
The fused run (CPU and GPU layouts, and the GPU's split-K plan whose second kernel applies
the epilogue), the un-fused run and the reference of the fused IR agree with the reference of
the program as written; on small integers, where every step is exact, bit for bit."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.dtypes import bf16_bits
from fusec.reference.executor import run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

CPU_LAYOUT = DeviceInfo(name="CPU layout", is_cpu=True)
GPU_LAYOUT = DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256)
ELEMENTS = ["f16", "bf16"]
# One or two units of the result's last place (f16 2^-11, bf16 2^-8): the epilogue rounds the
# product, then once more at the store, where the reference rounds after each op.
TOLERANCES = {"f16": (1e-3, 2e-3), "bf16": (1e-2, 1.6e-2)}


def residual(m: int, k: int, n: int, e: str) -> str:
    """``r + (A @ B) * s``, every tensor of element type ``e`` (a Llama residual, scaled)."""
    return f"""
func.func @f(%a: tensor<{m}x{k}x{e}>, %b: tensor<{k}x{n}x{e}>, %r: tensor<{m}x{n}x{e}>, %s: tensor<{n}x{e}>) -> tensor<{m}x{n}x{e}> {{
  %p = nn.matmul %a, %b : tensor<{m}x{k}x{e}>, tensor<{k}x{n}x{e}> -> tensor<{m}x{n}x{e}>
  %q = nn.mul %p, %s : tensor<{m}x{n}x{e}>, tensor<{n}x{e}> -> tensor<{m}x{n}x{e}>
  %y = nn.add %r, %q : tensor<{m}x{n}x{e}>, tensor<{m}x{n}x{e}> -> tensor<{m}x{n}x{e}>
  func.return %y : tensor<{m}x{n}x{e}>
}}"""


def typed(x: np.ndarray, e: str) -> np.ndarray:
    return x.astype(np.float16) if e == "f16" else bf16_bits(x)


def arguments(m: int, k: int, n: int, e: str, rng: np.random.Generator) -> list[np.ndarray]:
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    r = rng.standard_normal((m, n)).astype(np.float32)
    s = (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)
    return [typed(x, e) for x in (a, b, r, s)]


@pytest.mark.parametrize("e", ELEMENTS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 33, 17), (64, 64, 48)],
                         ids=lambda s: "x".join(map(str, s)))
def test_half_epilogue_one_launch_and_agrees(numeric, e: str, shape) -> None:
    text = residual(*shape, e)
    assert numeric.top_ops(text) == ["fused.matmul_epilogue"]
    assert numeric.launches(text) == 1
    rng = np.random.default_rng(sum(shape))
    numeric.check(text, arguments(*shape, e, rng), tol=TOLERANCES[e])


@pytest.mark.parametrize("e", ELEMENTS)
@pytest.mark.parametrize("layout", ["gpu", "gpu-split", "gpu-skinny"])
def test_half_epilogue_gpu_layouts(e: str, layout: str) -> None:
    """The GPU-shaped GEMM, a small product with a deep K that the GPU plan splits along K
    (the epilogue then runs in the sum kernel), and one of a few rows (the skinny kernel,
    epilogue in its one launch), on the test device."""
    m, k, n = {"gpu": (9, 40, 13), "gpu-split": (12, 1024, 3), "gpu-skinny": (4, 1024, 3)}[layout]
    text = residual(m, k, n, e)
    args = arguments(m, k, n, e, np.random.default_rng(3))
    expected = run_function(load(text), args)
    plan = lower(load(text), pipeline="default", device_info=GPU_LAYOUT,
                 launch_fusion=False).plan
    assert len(plan.launches) == (2 if layout == "gpu-split" else 1)
    outputs = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    atol, rtol = TOLERANCES[e]
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)


@pytest.mark.parametrize("e", ELEMENTS)
@pytest.mark.parametrize("layout", ["cpu", "gpu", "gpu-split", "gpu-skinny"])
def test_half_epilogue_rounds_the_product_first(e: str, layout: str) -> None:
    """Small integers make the product exact in f32, but past the type's integers (f16: 2048,
    bf16: 256) it must be rounded to the type before the residual is added: the store must
    equal the reference's (which rounds the matmul's result, then the sum) bit for bit. An
    epilogue that added the unrounded f32 product would differ in the last place."""
    m, k, n = {"gpu-split": (12, 1024, 2), "gpu-skinny": (3, 1024, 2)}.get(layout, (6, 16, 5))
    text = residual(m, k, n, e)
    rng = np.random.default_rng(11)
    big = 2049.0 if e == "f16" else 257.0  # odd: not representable, a tie to even
    a = rng.integers(-3, 4, (m, k)).astype(np.float32)
    b = rng.integers(-3, 4, (k, n)).astype(np.float32)
    a[0, :] = 0
    a[0, 0], b[0, :] = 1.0, big  # row 0 of the product: exactly `big`, rounded down to even
    r = np.full((m, n), 1.0, np.float32)  # big + 1 is representable; round(big) + 1 is not
    s = np.ones(n, np.float32)
    args = [typed(x, e) for x in (a, b, r, s)]
    (expected,) = run_function(load(text), args)
    device = CPU_LAYOUT if layout == "cpu" else GPU_LAYOUT
    plan = lower(load(text), pipeline="default", device_info=device, launch_fusion=False).plan
    assert len(plan.launches) == (2 if layout == "gpu-split" else 1)
    (out,) = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


def widened_residual(m: int, k: int, n: int) -> str:
    """``r + cast(A @ B)``: an f16 product added to an f32 residual (a float16 model whose
    residual stream stays float32, as torch's TorchScript exporter writes it)."""
    return f"""
func.func @f(%a: tensor<{m}x{k}xf16>, %b: tensor<{k}x{n}xf16>, %r: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %p = nn.matmul %a, %b : tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16> -> tensor<{m}x{n}xf16>
  %c = nn.cast %p : tensor<{m}x{n}xf16> -> tensor<{m}x{n}xf32>
  %y = nn.add %r, %c : tensor<{m}x{n}xf32>, tensor<{m}x{n}xf32> -> tensor<{m}x{n}xf32>
  func.return %y : tensor<{m}x{n}xf32>
}}"""


@pytest.mark.parametrize("layout", ["cpu", "gpu", "gpu-split", "gpu-skinny"])
def test_a_widening_epilogue_stores_f32_of_the_rounded_product(layout: str) -> None:
    """One launch storing f32; the product rounded to f16 first (2049 -> 2048), then the f32
    residual added exactly (2048 + 0.25): bit for bit the reference of the program as
    written."""
    m, k, n = {"gpu-split": (12, 1024, 2), "gpu-skinny": (3, 1024, 2)}.get(layout, (6, 16, 5))
    text = widened_residual(m, k, n)
    rng = np.random.default_rng(12)
    a = rng.integers(-3, 4, (m, k)).astype(np.float32)
    b = rng.integers(-3, 4, (k, n)).astype(np.float32)
    a[0, :] = 0
    a[0, 0], b[0, :] = 1.0, 2049.0
    r = np.full((m, n), 0.25, np.float32)
    args = [a.astype(np.float16), b.astype(np.float16), r]
    (expected,) = run_function(load(text), args)
    assert expected[0, 0] == 2048.25
    device = CPU_LAYOUT if layout == "cpu" else GPU_LAYOUT
    plan = lower(load(text), pipeline="default", device_info=device, launch_fusion=False).plan
    assert len(plan.launches) == (2 if layout == "gpu-split" else 1)
    (out,) = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, expected)
