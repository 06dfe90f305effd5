"""Launch fusion changes launches, never numbers: each program runs with ``-p none`` fused by
``fuse-launches`` and unfused, on the CPU OpenCL device, and both agree with the numpy reference
on random inputs and on adversarial ones (NaN, infinities, signed zeros, denormals, values near
the float32 limits and past exp's overflow).

Each program also states how many launches fusion must leave, so that a test whose fusion
silently stopped happening fails instead of passing trivially.
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.compiler.check import compare
from fusec.compiler.driver import compile, load
from fusec.reference.executor import find_function, random_inputs, run_function

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")

CHAIN = """
func.func @chain(%x: tensor<5x12xf32>, %y: tensor<5x12xf32>, %z: tensor<12xf32>) -> tensor<5x12xf32> {
  %a = nn.add %x, %y : tensor<5x12xf32>, tensor<5x12xf32> -> tensor<5x12xf32>
  %b = nn.mul %a, %z : tensor<5x12xf32>, tensor<12xf32> -> tensor<5x12xf32>
  %c = nn.relu %b : tensor<5x12xf32> -> tensor<5x12xf32>
  %d = nn.exp %c : tensor<5x12xf32> -> tensor<5x12xf32>
  func.return %d : tensor<5x12xf32>
}"""

ODD_CHAIN = """
func.func @odd(%x: tensor<3x5x7xf32>, %y: tensor<7xf32>) -> tensor<3x5x7xf32> {
  %a = nn.sub %x, %y : tensor<3x5x7xf32>, tensor<7xf32> -> tensor<3x5x7xf32>
  %b = nn.tanh %a : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %c = nn.abs %b : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %d = nn.sqrt %c : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %e = nn.div %d, %x : tensor<3x5x7xf32>, tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  func.return %e : tensor<3x5x7xf32>
}"""

RETURNED = """
func.func @returned(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %a = nn.exp %x : tensor<64xf32> -> tensor<64xf32>
  %b = nn.log %a : tensor<64xf32> -> tensor<64xf32>
  %c = nn.neg %b : tensor<64xf32> -> tensor<64xf32>
  func.return %a, %c : tensor<64xf32>, tensor<64xf32>
}"""

TRANSPOSED = """
func.func @transposed(%x: tensor<7x7xf32>) -> tensor<7x7xf32> {
  %a = nn.exp %x : tensor<7x7xf32> -> tensor<7x7xf32>
  %b = nn.transpose %a {perm = array<i64: 1, 0>} : tensor<7x7xf32> -> tensor<7x7xf32>
  %c = nn.neg %b : tensor<7x7xf32> -> tensor<7x7xf32>
  %d = nn.add %c, %a : tensor<7x7xf32>, tensor<7x7xf32> -> tensor<7x7xf32>
  func.return %d : tensor<7x7xf32>
}"""

AROUND_A_MATMUL = """
func.func @matmul(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %a = nn.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %b = nn.neg %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %m = nn.matmul %b, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %c = nn.sigmoid %m : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.mul %c, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}"""

REDUCED = """
func.func @reduced(%x: tensor<6x20xf32>) -> tensor<6xf32> {
  %a = nn.exp %x : tensor<6x20xf32> -> tensor<6x20xf32>
  %s = nn.reduce_max %a {axes = array<i64: 1>} : tensor<6x20xf32> -> tensor<6xf32>
  %n = nn.neg %s : tensor<6xf32> -> tensor<6xf32>
  %l = nn.log %n : tensor<6xf32> -> tensor<6xf32>
  func.return %l : tensor<6xf32>
}"""

MIXED_TYPES = """
func.func @mixed(%x: tensor<2x9xf32>, %y: tensor<2x9xf32>, %i: tensor<2x9xi32>) -> (tensor<2x9xf32>, tensor<2x9xi32>) {
  %j = nn.mul %i, %i : tensor<2x9xi32>, tensor<2x9xi32> -> tensor<2x9xi32>
  %k = nn.add %j, %i : tensor<2x9xi32>, tensor<2x9xi32> -> tensor<2x9xi32>
  %m = nn.cmp %x, %y {predicate = "gt"} : tensor<2x9xf32>, tensor<2x9xf32> -> tensor<2x9xi1>
  %w = nn.where %m, %x, %y : tensor<2x9xi1>, tensor<2x9xf32>, tensor<2x9xf32> -> tensor<2x9xf32>
  %e = nn.exp %w : tensor<2x9xf32> -> tensor<2x9xf32>
  func.return %e, %k : tensor<2x9xf32>, tensor<2x9xi32>
}"""

PROGRAMS = {
    # name: (source, launches unfused, launches fused or None for "fewer", reference on specials)
    "chain": (CHAIN, 4, 1, "all"),
    "odd_chain": (ODD_CHAIN, 5, 1, "all"),
    "returned": (RETURNED, 3, 1, "all"),
    "transposed": (TRANSPOSED, 4, 2, "all"),  # 7x7: scalar kernels of one space; the transpose
    # reads other work-items' values, so it starts a launch (exp | transpose, neg, add)
    "around_a_matmul": (AROUND_A_MATMUL, 5, 3, "none"),
    "reduced": (REDUCED, 4, None, "all"),
    "mixed_types": (MIXED_TYPES, 5, None, "all"),
}
"""Which adversarial inputs the reference comparison holds for, launch fusion aside: ``all``;
``finite`` (denormals, signed zeros, 1e30, exp's overflow, no NaN or infinity in the inputs),
which no program needs now that max, min and relu propagate NaN as the reference does (IEEE
754-2019 maximum/minimum; the chain and the max reduction were ``finite`` while OpenCL's
``fmax`` dropped NaN); ``none`` for a matmul (sums of values near the float32 limits overflow to +inf or -inf by
summation order). Fused and unfused are compared on every input, NaN included."""

SPECIALS = np.array(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-42, 1.4e-45, 3.4e38, -3.4e38, 1e30, -1e30,
     88.0, 89.0, -104.0, 1.0, -1.0, 0.5],
    dtype=np.float32,
)


def adversarial(args: list[np.ndarray], seed: int, finite: bool = False) -> list[np.ndarray]:
    """The float inputs filled with specials and extremes (shuffled, the rest random); with
    ``finite``, only those whose sums and products stay clear of NaN."""
    rng = np.random.default_rng(seed)
    specials = SPECIALS[np.abs(SPECIALS) < 1e31] if finite else SPECIALS
    out = []
    for a in args:
        if a.dtype != np.float32:
            out.append(a)
            continue
        flat = a.reshape(-1).copy()
        n = min(flat.size, 2 * specials.size)
        flat[:n] = np.resize(specials, n)
        rng.shuffle(flat)
        out.append(flat.reshape(a.shape))
    return out


def run(source: str, args: list[np.ndarray], fusion: bool) -> tuple[list[np.ndarray], int]:
    """The outputs of a second call; the first, on other inputs, leaves its values in the
    buffers a call reuses, so that an output the kernels forget to write shows."""
    exe = compile(source, pipeline="none", device=DEVICE, launch_fusion=fusion)
    exe(*[np.full_like(a, 0.375) if a.dtype == np.float32 else a + 1 for a in args])
    return exe(*args), len(exe.plan.launches)


def check_reference(name: str, got: list[np.ndarray], expected: list[np.ndarray]) -> None:
    with np.errstate(all="ignore"):
        for result in compare(got, expected, atol=1e-6, rtol=1e-5):
            assert result.ok, f"{name}: {result.describe(1e-6, 1e-5)}"


def check_same(name: str, fused: list[np.ndarray], unfused: list[np.ndarray]) -> None:
    """Fused and unfused run the same scalar code on the same device: same types, shapes and
    specials, values equal up to the rounding of the OpenCL built-ins."""
    for a, b in zip(fused, unfused, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("inputs", ["random", "adversarial"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fused_unfused_and_reference_agree(name: str, inputs: str) -> None:
    source, unfused_launches, fused_launches, specials = PROGRAMS[name]
    module = load(source)
    random = random_inputs(find_function(module), 3)
    cases = [random]
    if inputs == "adversarial":
        cases = [adversarial(random, 7), adversarial(random, 8, finite=True)]
    for i, args in enumerate(cases):
        # Fused first: on the CPU, host memory freed by a run on the same inputs (unfused or
        # the reference) could hand a missing store the right values.
        fused, n_fused = run(source, args, fusion=True)
        unfused, n_unfused = run(source, args, fusion=False)
        assert n_unfused == unfused_launches
        if fused_launches is not None:
            assert n_fused == fused_launches
        else:
            assert n_fused < n_unfused
        check_same(f"{name}, {inputs}", fused, unfused)
        finite = inputs == "random" or i == 1
        if specials == "all" or (specials == "finite" and finite) or inputs == "random":
            expected = run_function(module, args)
            check_reference(f"{name} fused, {inputs}", fused, expected)
            check_reference(f"{name} unfused, {inputs}", unfused, expected)
