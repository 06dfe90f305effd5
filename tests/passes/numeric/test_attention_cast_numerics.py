"""``fuse-attention-cast`` by numbers: a 16-bit attention cast to f32 (a float16 model whose
residual stream stays float32) is one attention storing f32, which changes no number. On the
CPU layout (one query per work-item) and a GPU layout (the register-tiled kernel where local
memory holds it, on the test device), the fused run equals the un-fused one (the f16 attention
and its cast) bit for bit, and both agree with the numpy reference (whose run of the fused IR
equals its run of the program as written); a masked row gives zeros."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.context import make_context
from fusec.compiler.driver import load, lower
from fusec.compiler.pipeline import run_pipeline
from fusec.dtypes import bf16_bits
from fusec.reference.executor import run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

CPU_LAYOUT = DeviceInfo(name="CPU layout", is_cpu=True)
GPU_LAYOUT = DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256,
                        local_mem_size=49152)
TOLERANCES = {"f16": (2e-3, 2e-3), "bf16": (1.6e-2, 1.6e-2)}


def program(e: str, b: int = 2, s: int = 8, heads: int = 2, dim: int = 16) -> str:
    """``cast(attention(q, k, v, mask)) @ w``: the f32 output projection of a 16-bit attention."""
    w = heads * dim
    return f"""
func.func @f(%q: tensor<{b}x{s}x{w}x{e}>, %k: tensor<{b}x{s}x{w}x{e}>, %v: tensor<{b}x{s}x{w}x{e}>, %m: tensor<{b}x{s}xi32>, %w: tensor<{w}x{w}xf32>) -> tensor<{b}x{s}x{w}xf32> {{
  %a = nn.attention %q, %k, %v mask %m {{num_heads = {heads} : i64, head_dim = {dim} : i64, causal = true}} : tensor<{b}x{s}x{w}x{e}>, tensor<{b}x{s}x{w}x{e}>, tensor<{b}x{s}x{w}x{e}>, tensor<{b}x{s}xi32> -> tensor<{b}x{s}x{w}x{e}>
  %c = nn.cast %a : tensor<{b}x{s}x{w}x{e}> -> tensor<{b}x{s}x{w}xf32>
  %y = nn.matmul %c, %w : tensor<{b}x{s}x{w}xf32>, tensor<{w}x{w}xf32> -> tensor<{b}x{s}x{w}xf32>
  func.return %y : tensor<{b}x{s}x{w}xf32>
}}"""


def arguments(e: str, b: int = 2, s: int = 8, w: int = 32) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    typed = (lambda x: x.astype(np.float16)) if e == "f16" else bf16_bits
    q, k, v = (typed(3 * rng.standard_normal((b, s, w)).astype(np.float32)) for _ in range(3))
    mask = np.ones((b, s), np.int32)
    mask[0, -3:] = 0
    mask[1, :] = 0  # batch 1: every key masked, zeros
    return [q, k, v, mask, (rng.standard_normal((w, w)) / np.sqrt(w)).astype(np.float32)]


def run(text: str, pipeline: str, device: DeviceInfo, args: list[np.ndarray]) -> np.ndarray:
    plan = lower(load(text), pipeline=pipeline, device_info=device, launch_fusion=False).plan
    (out,) = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("e", ["f16", "bf16"])
@pytest.mark.parametrize("layout", ["cpu", "gpu"])
def test_attention_stored_widened_equals_the_cast_of_its_result(e: str, layout: str) -> None:
    text = program(e)
    fused_ops = [op.name for op in next(iter(load(text).ops)).body.block.ops]  # type: ignore[attr-defined]
    assert "nn.cast" in fused_ops
    device = CPU_LAYOUT if layout == "cpu" else GPU_LAYOUT
    args = arguments(e)
    fused_plan = lower(load(text), pipeline="default", device_info=device,
                       launch_fusion=False).plan
    unfused_plan = lower(load(text), pipeline="none", device_info=device,
                         launch_fusion=False).plan
    assert len(fused_plan.launches) == len(unfused_plan.launches) - 1  # the cast's launch
    fused, unfused = run(text, "default", device, args), run(text, "none", device, args)
    assert fused.dtype == np.float32
    np.testing.assert_array_equal(fused, unfused)
    assert np.all(fused[1] == 0.0)
    (expected,) = run_function(load(text), args)
    fused_ir = load(text)
    run_pipeline(make_context(), fused_ir, "default")
    # the reference of the fused IR rounds the attention to its operands' type too
    np.testing.assert_array_equal(run_function(fused_ir, args)[0], expected)
    atol, rtol = TOLERANCES[e]
    for result in compare([fused], [expected], atol, rtol):
        assert result.ok, result.describe(atol, rtol)
