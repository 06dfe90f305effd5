"""Every fused op against its decomposition: the numpy reference gives the same numbers for a
function holding the fused op and for the same function after ``decompose()``, on several seeds
and on odd shapes. Also: the decomposed IR verifies, holds no fused op, has the expected nn ops
and carries the fused op's location."""

from __future__ import annotations

import numpy as np
import pytest
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module, verify_module
from fusec.dialects.fused import ACTIVATIONS, FUSED_OPS
from fusec.reference.executor import find_function, random_inputs, run_function
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

SEEDS = (0, 1, 2)
# f32 results of a fused op (rounded once) and of its decomposition (rounded after every nn op)
# differ by a few ulps of the intermediate values.
RTOL, ATOL = 1e-5, 1e-6


def ty(shape: tuple[int, ...], elem: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def function(params: dict[str, str], op: str, result: str) -> str:
    """A ``func.func @f`` of ``op``, where ``{operands}`` are all the parameters in order,
    ``{types}`` their types and ``{res}`` the result type."""
    header = ", ".join(f"%{name}: {t}" for name, t in params.items())
    line = op.format(
        operands=", ".join(f"%{name}" for name in params),
        types=", ".join(params.values()),
        res=result,
    )
    return (
        f"func.func @f({header}) -> {result} {{\n  %r = {line}\n  func.return %r : {result}\n}}\n"
    )


def parse(text: str) -> ModuleOp:
    return parse_module(make_context(), Source(text, "case.mlir"))


def unfuse(module: ModuleOp) -> list[str]:
    """Replaces every fused op by its decomposition; returns the new ops' names."""
    names: list[str] = []
    for op in list(module.walk()):
        if isinstance(op, FUSED_OPS):
            new_ops, values = op.decompose()
            for new in new_ops:
                assert new.parent is None, "decompose() must return detached ops"
                assert new.location == op.location
            names += [new.name for new in new_ops]
            Rewriter.replace_op(op, new_ops, values)
    verify_module(module, "unfused")
    left = [op.name for op in module.walk() if op.dialect_name() == "fused"]
    assert not left, f"fused ops left after decomposition: {left}"
    return names


def check_same_numbers(
    text: str, seeds=SEEDS, rtol: float = RTOL, atol: float = ATOL, inputs=None
) -> list[str]:
    """Runs ``text`` before and after un-fusion on random inputs; returns the nn op names."""
    fused = parse(text)
    unfused = parse(text)
    names = unfuse(unfused)
    for seed in seeds:
        args = inputs(seed) if inputs else random_inputs(find_function(fused), seed)
        (expected,) = run_function(fused, args)
        (actual,) = run_function(unfused, args)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        assert np.isfinite(expected).all()
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=f"seed {seed}")
    return names


# --- matmul_bias_act ---------------------------------------------------------------------------

MBA = 'fused.matmul_bias_act {{operands}} {{{{activation = "{act}"}}}} : {{types}} -> {{res}}'

ACTIVATION_OPS = {
    "none": [],
    "relu": ["nn.relu"],
    "gelu": ["nn.gelu"],
    "gelu_tanh": ["nn.gelu"],
    "silu": ["nn.silu"],
    "sigmoid": ["nn.sigmoid"],
    "tanh": ["nn.tanh"],
}


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_matmul_bias_act(act: str):
    params = {"x": ty((3, 5, 7)), "w": ty((7, 6)), "b": ty((6,))}
    text = function(params, MBA.format(act=act), ty((3, 5, 6)))
    names = check_same_numbers(text)
    assert names == ["nn.matmul", "nn.add", *ACTIVATION_OPS[act]]


def test_matmul_bias_act_gelu_tanh_is_the_tanh_gelu():
    params = {"x": ty((2, 3)), "w": ty((3, 4)), "b": ty((4,))}
    unfused = parse(function(params, MBA.format(act="gelu_tanh"), ty((2, 4))))
    unfuse(unfused)
    (gelu,) = [op for op in unfused.walk() if op.name == "nn.gelu"]
    assert gelu.properties["approximate"].data == "tanh"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("x", "w", "b"),
    [((1, 1), (1, 1), (1,)), ((4, 9), (9, 3), ()), ((2, 3, 5), (2, 5, 4), (1,))],
    ids=["1x1", "scalar-bias", "batched-w"],
)
def test_matmul_bias_act_shapes(x, w, b):
    out = (*x[:-1], w[-1])
    params = {"x": ty(x), "w": ty(w), "b": ty(b)}
    check_same_numbers(function(params, MBA.format(act="silu"), ty(out)))


def test_matmul_bias_act_f16():
    params = {"x": ty((3, 8), "f16"), "w": ty((8, 5), "f16"), "b": ty((5,), "f16")}
    text = function(params, MBA.format(act="gelu"), ty((3, 5), "f16"))
    check_same_numbers(text, rtol=1e-2, atol=1e-2)


# --- residual norms ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 5), (7,), (1, 1)])
def test_residual_layer_norm(shape):
    size = shape[-1]
    params = {"x": ty(shape), "res": ty(shape), "g": ty((size,)), "b": ty((size,))}
    op = "fused.residual_layer_norm {operands} {{eps = 1.0e-03 : f32}} : ({types}) -> {res}"
    names = check_same_numbers(function(params, op, ty(shape)))
    assert names == ["nn.add", "nn.layer_norm"]


@pytest.mark.parametrize("shape", [(4, 7), (2, 3, 1)])
def test_residual_rms_norm(shape):
    size = shape[-1]
    params = {"x": ty(shape), "res": ty(shape), "g": ty((size,))}
    op = "fused.residual_rms_norm {operands} {{eps = 1.0e-02 : f32}} : ({types}) -> {res}"
    names = check_same_numbers(function(params, op, ty(shape)))
    assert names == ["nn.add", "nn.rms_norm"]


def test_residual_norm_keeps_eps():
    params = {"x": ty((2, 4)), "res": ty((2, 4)), "g": ty((4,))}
    op = "fused.residual_rms_norm {operands} {{eps = 0.25 : f32}} : ({types}) -> {res}"
    unfused = parse(function(params, op, ty((2, 4))))
    unfuse(unfused)
    (norm,) = [op for op in unfused.walk() if op.name == "nn.rms_norm"]
    assert norm.properties["eps"].value.data == 0.25  # type: ignore[attr-defined]


# --- swiglu ------------------------------------------------------------------------------------

SWIGLU = "fused.swiglu {{operands}} {attrs}: {{types}} -> {{res}}"


@pytest.mark.parametrize("gate_first", [False, True])
@pytest.mark.parametrize("shape", [(3, 10), (2, 3, 6), (2,)])
def test_swiglu(shape, gate_first: bool):
    attrs = "{{gate_first = true}} " if gate_first else ""
    out = (*shape[:-1], shape[-1] // 2)
    text = function({"cat": ty(shape)}, SWIGLU.format(attrs=attrs), ty(out))
    names = check_same_numbers(text)
    assert names == ["nn.narrow", "nn.narrow", "nn.silu", "nn.mul"]


def test_swiglu_gate_first_changes_the_numbers():
    """So that a decomposition swapping up and gate cannot pass the test above."""
    plain = parse(function({"cat": ty((3, 8))}, SWIGLU.format(attrs=""), ty((3, 4))))
    flipped = parse(
        function({"cat": ty((3, 8))}, SWIGLU.format(attrs="{{gate_first = true}} "), ty((3, 4)))
    )
    args = random_inputs(find_function(plain), 0)
    (a,) = run_function(plain, args)
    (b,) = run_function(flipped, args)
    assert not np.allclose(a, b, rtol=1e-3)
    cat = args[0].astype(np.float64)
    up, gate = cat[:, :4], cat[:, 4:]
    np.testing.assert_allclose(a, up * gate / (1 + np.exp(-gate)), rtol=1e-6)


# --- attention block and transformer layer -----------------------------------------------------


def attention_block_text(
    batch: int, seq: int, width: int, heads: int, dim: int, out: int, mask: str = "i1"
) -> str:
    h = heads * dim
    params = {
        "hidden": ty((batch, seq, width)),
        "qkv_w": ty((width, 3 * h)),
        "qkv_b": ty((3 * h,)),
        "out_w": ty((h, out)),
        "out_b": ty((out,)),
        "mask": ty((batch, seq), mask),
    }
    op = (
        f"fused.attention_block {{operands}} {{{{num_heads = {heads} : i64, head_dim = {dim} "
        f": i64}}}} : ({{types}}) -> {{res}}"
    )
    return function(params, op, ty((batch, seq, out)))


ATTENTION_BLOCK_OPS = [
    "nn.matmul",
    "nn.add",
    "nn.narrow",
    "nn.narrow",
    "nn.narrow",
    "nn.attention",
    "nn.matmul",
    "nn.add",
]


@pytest.mark.parametrize(
    ("batch", "seq", "width", "heads", "dim", "out", "mask"),
    [(2, 5, 6, 2, 3, 4, "i1"), (1, 3, 4, 1, 5, 4, "f32"), (3, 1, 2, 3, 1, 3, "i32")],
)
def test_attention_block(batch, seq, width, heads, dim, out, mask):
    text = attention_block_text(batch, seq, width, heads, dim, out, mask)
    assert check_same_numbers(text) == ATTENTION_BLOCK_OPS


def test_attention_block_fully_masked_batch():
    text = attention_block_text(2, 4, 6, 2, 3, 6)
    module = parse(text)

    def inputs(seed: int):
        args = random_inputs(find_function(module), seed)
        args[5][1] = False  # batch 1: every key masked
        return args

    check_same_numbers(text, inputs=inputs)
    args = inputs(0)
    (out,) = run_function(module, args)
    # attention gives zeros, so every position of batch 1 is just the output bias
    np.testing.assert_allclose(out[1], np.broadcast_to(args[4], (4, 6)), rtol=1e-6)


def transformer_text(
    act: str,
    batch: int = 2,
    seq: int = 3,
    width: int = 8,
    heads: int = 2,
    dim: int = 3,
    inter: int = 5,
) -> str:
    h = heads * dim
    params = {
        "hidden": ty((batch, seq, width)),
        "mask": ty((batch, seq), "i1"),
        "qkv_w": ty((width, 3 * h)),
        "qkv_b": ty((3 * h,)),
        "out_w": ty((h, width)),
        "out_b": ty((width,)),
        "ln1_g": ty((width,)),
        "ln1_b": ty((width,)),
        "fc1_w": ty((width, inter)),
        "fc1_b": ty((inter,)),
        "fc2_w": ty((inter, width)),
        "fc2_b": ty((width,)),
        "ln2_g": ty((width,)),
        "ln2_b": ty((width,)),
    }
    op = (
        f"fused.transformer_layer {{operands}} {{{{num_heads = {heads} : i64, head_dim = {dim} "
        f": i64, intermediate_size = {inter} : i64, eps1 = 1.0e-03 : f32, eps2 = 1.0e-02 : f32, "
        f'activation = "{act}"}}}} : ({{types}}) -> {{res}}'
    )
    return function(params, op, ty((batch, seq, width)))


@pytest.mark.parametrize("act", ["gelu", "gelu_tanh", "relu", "none"])
def test_transformer_layer(act: str):
    names = check_same_numbers(transformer_text(act))
    assert names == [
        *ATTENTION_BLOCK_OPS,
        "nn.add",
        "nn.layer_norm",
        "nn.matmul",
        "nn.add",
        *ACTIVATION_OPS[act],
        "nn.matmul",
        "nn.add",
        "nn.add",
        "nn.layer_norm",
    ]


def test_transformer_layer_odd_shape():
    check_same_numbers(transformer_text("silu", batch=1, seq=7, width=5, heads=1, dim=3, inter=9))


def test_transformer_layer_keeps_both_eps():
    unfused = parse(transformer_text("gelu"))
    unfuse(unfused)
    eps = [op.properties["eps"].value.data for op in unfused.walk() if op.name == "nn.layer_norm"]
    assert eps == pytest.approx([1e-3, 1e-2])


# --- elementwise and reduce regions (decomposition from fusec.dialects.scalar_ops) -------------

ELEMENTWISE = """
func.func @f(%x: tensor<3x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %r = fused.elementwise %x, %b : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32> {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %s, %half : f32
    %t = math.tanh %m : f32
    %zero = arith.constant 0.0 : f32
    %p = arith.cmpf olt, %a, %zero : f32
    %sel = arith.select %p, %t, %s : f32
    fused.yield %sel : f32
  }
  func.return %r : tensor<3x5xf32>
}
"""

REDUCE = """
func.func @f(%x: tensor<2x3x5xf32>, %y: tensor<3x1xf32>) -> tensor<2x1x5xf32> {
  %r = fused.reduce %x, %y {kind = "KIND", axes = array<i64: 1>, keepdims = true}
       : (tensor<2x3x5xf32>, tensor<3x1xf32>) -> tensor<2x1x5xf32> {
  ^bb0(%a: f32, %c: f32):
    %d = arith.subf %a, %c : f32
    %e = math.exp %d : f32
    fused.yield %e : f32
  }
  func.return %r : tensor<2x1x5xf32>
}
"""


def test_elementwise():
    check_same_numbers(ELEMENTWISE)


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min"])
def test_reduce(kind: str):
    check_same_numbers(REDUCE.replace("KIND", kind))


def test_elementwise_reference_evaluates_the_body():
    module = parse(ELEMENTWISE)
    x, b = random_inputs(find_function(module), 3)
    (out,) = run_function(module, [x, b])
    s = x.astype(np.float64) + b
    np.testing.assert_allclose(out, np.where(x < 0, np.tanh(s * 0.5), s), rtol=1e-6)
