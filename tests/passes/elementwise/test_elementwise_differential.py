"""Fused programs compute what the unfused ones compute: the numpy reference runs each program
as written and after the elementwise fusions (default limits, tight limits, fuse then unfuse,
fuse then clip), on random inputs and on inputs chosen to stress the bodies: negative values
under sqrt and log (NaN and -inf in both), large values in exp (inf, and inf - inf), where with
both branches taken, scalars and [N] broadcast over [M, N], f16 and i32 casts, integer division
by zero.

The reference evaluates a fused body op by op (``reference/scalar.py``), rounding each
step to its scalar type, so these tests check the scalar formulas of ``scalar_ops`` and the
region building, not only that un-fusion inverts fusion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from fusec.reference.executor import find_function, random_inputs

M, N = 3, 5

VARIANTS = {
    "fused": "fuse-elementwise,fuse-reductions",
    "tight": "fuse-elementwise{max-steps=3 max-inputs=2},fuse-reductions{max-steps=3 max-inputs=2}",
    "round-trip": "fuse-elementwise,fuse-reductions,unfuse-elementwise",
    "clipped": "fuse-elementwise,fuse-reductions,clip-elementwise{max-steps=2 max-inputs=2}",
}

Inputs = Callable[[np.random.Generator], list[np.ndarray]]


@dataclass
class Program:
    text: str
    stress: Inputs
    nonfinite: bool = False  # the stress inputs must give NaN or inf in some output
    regions: tuple[str, ...] = ("fused.elementwise",)  # what "fused" must contain


def f32(*shape: int) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def grid(lo: float, hi: float, *shape: int) -> np.ndarray:
    size = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, size, dtype=np.float32).reshape(shape)


PROGRAMS: dict[str, Program] = {
    "sqrt_log_of_negatives": Program(
        f"""
func.func @f(%x: {f32(M, N)}, %b: {f32(N)}) -> {f32(M, N)} {{
  %0 = nn.sqrt %x : {f32(M, N)} -> {f32(M, N)}
  %1 = nn.log %x : {f32(M, N)} -> {f32(M, N)}
  %2 = nn.mul %1, %b : {f32(M, N)}, {f32(N)} -> {f32(M, N)}
  %3 = nn.add %0, %2 : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  func.return %3 : {f32(M, N)}
}}""",
        lambda rng: [grid(-2.0, 2.0, M, N), grid(0.5, 1.5, N)],
        nonfinite=True,
    ),
    "large_exp": Program(
        f"""
func.func @f(%x: {f32(M, N)}) -> {f32(M, N)} {{
  %ten = nn.constant {{value = dense<1.000000e+01> : tensor<f32>}} : tensor<f32>
  %0 = nn.mul %x, %ten : {f32(M, N)}, tensor<f32> -> {f32(M, N)}
  %1 = nn.exp %0 : {f32(M, N)} -> {f32(M, N)}
  %2 = nn.exp %x : {f32(M, N)} -> {f32(M, N)}
  %3 = nn.sub %1, %2 : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  %4 = nn.tanh %3 : {f32(M, N)} -> {f32(M, N)}
  func.return %4 : {f32(M, N)}
}}""",
        lambda rng: [grid(-100.0, 100.0, M, N)],
        nonfinite=True,
    ),
    "where_both_branches": Program(
        f"""
func.func @f(%a: {f32(M, N)}, %b: {f32(N)}, %s: tensor<f32>) -> {f32(M, N)} {{
  %0 = nn.cmp %a, %b {{predicate = "gt"}} : {f32(M, N)}, {f32(N)} -> tensor<{M}x{N}xi1>
  %1 = nn.exp %a : {f32(M, N)} -> {f32(M, N)}
  %2 = nn.neg %b : {f32(N)} -> {f32(N)}
  %3 = nn.mul %2, %s : {f32(N)}, tensor<f32> -> {f32(N)}
  %4 = nn.where %0, %1, %3 : tensor<{M}x{N}xi1>, {f32(M, N)}, {f32(N)} -> {f32(M, N)}
  func.return %4 : {f32(M, N)}
}}""",
        lambda rng: [grid(-1.0, 1.0, M, N), grid(-0.5, 0.5, N), np.float32(3.0)],
    ),
    "activations": Program(
        f"""
func.func @f(%x: {f32(M, N)}, %b: {f32(N)}) -> {f32(M, N)} {{
  %eps = nn.constant {{value = dense<1.000000e-03> : tensor<f32>}} : tensor<f32>
  %0 = nn.gelu %x : {f32(M, N)} -> {f32(M, N)}
  %1 = nn.gelu %0 {{approximate = "tanh"}} : {f32(M, N)} -> {f32(M, N)}
  %2 = nn.silu %1 : {f32(M, N)} -> {f32(M, N)}
  %3 = nn.sigmoid %2 : {f32(M, N)} -> {f32(M, N)}
  %4 = nn.relu %b : {f32(N)} -> {f32(N)}
  %5 = nn.abs %x : {f32(M, N)} -> {f32(M, N)}
  %6 = nn.add %5, %eps : {f32(M, N)}, tensor<f32> -> {f32(M, N)}
  %7 = nn.rsqrt %6 : {f32(M, N)} -> {f32(M, N)}
  %8 = nn.pow %7, %4 : {f32(M, N)}, {f32(N)} -> {f32(M, N)}
  %9 = nn.sub %3, %8 : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  %10 = nn.min %9, %x : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  func.return %10 : {f32(M, N)}
}}""",
        lambda rng: [grid(-6.0, 6.0, M, N), grid(-1.0, 1.0, N)],
    ),
    "casts_f16_i32": Program(
        f"""
func.func @f(%h: tensor<{M}x{N}xf16>, %i: tensor<{N}xi32>, %x: {f32(M, N)})
    -> (tensor<{M}x{N}xf16>, {f32(M, N)}) {{
  %0 = nn.cast %h : tensor<{M}x{N}xf16> -> {f32(M, N)}
  %1 = nn.cast %i : tensor<{N}xi32> -> {f32(N)}
  %2 = nn.add %0, %1 : {f32(M, N)}, {f32(N)} -> {f32(M, N)}
  %3 = nn.cast %2 : {f32(M, N)} -> tensor<{M}x{N}xf16>
  %4 = nn.mul %3, %h : tensor<{M}x{N}xf16>, tensor<{M}x{N}xf16> -> tensor<{M}x{N}xf16>
  %5 = nn.cast %x : {f32(M, N)} -> tensor<{M}x{N}xi32>
  %6 = nn.relu %5 : tensor<{M}x{N}xi32> -> tensor<{M}x{N}xi32>
  %7 = nn.div %6, %i : tensor<{M}x{N}xi32>, tensor<{N}xi32> -> tensor<{M}x{N}xi32>
  %8 = nn.neg %7 : tensor<{M}x{N}xi32> -> tensor<{M}x{N}xi32>
  %9 = nn.cast %8 : tensor<{M}x{N}xi32> -> tensor<{M}x{N}xi1>
  %10 = nn.cast %9 : tensor<{M}x{N}xi1> -> {f32(M, N)}
  %11 = nn.cast %8 : tensor<{M}x{N}xi32> -> {f32(M, N)}
  %12 = nn.add %10, %11 : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  func.return %4, %12 : tensor<{M}x{N}xf16>, {f32(M, N)}
}}""",
        lambda rng: [
            grid(-60000.0, 60000.0, M, N).astype(np.float16),  # squares overflow f16
            np.array([0, -3, 2, 7, -1][:N], np.int32),  # a zero divisor
            grid(-20.0, 20.0, M, N),
        ],
        nonfinite=True,
    ),
    "reductions": Program(
        f"""
func.func @f(%a: {f32(M, N)}, %b: {f32(N)}, %c: {f32(M, N)})
    -> (tensor<f32>, tensor<{N}xf32>, tensor<{M}x1xf32>) {{
  %0 = nn.sub %a, %b : {f32(M, N)}, {f32(N)} -> {f32(M, N)}
  %1 = nn.mul %0, %0 : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  %2 = nn.reduce_sum %1 {{axes = array<i64: 0, 1>}} : {f32(M, N)} -> tensor<f32>
  %3 = nn.exp %c : {f32(M, N)} -> {f32(M, N)}
  %4 = nn.add %3, %b : {f32(M, N)}, {f32(N)} -> {f32(M, N)}
  %5 = nn.reduce_mean %4 {{axes = array<i64: 0>}} : {f32(M, N)} -> {f32(N)}
  %6 = nn.cmp %a, %c {{predicate = "le"}} : {f32(M, N)}, {f32(M, N)} -> tensor<{M}x{N}xi1>
  %7 = nn.where %6, %a, %c : tensor<{M}x{N}xi1>, {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  %8 = nn.reduce_max %7 {{axes = array<i64: -1>, keepdims = true}}
         : {f32(M, N)} -> tensor<{M}x1xf32>
  func.return %2, %5, %8 : tensor<f32>, {f32(N)}, tensor<{M}x1xf32>
}}""",
        lambda rng: [grid(-3.0, 3.0, M, N), grid(-1.0, 1.0, N), grid(3.0, -3.0, M, N)],
        regions=("fused.reduce",),
    ),
    "nan_comparisons": Program(
        f"""
func.func @f(%a: {f32(M, N)}, %b: {f32(N)}) -> tensor<{M}xf32> {{
  %0 = nn.sqrt %a : {f32(M, N)} -> {f32(M, N)}
  %1 = nn.cmp %0, %b {{predicate = "ne"}} : {f32(M, N)}, {f32(N)} -> tensor<{M}x{N}xi1>
  %2 = nn.cmp %0, %b {{predicate = "eq"}} : {f32(M, N)}, {f32(N)} -> tensor<{M}x{N}xi1>
  %3 = nn.cmp %0, %b {{predicate = "ge"}} : {f32(M, N)}, {f32(N)} -> tensor<{M}x{N}xi1>
  %4 = nn.cast %1 : tensor<{M}x{N}xi1> -> {f32(M, N)}
  %5 = nn.cast %2 : tensor<{M}x{N}xi1> -> {f32(M, N)}
  %6 = nn.cast %3 : tensor<{M}x{N}xi1> -> {f32(M, N)}
  %7 = nn.add %4, %5 : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  %8 = nn.add %7, %6 : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  %9 = nn.cast %0 : {f32(M, N)} -> tensor<{M}x{N}xi1>
  %10 = nn.cast %9 : tensor<{M}x{N}xi1> -> {f32(M, N)}
  %11 = nn.add %8, %10 : {f32(M, N)}, {f32(M, N)} -> {f32(M, N)}
  %12 = nn.reduce_sum %11 {{axes = array<i64: 1>}} : {f32(M, N)} -> tensor<{M}xf32>
  func.return %12 : tensor<{M}xf32>
}}""",
        lambda rng: [
            grid(-1.0, 1.0, M, N),
            np.array([0.0, 0.5, 1.0, np.nan, -1.0][:N], np.float32),
        ],
        regions=("fused.reduce",),
    ),
}


def close(expected: np.ndarray, actual: np.ndarray, what: str) -> None:
    assert expected.dtype == actual.dtype and expected.shape == actual.shape, what
    if expected.dtype.kind == "f":
        rtol, atol = (2e-3, 2e-3) if expected.dtype == np.float16 else (1e-5, 1e-6)
        np.testing.assert_allclose(
            actual, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=what
        )
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def input_sets(program: Program, module) -> list[tuple[str, list[np.ndarray]]]:
    fn = find_function(module)
    sets = [(f"seed {seed}", random_inputs(fn, seed)) for seed in (0, 1)]
    return [*sets, ("stress", program.stress(np.random.default_rng(0)))]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fused_equals_unfused(name, variant, compile_ir, run_ref, names):
    program = PROGRAMS[name]
    original = compile_ir(program.text, "")
    transformed = compile_ir(program.text, VARIANTS[variant])
    if variant == "fused":
        for region in program.regions:
            assert region in names(transformed), f"{name}: no {region} after fusion"
    if variant == "round-trip":
        assert not [n for n in names(transformed) if n.startswith("fused.")]
    for label, args in input_sets(program, original):
        expected = run_ref(original, args)
        actual = run_ref(transformed, args)
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            close(e, a, f"{name} / {variant} / {label} / result #{i}")


@pytest.mark.parametrize("name", sorted(n for n, p in PROGRAMS.items() if p.nonfinite))
def test_stress_inputs_reach_nonfinite_values(name, compile_ir, run_ref):
    """The stress inputs really produce NaN or inf, so the comparison above covers them."""
    program = PROGRAMS[name]
    module = compile_ir(program.text, "")
    outputs = run_ref(module, program.stress(np.random.default_rng(0)))
    assert any(o.dtype.kind == "f" and not np.isfinite(o).all() for o in outputs)
