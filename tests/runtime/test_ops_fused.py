"""Every ``fused`` op runs natively on the CPU OpenCL device and matches the numpy reference.

Same tolerances as ``test_ops_nn.py``: ``atol + rtol * |ref|`` with (1e-6, 1e-5) for bodies
with transcendental functions and (1e-5, 1e-4) where values are accumulated (matmul, norms,
attention, reductions).
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os

import pytest

from fusec.compiler.check import compare, run_with_reference

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
"""The OpenCL device kind the tests run on (the GPU machine sets ``gpu``)."""

TRANSCENDENTAL = (1e-6, 1e-5)
ACCUMULATED = (1e-5, 1e-4)


def check(source: str, tol: tuple[float, float], seed: int = 0) -> None:
    outputs, expected = run_with_reference(source, seed=seed, pipeline="none", device=DEVICE)
    atol, rtol = tol
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)


@pytest.mark.parametrize("activation", ["none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid",
                                        "tanh"])
@pytest.mark.parametrize("x,w,b,out", [
    ("5x17xf32", "17x13xf32", "13xf32", "5x13xf32"),
    ("2x7x17xf32", "17x9xf32", "1xf32", "2x7x9xf32"),
    ("2x7x17xf32", "2x17x9xf32", "f32", "2x7x9xf32"),
])
def test_matmul_bias_act(activation: str, x: str, w: str, b: str, out: str) -> None:
    check(f"""
func.func @f(%x: tensor<{x}>, %w: tensor<{w}>, %b: tensor<{b}>) -> tensor<{out}> {{
  %y = fused.matmul_bias_act %x, %w, %b {{activation = "{activation}"}} : tensor<{x}>, tensor<{w}>, tensor<{b}> -> tensor<{out}>
  func.return %y : tensor<{out}>
}}""", ACCUMULATED)


@pytest.mark.parametrize("shape", ["3x5x37", "7x768", "2x1500"])
def test_residual_layer_norm(shape: str) -> None:
    n = shape.split("x")[-1]
    t = f"tensor<{shape}xf32>"
    check(f"""
func.func @f(%x: {t}, %r: {t}, %g: tensor<{n}xf32>, %b: tensor<{n}xf32>) -> {t} {{
  %y = fused.residual_layer_norm %x, %r, %g, %b {{eps = 1.0e-12 : f32}} : ({t}, {t}, tensor<{n}xf32>, tensor<{n}xf32>) -> {t}
  func.return %y : {t}
}}""", ACCUMULATED)


@pytest.mark.parametrize("shape", ["3x5x37", "2x1500"])
def test_residual_rms_norm(shape: str) -> None:
    n = shape.split("x")[-1]
    t = f"tensor<{shape}xf32>"
    check(f"""
func.func @f(%x: {t}, %r: {t}, %g: tensor<{n}xf32>) -> {t} {{
  %y = fused.residual_rms_norm %x, %r, %g : ({t}, {t}, tensor<{n}xf32>) -> {t}
  func.return %y : {t}
}}""", ACCUMULATED)


@pytest.mark.parametrize("gate_first", [False, True])
@pytest.mark.parametrize("shape,out", [("3x5x14", "3x5x7"), ("4x16", "4x8")])
def test_swiglu(gate_first: bool, shape: str, out: str) -> None:
    check(f"""
func.func @f(%x: tensor<{shape}xf32>) -> tensor<{out}xf32> {{
  %y = fused.swiglu %x {{gate_first = {str(gate_first).lower()}}} : tensor<{shape}xf32> -> tensor<{out}xf32>
  func.return %y : tensor<{out}xf32>
}}""", TRANSCENDENTAL)


ATTENTION_WEIGHTS = """%qkv_w: tensor<24x72xf32>, %qkv_b: tensor<72xf32>, %out_w: tensor<24x{n}xf32>,
    %out_b: tensor<{n}xf32>"""


@pytest.mark.parametrize("mask_type,n", [("f32", 24), ("i1", 10)])
def test_attention_block(mask_type: str, n: int) -> None:
    check(f"""
func.func @f(%x: tensor<2x9x24xf32>, %mask: tensor<2x9x{mask_type}>, {ATTENTION_WEIGHTS.format(n=n)}) -> tensor<2x9x{n}xf32> {{
  %y = fused.attention_block %x, %qkv_w, %qkv_b, %out_w, %out_b, %mask {{num_heads = 3 : i64, head_dim = 8 : i64}} : (tensor<2x9x24xf32>, tensor<24x72xf32>, tensor<72xf32>, tensor<24x{n}xf32>, tensor<{n}xf32>, tensor<2x9x{mask_type}>) -> tensor<2x9x{n}xf32>
  func.return %y : tensor<2x9x{n}xf32>
}}""", ACCUMULATED)


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_transformer_layer(activation: str) -> None:
    check(f"""
func.func @f(%x: tensor<2x9x24xf32>, %mask: tensor<2x9xf32>, %qkv_w: tensor<24x72xf32>,
    %qkv_b: tensor<72xf32>, %out_w: tensor<24x24xf32>, %out_b: tensor<24xf32>,
    %g1: tensor<24xf32>, %b1: tensor<24xf32>, %fc1_w: tensor<24x40xf32>, %fc1_b: tensor<40xf32>,
    %fc2_w: tensor<40x24xf32>, %fc2_b: tensor<24xf32>, %g2: tensor<24xf32>, %b2: tensor<24xf32>)
    -> tensor<2x9x24xf32> {{
  %y = fused.transformer_layer %x, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %g1, %b1, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %g2, %b2 {{num_heads = 3 : i64, head_dim = 8 : i64, intermediate_size = 40 : i64, activation = "{activation}"}} : (tensor<2x9x24xf32>, tensor<2x9xf32>, tensor<24x72xf32>, tensor<72xf32>, tensor<24x24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24x40xf32>, tensor<40xf32>, tensor<40x24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) -> tensor<2x9x24xf32>
  func.return %y : tensor<2x9x24xf32>
}}""", ACCUMULATED)


def test_elementwise_broadcast_and_constants() -> None:
    check("""
func.func @f(%x: tensor<3x5x8xf32>, %b: tensor<8xf32>, %c: tensor<5x1xf32>, %e: tensor<f32>) -> tensor<3x5x8xf32> {
  %y = fused.elementwise %x, %b, %c, %e : (tensor<3x5x8xf32>, tensor<8xf32>, tensor<5x1xf32>, tensor<f32>) -> tensor<3x5x8xf32> {
  ^bb0(%a: f32, %bb: f32, %cc: f32, %ee: f32):
    %s = arith.addf %a, %bb : f32
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %s, %half : f32
    %t = math.tanh %m : f32
    %u = arith.mulf %t, %cc : f32
    %v = arith.subf %u, %ee : f32
    fused.yield %v : f32
  }
  func.return %y : tensor<3x5x8xf32>
}""", TRANSCENDENTAL)


def test_elementwise_mixed_types() -> None:
    check("""
func.func @f(%p: tensor<3x1xi1>, %x: tensor<3x7xf32>, %n: tensor<7xi32>) -> (tensor<3x7xf32>, tensor<3x7xi1>) {
  %y = fused.elementwise %p, %x, %n : (tensor<3x1xi1>, tensor<3x7xf32>, tensor<7xi32>) -> tensor<3x7xf32> {
  ^bb0(%c: i1, %a: f32, %i: i32):
    %f = arith.sitofp %i : i32 to f32
    %r = arith.select %c, %a, %f : f32
    %e = math.exp %r : f32
    fused.yield %e : f32
  }
  %z = fused.elementwise %x : (tensor<3x7xf32>) -> tensor<3x7xi1> {
  ^bb0(%a: f32):
    %zero = arith.constant 0.0 : f32
    %gt = arith.cmpf ogt, %a, %zero : f32
    fused.yield %gt : i1
  }
  func.return %y, %z : tensor<3x7xf32>, tensor<3x7xi1>
}""", TRANSCENDENTAL)


def test_unsigned_integer_division_of_negative_values() -> None:
    """``arith.divui`` and ``arith.remui`` read their operands unsigned, as the reference does
    (-7 is 4294967289): the kernel prints them in ``uint`` (a signed ``/`` gave -2 and -1)."""
    check("""
func.func @f(%n: tensor<6xi32>) -> tensor<6xi32> {
  %y = fused.elementwise %n : (tensor<6xi32>) -> tensor<6xi32> {
  ^bb0(%i: i32):
    %c3 = arith.constant 3 : i32
    %q = arith.divui %i, %c3 : i32
    %r = arith.remui %i, %c3 : i32
    %s = arith.addi %q, %r : i32
    fused.yield %s : i32
  }
  func.return %y : tensor<6xi32>
}""", TRANSCENDENTAL)


def test_elementwise_result_larger_than_inputs() -> None:
    """The result broadcasts the inputs further (to 2x3x4 from 3x4)."""
    check("""
func.func @f(%x: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %y = fused.elementwise %x : (tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    fused.yield %n : f32
  }
  func.return %y : tensor<2x3x4xf32>
}""", TRANSCENDENTAL)


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("axes,keepdims,out", [("-1", True, "3x5x1"), ("0, 2", False, "5"),
                                               ("1", False, "3x37")])
def test_reduce(kind: str, axes: str, keepdims: bool, out: str) -> None:
    check(f"""
func.func @f(%x: tensor<3x5x37xf32>, %b: tensor<37xf32>) -> tensor<{out}xf32> {{
  %y = fused.reduce %x, %b {{kind = "{kind}", axes = array<i64: {axes}>, keepdims = {str(keepdims).lower()}}} : (tensor<3x5x37xf32>, tensor<37xf32>) -> tensor<{out}xf32> {{
  ^bb0(%a: f32, %c: f32):
    %d = arith.subf %a, %c : f32
    %sq = arith.mulf %d, %d : f32
    fused.yield %sq : f32
  }}
  func.return %y : tensor<{out}xf32>
}}""", ACCUMULATED)


def test_unfused_program_equals_fused_program() -> None:
    """The same program with and without the default fusion pipeline gives the same numbers."""
    source = """
func.func @f(%x: tensor<2x7x16xf32>, %w: tensor<16x24xf32>, %b: tensor<24xf32>, %r: tensor<2x7x24xf32>, %g: tensor<24xf32>, %beta: tensor<24xf32>) -> tensor<2x7x24xf32> {
  %m = nn.matmul %x, %w : tensor<2x7x16xf32>, tensor<16x24xf32> -> tensor<2x7x24xf32>
  %a = nn.add %m, %b : tensor<2x7x24xf32>, tensor<24xf32> -> tensor<2x7x24xf32>
  %h = nn.gelu %a : tensor<2x7x24xf32> -> tensor<2x7x24xf32>
  %s = nn.add %h, %r : tensor<2x7x24xf32>, tensor<2x7x24xf32> -> tensor<2x7x24xf32>
  %y = nn.layer_norm %s, %g, %beta : tensor<2x7x24xf32>, tensor<24xf32>, tensor<24xf32> -> tensor<2x7x24xf32>
  func.return %y : tensor<2x7x24xf32>
}"""
    fused_out, expected = run_with_reference(source, pipeline="default", device=DEVICE)
    plain_out, _ = run_with_reference(source, pipeline="none", device=DEVICE)
    for result in compare(fused_out, expected, *ACCUMULATED):
        assert result.ok, result.describe(*ACCUMULATED)
    for result in compare(plain_out, fused_out, *ACCUMULATED):
        assert result.ok, result.describe(*ACCUMULATED)


def test_lower_opencl_unfuses_what_the_backend_does_not_implement(monkeypatch) -> None:
    """A fused op missing from the backend's native table is un-fused by ``lower-opencl`` and
    its nn ops are lowered instead; the numbers do not change."""
    from fusec.compiler import pipeline
    from fusec.lowering import lower_to_kernels

    native = tuple(n for n in lower_to_kernels.NATIVE_FUSED_OPS if n != "fused.swiglu")
    monkeypatch.setattr(lower_to_kernels, "NATIVE_FUSED_OPS", native)
    spec = lower_to_kernels.lower_opencl_spec()
    assert spec == "unfuse{ops=swiglu},lower-to-kernels,fuse-launches,plan-buffers"
    monkeypatch.setitem(pipeline.NAMED_PIPELINES, "lower-opencl", (spec, "test"))
    source = """
func.func @f(%x: tensor<3x5x14xf32>) -> tensor<3x5x7xf32> {
  %y = fused.swiglu %x : tensor<3x5x14xf32> -> tensor<3x5x7xf32>
  func.return %y : tensor<3x5x7xf32>
}"""
    from fusec.compiler.driver import load, lower

    lowered = lower(load(source), pipeline="none", launch_fusion=False).module
    names = {op.name for op in lowered.walk()}
    assert "fused.swiglu" not in names and "kernel.launch" in names
    launches = [op for op in lowered.walk() if op.name == "kernel.launch"]
    assert len(launches) > 1  # the narrows, silu and mul of the decomposition
    merged = lower(load(source), pipeline="none").module  # fuse-launches merges them again
    assert len([op for op in merged.walk() if op.name == "kernel.launch"]) < len(launches)
    check(source, TRANSCENDENTAL)
