"""Whole programs with attention lowered for a GPU agree with the numpy reference on the test
device: the GPU layout's attention is the register-tiled kernel (`attention_tiled`), in both its
configurations (64 x 32 tiles, and 32 x 32 where local memory is too short for those), fused
(packed q/k/v read from the QKV GEMM's output) and unfused (the default pipeline and none).

A Llama-style block (RMSNorm, causal attention, SwiGLU) at B=2 S=70 H=4 D=16, so that a batch
has a ragged second 64-query block and a ragged last key tile, and the small BERT layer
(examples/bert_layer_small.mlir, key mask). Tolerances as in ``test_models`` (normwise: random
weights make large outputs).
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ATOL, RTOL = 1e-5, 1e-4

LAYOUTS = {
    "gpu-48k": DeviceInfo(name="GPU layout, 48 KiB local", is_cpu=False, local_mem_size=49152,
                          max_work_group_size=1024),
    "gpu-16k": DeviceInfo(name="GPU layout, 16 KiB local", is_cpu=False, local_mem_size=16384,
                          max_work_group_size=256),
}
TILES = {"gpu-48k": "64 queries x 32 keys", "gpu-16k": "32 queries x 32 keys"}
"""The tiles each layout's attention kernel has (head_dim 16 in both programs)."""


def _llama(b: int, s: int, heads: int, dim: int, ffn: int) -> str:
    h = heads * dim
    x, w, f = f"tensor<{b}x{s}x{h}xf32>", f"tensor<{h}x{h}xf32>", f"tensor<{b}x{s}x{ffn}xf32>"
    return f"""
func.func @llama(%x: {x}, %n1w: tensor<{h}xf32>, %wq: {w}, %wk: {w}, %wv: {w}, %wo: {w}, %n2w: tensor<{h}xf32>, %wg: tensor<{h}x{ffn}xf32>, %wu: tensor<{h}x{ffn}xf32>, %wd: tensor<{ffn}x{h}xf32>) -> {x} {{
  %n1 = nn.rms_norm %x, %n1w {{eps = 1.0e-06 : f32}} : {x}, tensor<{h}xf32> -> {x}
  %q = nn.matmul %n1, %wq : {x}, {w} -> {x}
  %k = nn.matmul %n1, %wk : {x}, {w} -> {x}
  %v = nn.matmul %n1, %wv : {x}, {w} -> {x}
  %c = nn.attention %q, %k, %v {{num_heads = {heads} : i64, head_dim = {dim} : i64, causal = true}} : {x}, {x}, {x} -> {x}
  %o = nn.matmul %c, %wo : {x}, {w} -> {x}
  %r = nn.add %x, %o : {x}, {x} -> {x}
  %n2 = nn.rms_norm %r, %n2w {{eps = 1.0e-06 : f32}} : {x}, tensor<{h}xf32> -> {x}
  %g = nn.matmul %n2, %wg : {x}, tensor<{h}x{ffn}xf32> -> {f}
  %u = nn.matmul %n2, %wu : {x}, tensor<{h}x{ffn}xf32> -> {f}
  %a = nn.silu %g : {f} -> {f}
  %m = nn.mul %u, %a : {f}, {f} -> {f}
  %d = nn.matmul %m, %wd : {f}, tensor<{ffn}x{h}xf32> -> {x}
  %y = nn.add %r, %d : {x}, {x} -> {x}
  func.return %y : {x}
}}"""


PROGRAMS = {
    "llama": _llama(2, 70, 4, 16, 96),
    "bert-small": (EXAMPLES / "bert_layer_small.mlir").read_text(),
}


@pytest.mark.parametrize("pipeline", ["default", "none"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_gpu_layout_attention_matches_reference(program: str, layout: str, pipeline: str) -> None:
    source = PROGRAMS[program]
    module = load(source)
    fn = find_function(module, None)
    args = random_inputs(fn, 3)
    expected = run_function(module, args, fn.sym_name.data)
    plan = lower(load(source), pipeline=pipeline, device_info=LAYOUTS[layout]).plan
    assert "register-tiled attention" in plan.source and TILES[layout] in plan.source
    outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, ATOL, RTOL, normwise=True):
        assert result.ok, result.describe(ATOL, RTOL)
