"""GEMM epilogues on vectors of adjacent columns (`fusec.codegen.vector_epilogue`).

Each program is a matmul whose elementwise tail becomes the GEMM's epilogue. It runs on the CPU
device twice, with the vector epilogue and with it switched off (every lane through the scalar
function, as before); the two must give the same bits, and both must match numpy. The kernel
source must call the vector function where the region is vectorisable, so a regression to
lane-by-lane stores fails here too, and must not where it is not.
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, f32
from xdsl.ir import Block

import fusec
from fusec.codegen import templates
from fusec.codegen.vector_epilogue import emit_vector_epilogue
from fusec.dialects import kernel

M, K = 37, 24  # 37 rows: the last row tile is shifted back; N below is ragged too


def program(n: int, tail: str, extra_args: str = "") -> str:
    a, b, o = f"tensor<{M}x{K}xf32>", f"tensor<{K}x{n}xf32>", f"tensor<{M}x{n}xf32>"
    return f"""
func.func @g(%a: {a}, %b: {b}{extra_args}) -> {o} {{
  %p = nn.matmul %a, %b : {a}, {b} -> {o}
{tail}
}}"""


def gelu_bias(n: int) -> str:
    o = f"tensor<{M}x{n}xf32>"
    return program(n, f"""  %y = nn.add %p, %bias : {o}, tensor<{n}xf32> -> {o}
  %z = nn.gelu %y : {o} -> {o}
  func.return %z : {o}""", f", %bias: tensor<{n}xf32>")


def residual_row_scale(n: int) -> str:
    """A residual (offset row * n + col), a per-row scale (uniform across the lanes) and a
    clamp (IEEE maximum/minimum)."""
    o = f"tensor<{M}x{n}xf32>"
    return program(n, f"""  %lo = nn.constant {{value = dense<-1.5> : tensor<f32>}} : tensor<f32>
  %hi = nn.constant {{value = dense<1.5> : tensor<f32>}} : tensor<f32>
  %1 = nn.add %p, %res : {o}, {o} -> {o}
  %2 = nn.mul %1, %rs : {o}, tensor<{M}x1xf32> -> {o}
  %3 = nn.max %2, %lo : {o}, tensor<f32> -> {o}
  %4 = nn.min %3, %hi : {o}, tensor<f32> -> {o}
  func.return %4 : {o}""", f", %res: {o}, %rs: tensor<{M}x1xf32>")


def where_tanh(n: int) -> str:
    """A comparison and a select per lane (a mask), and tanh."""
    o = f"tensor<{M}x{n}xf32>"
    return program(n, f"""  %z = nn.constant {{value = dense<0.0> : tensor<f32>}} : tensor<f32>
  %c = nn.cmp %p, %z {{predicate = "gt"}} : {o}, tensor<f32> -> tensor<{M}x{n}xi1>
  %t = nn.tanh %p : {o} -> {o}
  %y = nn.where %c, %p, %t : tensor<{M}x{n}xi1>, {o}, {o} -> {o}
  func.return %y : {o}""")


CASES = {"gelu_bias": gelu_bias, "residual_row_scale": residual_row_scale,
         "where_tanh": where_tanh}


def run(text: str, args: list[np.ndarray], vectors: bool,
        monkeypatch) -> tuple[np.ndarray, str, str]:
    with monkeypatch.context() as patch:
        if not vectors:
            patch.setattr(templates, "emit_vector_epilogue", lambda *args: None)
        exe = fusec.compile(text, device="cpu", launch_fusion=False)
        (out,) = exe(*args)
        return np.asarray(out), exe.plan.source, exe.device.description


def reference(name: str, args: list[np.ndarray]) -> np.ndarray:
    a, b, *rest = (x.astype(np.float64) for x in args)
    p = a @ b
    if name == "gelu_bias":
        from math import erf
        y = p + rest[0]
        return 0.5 * y * (1 + np.vectorize(erf)(y / np.sqrt(2)))
    if name == "residual_row_scale":
        return np.clip((p + rest[0]) * rest[1], -1.5, 1.5)
    return np.where(p > 0, p, np.tanh(p))


@pytest.mark.parametrize("n", [64, 53, 16, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vector_epilogue_gives_the_scalar_bits(name, n, monkeypatch) -> None:
    text = CASES[name](n)
    rng = np.random.default_rng(n)
    shapes = {"gelu_bias": [(M, K), (K, n), (n,)],
              "residual_row_scale": [(M, K), (K, n), (M, n), (M, 1)],
              "where_tanh": [(M, K), (K, n)]}[name]
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    args[0][3, :] = 0.0  # a row of exact zeros: gelu(bias), tanh(0), the clamp at its bounds
    vector, source, device = run(text, args, True, monkeypatch)
    scalar, scalar_source, _ = run(text, args, False, monkeypatch)
    assert "_epilogue_v" in source
    assert "_epilogue_v" not in scalar_source
    if " on Intel(R) OpenCL" in device:  # Intel's runtime (CI's): vector built-ins give the
        # scalar ones' bits
        np.testing.assert_array_equal(vector, scalar)
    else:  # PoCL's vector erf is not its scalar erf: GELU values differ by up to 6 ulp (4.5e-8
        # at -0.1, 4e-7 relative; the GPU machine's PoCL 5.0, 2026-11-26)
        np.testing.assert_allclose(vector, scalar, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(vector, reference(name, args), rtol=2e-5, atol=2e-5)


def _region(build) -> Block:
    block = Block(arg_types=[f32, IndexType(), IndexType()])
    build(block)
    return block


def test_a_region_it_cannot_print_on_vectors_gets_no_vector_function() -> None:
    from xdsl.dialects.builtin import i32

    def to_int(block: Block) -> None:  # a cast to an integer result: stored lane by lane
        cast = arith.FPToSIOp(block.args[0], i32)
        block.add_ops([cast, kernel.YieldOp(cast.result)])

    def plain(block: Block) -> None:
        block.add_op(kernel.YieldOp(block.args[0]))

    assert emit_vector_epilogue("e_v8", _region(to_int), [], 8) is None
    source = emit_vector_epilogue("e_v8", _region(plain), [], 8)
    assert source is not None and "inline float8 e_v8(float8 acc" in source


def test_a_column_modulo_reads_each_lane_at_its_own_offset() -> None:
    """``col % 5``: not affine, so the load gathers lane by lane."""
    from xdsl.dialects import memref
    from xdsl.dialects.builtin import MemRefType

    block = Block(arg_types=[f32, IndexType(), IndexType(), MemRefType(f32, [5])])
    five = arith.ConstantOp.from_int_and_width(5, IndexType())
    rem = arith.RemUIOp(block.args[2], five.result)
    load = memref.LoadOp.get(block.args[3], [rem.result])
    add = arith.AddfOp(block.args[0], load.res)
    block.add_ops([five, rem, load, add, kernel.YieldOp(add.result)])
    source = emit_vector_epilogue("e_v4", block, ["w"], 4)
    assert source is not None
    assert "vload4" not in source and "w[v" in source and ".s3]" in source
