"""Attention on f16/bf16 q, k and v sliced from one packed projection (a Llama or BERT layer):
the attention template reads the packed 16-bit tensor in place with its stride and offsets
and writes a 16-bit result (no slice copies, no conversions but the mask's); the result agrees
with the reference, in the CPU and the GPU (register-tiled) layouts, with and without a 16-bit
key mask."""

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

LAYOUTS = {"cpu": DeviceInfo(name="CPU layout", is_cpu=True),
           "gpu": DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256)}
TOLERANCES = {"f16": (2e-3, 4e-3), "bf16": (1.6e-2, 3.2e-2)}
B, S, H, D = 2, 8, 2, 8
E = H * D


def packed(e: str, masked: bool) -> str:
    """``attention(narrow(x @ w, 0), narrow(.., E), narrow(.., 2E))``, causal or masked."""
    mask_arg = f", %m: tensor<{B}x{S}x{e}>" if masked else ""
    mask_use = f" mask %m" if masked else ""
    mask_type = f", tensor<{B}x{S}x{e}>" if masked else ""
    causal = "" if masked else ", causal = true"
    qkv = f"tensor<{B}x{S}x{3 * E}x{e}>"
    one = f"tensor<{B}x{S}x{E}x{e}>"
    return f"""
func.func @f(%x: {one}, %w: tensor<{E}x{3 * E}x{e}>{mask_arg}) -> {one} {{
  %p = nn.matmul %x, %w : {one}, tensor<{E}x{3 * E}x{e}> -> {qkv}
  %q = nn.narrow %p {{axis = 2 : i64, start = 0 : i64, length = {E} : i64}} : {qkv} -> {one}
  %k = nn.narrow %p {{axis = 2 : i64, start = {E} : i64, length = {E} : i64}} : {qkv} -> {one}
  %v = nn.narrow %p {{axis = 2 : i64, start = {2 * E} : i64, length = {E} : i64}} : {qkv} -> {one}
  %a = nn.attention %q, %k, %v{mask_use} {{num_heads = {H} : i64, head_dim = {D} : i64{causal}}} : {one}, {one}, {one}{mask_type} -> {one}
  func.return %a : {one}
}}"""


def typed(x: np.ndarray, e: str) -> np.ndarray:
    return x.astype(np.float16) if e == "f16" else bf16_bits(x)


@pytest.mark.parametrize("e", ["f16", "bf16"])
@pytest.mark.parametrize("masked", [False, True], ids=["causal", "masked"])
@pytest.mark.parametrize("layout", ["cpu", "gpu"])
def test_packed_half_attention_converts_once_and_agrees(e: str, masked: bool,
                                                        layout: str) -> None:
    text = packed(e, masked)
    plan = lower(load(text), pipeline="default", device_info=LAYOUTS[layout],
                 launch_fusion=False).plan
    kernels = [launch.kernel for launch in plan.launches]
    assert not any("narrow" in k for k in kernels), kernels
    # gemm, (the mask to f32), attention
    assert len(kernels) == (3 if masked else 2), kernels
    rng = np.random.default_rng(7)
    args = [typed(rng.standard_normal((B, S, E)).astype(np.float32), e),
            typed((rng.standard_normal((E, 3 * E)) / np.sqrt(E)).astype(np.float32), e)]
    if masked:
        mask = (rng.random((B, S)) > 0.3).astype(np.float32)
        mask[:, 0] = 1.0
        args.append(typed(mask, e))
    expected = run_function(load(text), args)
    outputs = Executable(plan, select_device("cpu"))(*args)  # type: ignore[arg-type]
    atol, rtol = TOLERANCES[e]
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)
