"""``passes/_sibling_slices.py`` in ``fuse-elementwise``: a reshape of a narrow becomes a narrow
of a reshape (an index map or an in-place read instead of a copy kernel), and the rotary
embeddings of the query heads and of the key heads of one packed projection become one region
whose two narrows attention reads in place. A Llama attention written as the exporters write it
(narrow, reshape to heads, rotate_half by narrow/neg/concat, cos and sin, reshape back) is two
launches. Regions of different bodies, or reading different tables, are not joined. Fused,
unfused and fused-then-unfused agree with the reference on random and adversarial inputs; on
the CPU OpenCL device ``fusec-run --verify-fusion`` compares them.
"""

# ruff: noqa: E501 - IR text is written one op per line

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fusec.dialects import fused, nn
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.tools.fusec_run import main
from fusec.compiler.fusion_stats import kernel_count
from tests.passes.elementwise.test_view_regions import compile_text


def launches(text: str) -> int:
    """Kernel launches of the lowered program (views are free; launch fusion on)."""
    return kernel_count(compile_text(text, "default,lower-opencl")).launches


def rotary(name: str, start: int, heads: int, cos: str, sin: str, combine: str = "add") -> str:
    """Heads ``[start, start + heads)`` of ``%x`` (``[1, 6, 64]``, 8 heads of 8) rotated by
    rotate_half, reshaped back to ``[1, 6, heads * 8]``; ``combine="sub"`` is another body."""
    w, h = heads * 8, f"tensor<1x6x{heads}x8xf32>"
    half = f"tensor<1x6x{heads}x4xf32>"
    text = f"""
  %{name}n = nn.narrow %x {{axis = 2 : i64, start = {start * 8} : i64, length = {w} : i64}} : tensor<1x6x64xf32> -> tensor<1x6x{w}xf32>
  %{name}h = nn.reshape %{name}n : tensor<1x6x{w}xf32> -> {h}
  %{name}1 = nn.narrow %{name}h {{axis = 3 : i64, start = 0 : i64, length = 4 : i64}} : {h} -> {half}
  %{name}2 = nn.narrow %{name}h {{axis = 3 : i64, start = 4 : i64, length = 4 : i64}} : {h} -> {half}
  %{name}g = nn.neg %{name}2 : {half} -> {half}
  %{name}r = nn.concat %{name}g, %{name}1 {{axis = 3 : i64}} : ({half}, {half}) -> {h}
  %{name}a = nn.mul %{name}h, %{cos} : {h}, tensor<6x1x8xf32> -> {h}
  %{name}b = nn.mul %{name}r, %{sin} : {h}, tensor<6x1x8xf32> -> {h}
  %{name}c = nn.{combine} %{name}a, %{name}b : {h}, {h} -> {h}
  %{name} = nn.reshape %{name}c : {h} -> tensor<1x6x{w}xf32>"""
    return text


def attention(q: str, k: str) -> str:
    """Grouped-query attention of 4 query heads over 2 key heads, both from the packed
    ``%x`` (q: heads 0-3, k: heads 4-5, v: heads 6-7)."""
    return f"""
func.func @f(%x: tensor<1x6x64xf32>, %cos: tensor<6x1x8xf32>, %sin: tensor<6x1x8xf32>, %cos2: tensor<6x1x8xf32>, %m: tensor<1x6xi32>) -> tensor<1x6x32xf32> {{{q}{k}
  %v = nn.narrow %x {{axis = 2 : i64, start = 48 : i64, length = 16 : i64}} : tensor<1x6x64xf32> -> tensor<1x6x16xf32>
  %a = nn.attention %q, %k, %v mask %m {{num_heads = 4 : i64, head_dim = 8 : i64, causal = true, num_kv_heads = 2 : i64}} : tensor<1x6x32xf32>, tensor<1x6x16xf32>, tensor<1x6x16xf32>, tensor<1x6xi32> -> tensor<1x6x32xf32>
  func.return %a : tensor<1x6x32xf32>
}}"""


def first_head_negated(name: str, start: int, heads: int) -> str:
    """Heads ``[start, start + heads)`` of ``%x`` with the first of them negated (a concat
    along the heads: the body reads its position along the axis the siblings would join)."""
    w, h = heads * 8, f"tensor<1x6x{heads}x8xf32>"
    rest = f"tensor<1x6x{heads - 1}x8xf32>"
    return f"""
  %{name}n = nn.narrow %x {{axis = 2 : i64, start = {start * 8} : i64, length = {w} : i64}} : tensor<1x6x64xf32> -> tensor<1x6x{w}xf32>
  %{name}h = nn.reshape %{name}n : tensor<1x6x{w}xf32> -> {h}
  %{name}1 = nn.narrow %{name}h {{axis = 2 : i64, start = 0 : i64, length = 1 : i64}} : {h} -> tensor<1x6x1x8xf32>
  %{name}2 = nn.narrow %{name}h {{axis = 2 : i64, start = 1 : i64, length = {heads - 1} : i64}} : {h} -> {rest}
  %{name}g = nn.neg %{name}1 : tensor<1x6x1x8xf32> -> tensor<1x6x1x8xf32>
  %{name}r = nn.concat %{name}g, %{name}2 {{axis = 2 : i64}} : (tensor<1x6x1x8xf32>, {rest}) -> {h}
  %{name}c = nn.mul %{name}r, %cos : {h}, tensor<6x1x8xf32> -> {h}
  %{name} = nn.reshape %{name}c : {h} -> tensor<1x6x{w}xf32>"""


PROGRAMS = {
    # (program, launches after default, regions joined)
    "rotary_q_and_k": (attention(rotary("q", 0, 4, "cos", "sin"), rotary("k", 4, 2, "cos", "sin")), 2, True),
    "k_before_q": (attention(rotary("k", 4, 2, "cos", "sin"), rotary("q", 0, 4, "cos", "sin")), 2, True),
    "not_adjacent": (attention(rotary("q", 0, 4, "cos", "sin"), rotary("k", 5, 2, "cos", "sin")), 3, False),
    "position_along_the_join": (attention(first_head_negated("q", 0, 4), first_head_negated("k", 4, 2)), 3, False),
    "other_tables": (attention(rotary("q", 0, 4, "cos", "sin"), rotary("k", 4, 2, "cos2", "sin")), 3, False),
    "other_bodies": (attention(rotary("q", 0, 4, "cos", "sin"), rotary("k", 4, 2, "cos", "sin", "sub")), 3, False),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_slices_and_sibling_regions(name: str) -> None:
    text, expected_launches, joined = PROGRAMS[name]
    plain = compile_text(text, "")
    fused_module = compile_text(text, "default")
    assert launches(text) == expected_launches
    regions = [o for o in fused_module.walk() if isinstance(o, fused.ElementwiseOp)]
    shapes = sorted(o.result.type.get_shape()[2] for o in regions)
    assert shapes == ([6] if joined else [2, 4]), fused_module
    # attention reads its q and k in place: narrows of the last axis, nothing copies them
    (attn,) = [o for o in fused_module.walk() if isinstance(o, nn.AttentionOp)]
    assert all(isinstance(v.owner, nn.NarrowOp) for v in (attn.q, attn.k, attn.v)) or not joined
    round_trip = compile_text(text, "default,unfuse")
    assert not any(o.name.startswith("fused.") for o in round_trip.walk())
    rng = np.random.default_rng(0)
    for seed in range(3):
        args = random_inputs(find_function(plain), seed)
        if seed == 2:  # adversarial: large magnitudes, ties, signed zeros; a random key mask
            args = [np.where(rng.random(a.shape) < 0.3, -0.0, np.round(a * 30.0)).astype(a.dtype)
                    if a.dtype == np.float32 else (rng.random(a.shape) < 0.6).astype(a.dtype)
                    for a in args]
        expect = run_function(plain, args)
        for module in (fused_module, round_trip):
            np.testing.assert_allclose(run_function(module, args)[0], expect[0], rtol=1e-5,
                                       atol=1e-4)


NOT_ONE_SLICE = """
func.func @f(%x: tensor<4x6xf32>) -> tensor<12xf32> {
  %n = nn.narrow %x {axis = 1 : i64, start = 0 : i64, length = 3 : i64} : tensor<4x6xf32> -> tensor<4x3xf32>
  %r = nn.reshape %n : tensor<4x3xf32> -> tensor<12xf32>
  %e = nn.exp %r : tensor<12xf32> -> tensor<12xf32>
  func.return %e : tensor<12xf32>
}"""


def test_a_reshape_that_mixes_slices_keeps_its_narrow() -> None:
    module = compile_text(NOT_ONE_SLICE, "default")
    assert any(isinstance(o, nn.NarrowOp) and o.input.type.get_shape() == (4, 6)
               for o in module.walk()), module
    args = random_inputs(find_function(module), 0)
    np.testing.assert_allclose(run_function(module, args)[0],
                               run_function(compile_text(NOT_ONE_SLICE, ""), args)[0])


def test_on_the_cpu_device(tmp_path: Path, capsys) -> None:
    path = tmp_path / "rotary.mlir"
    path.write_text(PROGRAMS["rotary_q_and_k"][0])
    code = main([str(path), "--verify-fusion", "--device", "cpu", "-p", "default"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert all(line.endswith(": ok") for line in out.splitlines()), out


def cache_heads(batch: int, seq: int) -> str:
    """GPT-2's attention input as its model writes it, the keys and values also returned
    head-major (its KV cache): 2 heads of 4 at width 8, a packed ``[batch, seq, 24]``."""
    qkv, part, heads = (f"tensor<{batch}x{seq}x{n}xf32>" for n in (24, 8, "2x4"))
    out = f"tensor<{batch}x2x{seq}x4xf32>"
    lines = [f"func.func @f(%qkv: {qkv}) -> ({out}, {out}, {part}) {{"]
    for name, start in (("q", 0), ("k", 8), ("v", 16)):
        lines.append(f"  %{name} = nn.narrow %qkv {{axis = 2 : i64, start = {start} : i64, "
                     f"length = 8 : i64}} : {qkv} -> {part}")
    for name in ("k", "v"):
        lines += [f"  %{name}h = nn.reshape %{name} : {part} -> {heads}",
                  f"  %{name}t = nn.transpose %{name}h {{perm = array<i64: 0, 2, 1, 3>}} : "
                  f"{heads} -> {out}"]
    lines += [f"  %a = nn.attention %q, %k, %v {{num_heads = 2 : i64, head_dim = 4 : i64, "
              f"causal = true}} : {part}, {part}, {part} -> {part}",
              f"  func.return %kt, %vt, %a : {out}, {out}, {part}", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("batch,seq", [(2, 8), (1024, 256)])
def test_returned_cache_heads_are_one_launch(batch: int, seq: int) -> None:
    """The keys and values returned head-major: each narrow moves below its reshape (also at a
    whole model's size, checked on index tables with the kept leading axes at size 1, and
    though attention reads the narrow too: in place), each narrow-and-transpose is one copy, the
    two copies are not joined into one region (each is returned: it would be copied out of it
    again) and launch fusion runs them as one launch; attention reads q, k and v in place."""
    text = cache_heads(batch, seq)
    assert launches(text) == 2, compile_text(text, "default")
    if batch * seq <= 4096:
        plain = compile_text(text, "")
        fused_module = compile_text(text, "default")
        for seed in range(2):
            args = random_inputs(find_function(plain), seed)
            for e, g in zip(run_function(plain, args), run_function(fused_module, args),
                            strict=True):
                np.testing.assert_array_equal(g, e)
