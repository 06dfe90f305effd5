"""Transposes, narrows and concats that feed or follow elementwise arithmetic are taken into one
``fused.elementwise`` as index maps of its loads (``passes/_view_regions.py``), whatever the
spelling: each program below is one kernel after ``default`` (it was 2 to 4 before), and the
numpy reference gives the same numbers fused, unfused (``-p none``) and fused then un-fused; on
the CPU OpenCL device ``fusec-run --verify-fusion`` compares fused, unfused and the reference on
random and adversarial inputs (large, ties, signed zeros, subnormals).
"""

# ruff: noqa: E501 - IR text is written one op per line

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.compiler.pipeline import run_pipeline
from fusec.dialects import fused
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.tools.fusec_run import main

T = "tensor<2x4x8xf32>"
H = "tensor<2x4x4xf32>"
CS = "tensor<4x8xf32>"

PROGRAMS: dict[str, str] = {
    # "was N": launches after `default` before views became index maps (main at 7330123)
    # was 5 launches
    "rotary_rotate_half": f"""
func.func @f(%x: {T}, %cos: {CS}, %sin: {CS}) -> {T} {{
  %x1 = nn.narrow %x {{axis = 2 : i64, start = 0 : i64, length = 4 : i64}} : {T} -> {H}
  %x2 = nn.narrow %x {{axis = 2 : i64, start = 4 : i64, length = 4 : i64}} : {T} -> {H}
  %n = nn.neg %x2 : {H} -> {H}
  %rot = nn.concat %n, %x1 {{axis = 2 : i64}} : ({H}, {H}) -> {T}
  %a = nn.mul %x, %cos : {T}, {CS} -> {T}
  %b = nn.mul %rot, %sin : {T}, {CS} -> {T}
  %y = nn.add %a, %b : {T}, {T} -> {T}
  func.return %y : {T}
}}""",
    # was 5 launches
    "rotary_halves_concat": f"""
func.func @f(%x: {T}, %c: tensor<4x4xf32>, %s: tensor<4x4xf32>) -> {T} {{
  %x1 = nn.narrow %x {{axis = -1 : i64, start = 0 : i64, length = 4 : i64}} : {T} -> {H}
  %x2 = nn.narrow %x {{axis = -1 : i64, start = 4 : i64, length = 4 : i64}} : {T} -> {H}
  %a = nn.mul %x1, %c : {H}, tensor<4x4xf32> -> {H}
  %b = nn.mul %x2, %s : {H}, tensor<4x4xf32> -> {H}
  %lo = nn.sub %a, %b : {H}, {H} -> {H}
  %d = nn.mul %x2, %c : {H}, tensor<4x4xf32> -> {H}
  %e = nn.mul %x1, %s : {H}, tensor<4x4xf32> -> {H}
  %hi = nn.add %d, %e : {H}, {H} -> {H}
  %y = nn.concat %lo, %hi {{axis = 2 : i64}} : ({H}, {H}) -> {T}
  func.return %y : {T}
}}""",
    # was 3 launches
    "transpose_there_and_back": """
func.func @f(%x: tensor<6x8xf32>, %b: tensor<6xf32>) -> tensor<6x8xf32> {
  %t = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<6x8xf32> -> tensor<8x6xf32>
  %s = nn.add %t, %b : tensor<8x6xf32>, tensor<6xf32> -> tensor<8x6xf32>
  %g = nn.gelu %s {approximate = "tanh"} : tensor<8x6xf32> -> tensor<8x6xf32>
  %y = nn.transpose %g {perm = array<i64: 1, 0>} : tensor<8x6xf32> -> tensor<6x8xf32>
  func.return %y : tensor<6x8xf32>
}""",
    # was 2 launches
    "transpose_3d_heads": """
func.func @f(%x: tensor<2x3x5xf32>, %y: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %t = nn.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x3x5xf32> -> tensor<2x5x3xf32>
  %e = nn.exp %t : tensor<2x5x3xf32> -> tensor<2x5x3xf32>
  %m = nn.mul %e, %y : tensor<2x5x3xf32>, tensor<2x5x3xf32> -> tensor<2x5x3xf32>
  func.return %m : tensor<2x5x3xf32>
}""",
    # was 3 launches
    "concat_of_two_results": """
func.func @f(%a: tensor<3x5xf32>, %b: tensor<2x5xf32>, %c: tensor<5xf32>) -> tensor<5x5xf32> {
  %ea = nn.exp %a : tensor<3x5xf32> -> tensor<3x5xf32>
  %sa = nn.mul %ea, %c : tensor<3x5xf32>, tensor<5xf32> -> tensor<3x5xf32>
  %tb = nn.tanh %b : tensor<2x5xf32> -> tensor<2x5xf32>
  %y = nn.concat %sa, %tb {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2x5xf32>) -> tensor<5x5xf32>
  func.return %y : tensor<5x5xf32>
}""",
    # was 3 launches
    "concat_then_arith_three_pieces": """
func.func @f(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>, %c: tensor<4x1xf32>) -> tensor<4x6xf32> {
  %na = nn.neg %a : tensor<4x2xf32> -> tensor<4x2xf32>
  %y = nn.concat %na, %b, %c {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  %r = nn.relu %y : tensor<4x6xf32> -> tensor<4x6xf32>
  func.return %r : tensor<4x6xf32>
}""",
    # was 3 launches
    "narrow_of_a_result": """
func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %s = nn.sub %x, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %e = nn.exp %s : tensor<4x8xf32> -> tensor<4x8xf32>
  %n = nn.narrow %e {axis = 1 : i64, start = 2 : i64, length = 3 : i64} : tensor<4x8xf32> -> tensor<4x3xf32>
  %r = nn.sqrt %n : tensor<4x3xf32> -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}""",
}

TWO_MAPS = """
func.func @f(%x: tensor<5x5xf32>) -> tensor<5x5xf32> {
  %e = nn.exp %x : tensor<5x5xf32> -> tensor<5x5xf32>
  %t = nn.transpose %e {perm = array<i64: 1, 0>} : tensor<5x5xf32> -> tensor<5x5xf32>
  %y = nn.sub %e, %t : tensor<5x5xf32>, tensor<5x5xf32> -> tensor<5x5xf32>
  func.return %y : tensor<5x5xf32>
}"""
"""``exp(x)`` is read straight and transposed: computed once per map would be twice, so it is
materialised (2 launches) and the transpose is a map of the second kernel's load."""


def compile_text(text: str, spec: str):
    module = parse_module(make_context(), Source(text, "case.mlir"))
    run_pipeline(make_context(), module, spec, "case.mlir")
    return module


def launches(module) -> int:
    """Kernel launches as ``fusion_stats`` counts them: nn and fused ops but constants."""
    fn = find_function(module)
    return sum(
        1 for op in fn.body.block.ops
        if op.dialect_name() in ("nn", "fused") and op.name != "nn.constant"
    )


@pytest.mark.parametrize("name", PROGRAMS)
def test_one_launch_and_the_same_numbers(name: str) -> None:
    text = PROGRAMS[name]
    plain = compile_text(text, "")
    fused_module = compile_text(text, "default")
    assert launches(fused_module) == 1, fused_module
    (region,) = [o for o in fused_module.walk() if isinstance(o, fused.ElementwiseOp)]
    assert region.indexing_maps is not None
    round_trip = compile_text(text, "default,unfuse")
    assert not any(o.name.startswith("fused.") for o in round_trip.walk())
    rng = np.random.default_rng(0)
    for seed in range(3):
        args = random_inputs(find_function(plain), seed)
        if seed == 2:  # adversarial: large magnitudes, ties, signed zeros
            args = [np.where(rng.random(a.shape) < 0.3, -0.0, np.round(a * 30.0)).astype(a.dtype)
                    for a in args]
        expect = run_function(plain, args)
        for module in (fused_module, round_trip):
            got = run_function(module, args)
            for e, g in zip(expect, got, strict=True):
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_a_value_read_through_two_maps_is_materialised() -> None:
    module = compile_text(TWO_MAPS, "default")
    assert launches(module) == 2
    args = random_inputs(find_function(module), 1)
    expect = run_function(compile_text(TWO_MAPS, ""), args)
    np.testing.assert_allclose(run_function(module, args)[0], expect[0], rtol=1e-6)


@pytest.mark.parametrize("name", ["rotary_rotate_half", "transpose_there_and_back",
                                  "concat_then_arith_three_pieces"])
def test_on_the_cpu_device(name: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / f"{name}.mlir"
    path.write_text(PROGRAMS[name])
    code = main([str(path), "--verify-fusion", "--device", "cpu", "-p", "default"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert all(line.endswith(": ok") for line in out.splitlines()), out


ROTATED_KEYS = """
func.func @f(%x: tensor<4x2x8xf32>, %c: tensor<4x8xf32>) -> (tensor<2x4x8xf32>, tensor<PERMUTEDxf32>) {
  %t = nn.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<4x2x8xf32> -> tensor<2x4x8xf32>
  %r = nn.narrow %t {axis = 2 : i64, start = 4 : i64, length = 4 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %l = nn.narrow %t {axis = 2 : i64, start = 0 : i64, length = 4 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %nr = nn.neg %r : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %rot = nn.concat %nr, %l {axis = 2 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x8xf32>
  %m = nn.mul %t, %c : tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
  %k = nn.add %m, %rot : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %back = nn.transpose %k {perm = array<i64: PERM>} : tensor<2x4x8xf32> -> tensor<PERMUTEDxf32>
  func.return %k, %back : tensor<2x4x8xf32>, tensor<PERMUTEDxf32>
}"""
"""A decoder's keys: rotated head-major (returned, for a KV cache) and transposed (as attention
reads them). The rotation selects by its position along the last axis (``fused.index``)."""


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (0, 2, 1)])
def test_a_returned_region_is_computed_again_for_its_transpose(perm, tmp_path: Path,
                                                               capsys) -> None:
    """The transpose of a region that is also returned is the region again in the
    transposed layout (``passes/_transposed_regions.py``): 2 launches, not 3 (the region, then a
    copy of it), and the same numbers, whichever axis the transpose moves (the region's
    ``fused.index`` renamed with it; (2, 0, 1) moves the indexed axis first)."""
    shape = [(2, 4, 8)[p] for p in perm]
    text = ROTATED_KEYS.replace("PERMUTED", "x".join(map(str, shape))).replace(
        "PERM", ", ".join(map(str, perm)))
    plain = compile_text(text, "")
    fused_module = compile_text(text, "default")
    assert launches(fused_module) == 2, fused_module
    assert not any(o.name == "nn.transpose" for o in fused_module.walk())
    for seed in range(3):
        args = random_inputs(find_function(plain), seed)
        for e, g in zip(run_function(plain, args), run_function(fused_module, args), strict=True):
            np.testing.assert_array_equal(g, e)  # the same scalar ops on the same values
    path = tmp_path / "keys.mlir"
    path.write_text(text)
    code = main([str(path), "--verify-fusion", "--device", "cpu", "-p", "default"])
    out = capsys.readouterr().out
    assert code == 0 and all(line.endswith(": ok") for line in out.splitlines()), out


VALUE_HEADS = """
func.func @f(%qkv: tensor<2x16x96xf32>) -> tensor<2x4x16x8xf32> {
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<2x16x96xf32> -> tensor<2x16x32xf32>
  %h = nn.reshape %v : tensor<2x16x32xf32> -> tensor<2x16x4x8xf32>
  %t = nn.transpose %h {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x8xf32> -> tensor<2x4x16x8xf32>
  func.return %t : tensor<2x4x16x8xf32>
}"""
"""A packed projection's value heads put out head-major (a KV cache): a narrow, a reshape and a
transpose; the reshape moves above the narrow (``narrow last``) and the narrow and transpose
are one copy through their composed map."""


def test_a_chain_of_views_is_one_copy(tmp_path: Path, capsys) -> None:
    plain = compile_text(VALUE_HEADS, "")
    fused_module = compile_text(VALUE_HEADS, "default")
    assert launches(fused_module) == 2, fused_module  # the free reshape of the input counts
    assert [o.name for o in find_function(fused_module).body.block.ops][:2] == [
        "nn.reshape", "fused.elementwise"]
    args = random_inputs(find_function(plain), 0)
    np.testing.assert_array_equal(run_function(fused_module, args)[0],
                                  run_function(plain, args)[0])
    path = tmp_path / "values.mlir"
    path.write_text(VALUE_HEADS)
    code = main([str(path), "--verify-fusion", "--device", "cpu", "-p", "default"])
    out = capsys.readouterr().out
    assert code == 0 and all(line.endswith(": ok") for line in out.splitlines()), out
