"""Grouped-query attention by its values (``canonicalize-nn``'s ``GroupedHeads``,
``passes/_view_tables.py``): an ``nn.attention`` whose k and v repeat each key/value head for
a group of query heads, through whatever chain of views the exporter wrote (a Gather of
``[0, 0, 1, 1]`` on the head axis, Unsqueeze/Expand/Reshape as a broadcasting ``nn.where``),
reads the kv heads once with ``num_kv_heads``, and the repeat kernels are gone. A chain that
does not repeat consecutive heads (a Tile, ``[0, 1, 0, 1]``) or repeats k and v differently is
left as written. Fused (``default``), unfused and the numpy reference agree on random and
adversarial inputs; on the CPU OpenCL device ``fusec-run --verify-fusion`` compares them.
"""

# ruff: noqa: E501 - IR text is written one op per line

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fusec.dialects import nn
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.tools.fusec_run import main
from tests.passes.elementwise.test_view_regions import compile_text, launches

HEAD = "tensor<1x2x6x8xf32>"
REP = "tensor<1x4x6x8xf32>"


def gathered(name: str, src: str, indices: str) -> str:
    """``src`` (``[1, 6, 16]``, 2 heads of 8) with its heads gathered by ``indices`` in the
    ``[B, H, S, D]`` layout, back to ``[1, 6, 32]`` (the TorchScript exporter's repeat_kv)."""
    return f"""
  %{name}4 = nn.reshape %{src} : tensor<1x6x16xf32> -> tensor<1x6x2x8xf32>
  %{name}t = nn.transpose %{name}4 {{perm = array<i64: 0, 2, 1, 3>}} : tensor<1x6x2x8xf32> -> {HEAD}
  %{name}i = nn.constant {{value = dense<{indices}> : tensor<4xi32>}} : tensor<4xi32>
  %{name}g = nn.gather %{name}t, %{name}i {{axis = 1 : i64}} : {HEAD}, tensor<4xi32> -> {REP}
  %{name}b = nn.transpose %{name}g {{perm = array<i64: 0, 2, 1, 3>}} : {REP} -> tensor<1x6x4x8xf32>
  %{name} = nn.reshape %{name}b : tensor<1x6x4x8xf32> -> tensor<1x6x32xf32>"""


def expanded(name: str, src: str) -> str:
    """Unsqueeze, Expand (a ``where`` on a constant true) and Reshape (the dynamo exporter's
    and the TorchScript exporter's value repeat)."""
    return f"""
  %{name}4 = nn.reshape %{src} : tensor<1x6x16xf32> -> tensor<1x6x2x8xf32>
  %{name}t = nn.transpose %{name}4 {{perm = array<i64: 0, 2, 1, 3>}} : tensor<1x6x2x8xf32> -> {HEAD}
  %{name}5 = nn.reshape %{name}t : {HEAD} -> tensor<1x2x1x6x8xf32>
  %{name}c = nn.constant {{value = dense<true> : tensor<1x2x2x6x8xi1>}} : tensor<1x2x2x6x8xi1>
  %{name}w = nn.where %{name}c, %{name}5, %{name}5 : tensor<1x2x2x6x8xi1>, tensor<1x2x1x6x8xf32>, tensor<1x2x1x6x8xf32> -> tensor<1x2x2x6x8xf32>
  %{name}r = nn.reshape %{name}w : tensor<1x2x2x6x8xf32> -> {REP}
  %{name}b = nn.transpose %{name}r {{perm = array<i64: 0, 2, 1, 3>}} : {REP} -> tensor<1x6x4x8xf32>
  %{name} = nn.reshape %{name}b : tensor<1x6x4x8xf32> -> tensor<1x6x32xf32>"""


def program(k: str, v: str) -> str:
    """Causal masked attention of 4 query heads over k and v made of 2 projected heads; the
    key projection is rotated (a mul) first, as a Llama layer's is."""
    return f"""
func.func @f(%q: tensor<1x6x32xf32>, %x: tensor<1x6x16xf32>, %y: tensor<1x6x16xf32>, %m: tensor<1x6xi32>) -> tensor<1x6x32xf32> {{
  %kx = nn.mul %x, %x : tensor<1x6x16xf32>, tensor<1x6x16xf32> -> tensor<1x6x16xf32>{k}{v}
  %a = nn.attention %q, %k, %v mask %m {{num_heads = 4 : i64, head_dim = 8 : i64, causal = true}} : tensor<1x6x32xf32>, tensor<1x6x32xf32>, tensor<1x6x32xf32>, tensor<1x6xi32> -> tensor<1x6x32xf32>
  func.return %a : tensor<1x6x32xf32>
}}"""


GROUPED = {
    "gather_and_expand": program(gathered("k", "kx", "[0, 0, 1, 1]"), expanded("v", "y")),
    "both_gathered": program(gathered("k", "kx", "[0, 0, 1, 1]"), gathered("v", "y", "[0, 0, 1, 1]")),
    "both_expanded": program(expanded("k", "kx"), expanded("v", "y")),
    "negative_indices": program(gathered("k", "kx", "[-2, -2, 1, 1]"), expanded("v", "y")),
}
LEFT = {
    "tiled_not_grouped": program(gathered("k", "kx", "[0, 1, 0, 1]"), gathered("v", "y", "[0, 1, 0, 1]")),
    "k_and_v_differ": program(gathered("k", "kx", "[0, 0, 1, 1]"), gathered("v", "y", "[1, 1, 0, 0]")),
}


def attention_of(module) -> nn.AttentionOp:
    (op,) = [o for o in module.walk() if isinstance(o, nn.AttentionOp)]
    return op


def assert_same_numbers(text: str, modules) -> None:
    plain = compile_text(text, "")
    rng = np.random.default_rng(0)
    for seed in range(3):
        args = random_inputs(find_function(plain), seed)
        if seed == 2:  # adversarial: large magnitudes and ties (scores far apart or equal)
            args = [np.round(a * 30.0).astype(a.dtype) if a.dtype == np.float32 else a
                    for a in args]
            args[-1] = (rng.random(args[-1].shape) < 0.5).astype(np.int32)
        expect = run_function(plain, args)
        for module in modules:
            np.testing.assert_allclose(run_function(module, args)[0], expect[0], rtol=1e-5,
                                       atol=1e-5)


@pytest.mark.parametrize("name", GROUPED)
def test_a_repeat_of_kv_heads_becomes_num_kv_heads(name: str) -> None:
    text = GROUPED[name]
    canonical = compile_text(text, "canonicalize-nn")
    assert attention_of(canonical).kv_heads() == 2
    assert not any(isinstance(o, nn.GatherOp | nn.WhereOp) for o in canonical.walk())
    fused_module = compile_text(text, "default")
    assert attention_of(fused_module).kv_heads() == 2
    assert launches(fused_module) <= 3, fused_module  # the mul, its transpose, attention
    assert_same_numbers(text, [canonical, fused_module])


@pytest.mark.parametrize("name", LEFT)
def test_what_is_not_a_group_repeat_is_left(name: str) -> None:
    text = LEFT[name]
    canonical = compile_text(text, "canonicalize-nn")
    assert attention_of(canonical).kv_heads() == 4
    assert any(isinstance(o, nn.GatherOp) for o in canonical.walk())
    assert_same_numbers(text, [canonical])


def test_on_the_cpu_device(tmp_path: Path, capsys) -> None:
    path = tmp_path / "gqa.mlir"
    path.write_text(GROUPED["gather_and_expand"])
    code = main([str(path), "--verify-fusion", "--device", "cpu", "-p", "default"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert all(line.endswith(": ok") for line in out.splitlines()), out
