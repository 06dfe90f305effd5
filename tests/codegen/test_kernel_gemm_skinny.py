"""The skinny product (`gemm_skinny`, a GPU's choice for a decode step's projections) against
numpy on the test device: rows 1 to 16, columns and depths that are not multiples of the
work-group's 64 columns or 8 lanes of K, f32 / f16 / bf16 operands, an epilogue that reads the
row and the column, a result cast to another type; and the lowering that chooses it (GPU,
at most 8 rows, one B: one launch, not split along K) run end to end on this device.

Tolerance: f32 1e-4 relative to max |C| (float32 accumulation against float64); 16-bit results
their rounding (f16 2e-3, bf16 1e-2 of max |C|).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusec.codegen.kernels.common import IDENTITY_EPILOGUE, Epilogue, KernelArg
from fusec.codegen.kernels.gemm_skinny import (
    MAX_ROWS,
    WIDE,
    gemm_skinny,
    gemm_skinny_k_major,
    k_major_shape,
    skinny_shape,
)
from fusec.codegen.plan import interleave_halves
from fusec.dtypes import bf16_bits, bf16_to_f32

TOLERANCE = {"f32": 1e-4, "f16": 2e-3, "bf16": 1e-2}

BIAS_ROW_TANH = Epilogue(
    function="""
inline float skinny_bias_tanh(float acc, int row, int col, __global const float *bias,
                              __global const float *row_scale) {
    return tanh(acc + bias[col]) * row_scale[row];
}""",
    name="skinny_bias_tanh",
    params=(KernelArg("bias", "in"), KernelArg("row_scale", "in")),
)


def operands(rows: int, n: int, k: int, dtype: str, seed: int = 0):
    """A and B in `dtype` (bf16 as bit patterns) and their float64 values."""
    rng = np.random.default_rng(seed)
    lhs = rng.standard_normal((rows, k), dtype=np.float32)
    rhs = rng.standard_normal((k, n), dtype=np.float32)
    if dtype == "f16":
        lhs, rhs = lhs.astype(np.float16), rhs.astype(np.float16)
        return lhs, rhs, lhs.astype(np.float64), rhs.astype(np.float64)
    if dtype == "bf16":
        lhs, rhs = bf16_bits(lhs), bf16_bits(rhs)
        return lhs, rhs, bf16_to_f32(lhs).astype(np.float64), bf16_to_f32(rhs).astype(np.float64)
    return lhs, rhs, lhs.astype(np.float64), rhs.astype(np.float64)


def as_float(out: np.ndarray) -> np.ndarray:
    return (bf16_to_f32(out) if out.dtype == np.uint16 else out).astype(np.float64)


SHAPES = [  # rows, n, k
    (1, 768, 768),      # a decode step's projection at batch 1
    (1, 1, 1),
    (3, 100, 37),       # columns past the last whole work-group; K not a multiple of 8
    (8, 130, 64),
    (16, 65, 9),        # the most rows; fewer rows of B than lanes of K
    (5, 2049, 300),
    (1, WIDE + 3, 20),  # a vocabulary-wide product: the other work-group shapes
    (4, WIDE + 3, 20),
]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_product(launch, dtype: str, shape: tuple[int, int, int]) -> None:
    rows, n, k = shape
    lhs, rhs, a, b = operands(rows, n, k, dtype)
    kernel = gemm_skinny("skinny", rows, n, k, IDENTITY_EPILOGUE, dtype)
    assert kernel.local_size == skinny_shape(rows, n)[:2]
    got = as_float(launch(kernel, {"lhs": lhs, "rhs": rhs}, {"out": (rows, n)})["out"])
    want = a @ b
    scale = max(float(np.abs(want).max()), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE[dtype] * scale)


@pytest.mark.parametrize("out_dtype", ["f32", "f16"])
def test_epilogue_sees_row_and_column_and_result_is_cast(launch, out_dtype: str) -> None:
    rows, n, k = 6, 97, 129
    lhs, rhs, a, b = operands(rows, n, k, "bf16", seed=1)
    rng = np.random.default_rng(2)
    bias = rng.standard_normal(n, dtype=np.float32)
    row_scale = rng.standard_normal(rows, dtype=np.float32)
    kernel = gemm_skinny("skinny_epi", rows, n, k, BIAS_ROW_TANH, "bf16", out_dtype)
    assert [arg.name for arg in kernel.args] == ["lhs", "rhs", "out", "bias", "row_scale"]
    got = launch(kernel, {"lhs": lhs, "rhs": rhs, "bias": bias, "row_scale": row_scale},
                 {"out": (rows, n)})["out"]
    assert got.dtype == (np.float16 if out_dtype == "f16" else np.float32)
    want = np.tanh(a @ b + bias) * row_scale[:, None]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0,
                               atol=2e-3 if out_dtype == "f16" else 1e-5)


@pytest.mark.parametrize("k_major", [False, True], ids=["as-is", "k-major"])
def test_adversarial_values(launch, k_major: bool) -> None:
    """Large magnitudes that cancel, infinities and NaN where they land in one column each,
    B as it is and K-major."""
    rows, n, k = 2, 70, 40
    lhs = np.ones((rows, k), np.float32)
    rhs = np.zeros((k, n), np.float32)
    rhs[:, 0] = np.where(np.arange(k) % 2, 1e30, -1e30)   # cancels exactly: 0
    rhs[3, 1] = np.inf
    rhs[5, 2] = np.nan
    rhs[:, 69] = 1.0                                      # the last column: k
    make = gemm_skinny_k_major if k_major else gemm_skinny
    got = launch(make("skinny_adv", rows, n, k, IDENTITY_EPILOGUE),
                 {"lhs": lhs, "rhs": np.ascontiguousarray(rhs.T) if k_major else rhs},
                 {"out": (rows, n)})["out"]
    np.testing.assert_array_equal(got[:, 0], 0.0)
    assert np.isposinf(got[:, 1]).all() and np.isnan(got[:, 2]).all()
    np.testing.assert_array_equal(got[:, 69], float(k))
    np.testing.assert_array_equal(got[:, 3:69], 0.0)


@pytest.mark.parametrize("shape", [(32, 8, 2), (16, 4, 3), (8, 2, 1), (32, 8, 2, 4),
                                   (8, 3, 1, 4), (32, 32, 1, 4)])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_other_work_group_shapes(launch, shape: tuple[int, ...], dtype: str) -> None:
    """Also runs of depth 4 (K 45: runs that end inside a group of 4, empty lanes)."""
    lhs, rhs, a, b = operands(3, 77, 45, dtype, seed=3)
    kernel = gemm_skinny("skinny_shape", 3, 77, 45, IDENTITY_EPILOGUE, dtype, "f32", shape)
    got = launch(kernel, {"lhs": lhs, "rhs": rhs}, {"out": (3, 77)})["out"]
    want = a @ b
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * max(np.abs(want).max(), 1.0))


def test_rows_local_memory_and_names_are_checked() -> None:
    with pytest.raises(ValueError, match=f"at most {MAX_ROWS}"):
        gemm_skinny("s", MAX_ROWS + 1, 8, 8, IDENTITY_EPILOGUE)
    with pytest.raises(ValueError, match="bytes of local memory"):
        gemm_skinny("s", 16, 8, 8, IDENTITY_EPILOGUE, shape=(32, 32, 1))
    clash = Epilogue("inline float e(float acc, int row, int col, __global const float *x) "
                     "{ return acc; }", "e", (KernelArg("x", "in"),))
    with pytest.raises(ValueError, match="'x' clashes"):
        gemm_skinny("s", 1, 8, 8, clash)


def test_gpu_lowering_takes_it_for_few_rows_and_runs_here() -> None:
    """The GPU lowering of a decode-shaped layer (a projection with a bias and GELU, then one
    with a residual add) at 2 rows: one skinny launch per product, none split along K, planned
    and run on this device against the reference; at 9 rows the split products come back; with
    the knob off, too."""
    from fusec import knobs
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.compiler.driver import load, lower
    from fusec.reference.executor import run_function
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    def text(rows: int) -> str:
        x, h = f"tensor<{rows}x1x512xf32>", f"tensor<{rows}x1x600xf32>"
        return f"""
func.func @f(%x: {x}, %w1: tensor<512x600xf32>, %b1: tensor<600xf32>, %w2: tensor<600x512xf32>) -> {x} {{
  %0 = nn.matmul %x, %w1 : {x}, tensor<512x600xf32> -> {h}
  %1 = nn.add %0, %b1 : {h}, tensor<600xf32> -> {h}
  %2 = nn.gelu %1 : {h} -> {h}
  %3 = nn.matmul %2, %w2 : {h}, tensor<600x512xf32> -> {x}
  %4 = nn.add %3, %x : {x}, {x} -> {x}
  func.return %4 : {x}
}}"""

    gpu = DeviceInfo("gpu-shaped", is_cpu=False)
    compiled = lower(load(text(2)), device_info=gpu)
    kernels = [launch.kernel for launch in compiled.plan.launches]
    assert len(kernels) == 2 and all("gemm" in k and "split" not in k for k in kernels), kernels
    assert compiled.plan.source.count("], skinny (") == 2, kernels
    exe = Executable(compiled.plan, select_device("cpu"))  # type: ignore[arg-type]
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(shape).astype(np.float32)
            for shape in ((2, 1, 512), (512, 600), (600,), (600, 512))]
    args[0][1, 0, :4] = [1e4, -1e4, np.inf, 0.0]
    expected = run_function(load(text(2)), args)
    np.testing.assert_allclose(exe(*args)[0], expected[0], rtol=1e-4, atol=1e-4)
    nine = [launch.kernel for launch in lower(load(text(9)), device_info=gpu).plan.launches]
    assert any("split_sum" in k for k in nine), nine
    with knobs.overridden(skinny_gemm=False):
        off = lower(load(text(2)), device_info=gpu)
    assert any("split_sum" in launch.kernel for launch in off.plan.launches)


# --- B stored K-major ([N, K], a bound weight as the tensor-core kernels read it) -------------

K_MAJOR_SHAPES = [  # rows, n, k (k a multiple of 8)
    (1, 768, 768),
    (1, 1, 8),
    (3, 100, 40),       # columns past the last whole work-group; K not a multiple of 256
    (8, 130, 64),
    (16, 65, 520),
    (5, 2049, 304),
]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape", K_MAJOR_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_k_major_product(launch, dtype: str, shape: tuple[int, int, int]) -> None:
    rows, n, k = shape
    lhs, rhs, a, b = operands(rows, n, k, dtype, seed=7)
    kernel = gemm_skinny_k_major("skinny_t", rows, n, k, IDENTITY_EPILOGUE, dtype)
    assert kernel.local_size == (32, k_major_shape(rows, n)[0])
    got = as_float(launch(kernel, {"lhs": lhs, "rhs": np.ascontiguousarray(rhs.T)},
                          {"out": (rows, n)})["out"])
    want = a @ b
    scale = max(float(np.abs(want).max()), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE[dtype] * scale)


@pytest.mark.parametrize("shape", [(4, 2), (4, 4), (8, 1), (2, 3), (1, 1)])
def test_k_major_epilogue_and_work_group_shapes(launch, shape: tuple[int, int]) -> None:
    """Each work-group shape, the epilogue that reads row and column, a result cast to f16."""
    rows, n, k = 6, 97, 136
    lhs, rhs, a, b = operands(rows, n, k, "bf16", seed=8)
    rng = np.random.default_rng(9)
    bias = rng.standard_normal(n, dtype=np.float32)
    row_scale = rng.standard_normal(rows, dtype=np.float32)
    kernel = gemm_skinny_k_major("skinny_te", rows, n, k, BIAS_ROW_TANH, "bf16", "f16", shape)
    got = launch(kernel, {"lhs": lhs, "rhs": np.ascontiguousarray(rhs.T), "bias": bias,
                          "row_scale": row_scale}, {"out": (rows, n)})["out"]
    assert got.dtype == np.float16
    want = np.tanh(a @ b + bias) * row_scale[:, None]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=2e-3)


@pytest.mark.parametrize("layout", ["k-major", "as-is"])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape", [(1, 64, 64), (8, 50, 40), (3, 6, 24), (16, 65, 8)],
                         ids=lambda s: "x".join(map(str, s)))
def test_swiglu_of_interleaved_columns(launch, layout: str, dtype: str,
                                       shape: tuple[int, int, int]) -> None:
    """``up * silu(gate)`` of B's gate and up halves stored interleaved pairwise, K-major (as
    an f16 prefill's tensor-core product stores them, `gemm_skinny_k_major`) or ``[K, N]`` as
    it is (bf16's, `gemm_skinny`), against numpy on the product's halves; the pairs straddle
    work-groups where N is not a multiple of the width."""
    rows, f, k = shape
    lhs, rhs, a, b = operands(rows, 2 * f, k, dtype, seed=10)
    stored = interleave_halves(rhs, "first")
    skinny = gemm_skinny
    if layout == "k-major":
        stored, skinny = stored.T, gemm_skinny_k_major
    kernel = skinny("skinny_sw", rows, 2 * f, k, IDENTITY_EPILOGUE, dtype, "f32", swiglu=True)
    got = launch(kernel, {"lhs": lhs, "rhs": np.ascontiguousarray(stored)},
                 {"out": (rows, f)})["out"]
    product = a @ b
    gate, up = product[:, :f], product[:, f:]
    want = up * gate / (1.0 + np.exp(-gate))
    np.testing.assert_allclose(got, want, rtol=0,
                               atol=1e-4 * max(float(np.abs(want).max()), 1.0))


def test_a_swiglu_needs_whole_pairs_and_no_epilogue() -> None:
    with pytest.raises(ValueError, match="even N"):
        gemm_skinny("s", 1, 9, 8, IDENTITY_EPILOGUE, swiglu=True)
    with pytest.raises(ValueError, match="even N"):
        gemm_skinny("s", 1, 8, 8, BIAS_ROW_TANH, swiglu=True)
    with pytest.raises(ValueError, match="even N"):
        gemm_skinny("s", 1, 8, 8, IDENTITY_EPILOGUE, shape=(3, 4, 1), swiglu=True)


def test_k_major_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="not a multiple of 8"):
        gemm_skinny_k_major("s", 1, 8, 12, IDENTITY_EPILOGUE)
    with pytest.raises(ValueError, match=f"at most {MAX_ROWS}"):
        gemm_skinny_k_major("s", MAX_ROWS + 1, 8, 8, IDENTITY_EPILOGUE)
    with pytest.raises(ValueError, match="even N"):
        gemm_skinny_k_major("s", 1, 9, 8, IDENTITY_EPILOGUE, swiglu=True)
    with pytest.raises(ValueError, match="even N"):
        gemm_skinny_k_major("s", 1, 8, 8, BIAS_ROW_TANH, swiglu=True)
    with pytest.raises(ValueError, match="bytes of local memory"):
        gemm_skinny_k_major("s", 16, 8, 8, IDENTITY_EPILOGUE, shape=(32, 4))


def test_gpu_lowering_reads_bound_weights_k_major_where_a_prefill_would() -> None:
    """A decode-shaped layer with its weights bound, lowered for a GPU: f16, bf16 and f32
    weights are stored ``[N, K]`` (as a prefill's tensor-core products store them) and read by
    the K-major skinny kernel; a vocabulary-wide product, a K that is not a multiple of 8 and
    an unbound B stay as they are. Each plan runs on this device and matches the reference."""
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.compiler.driver import load, lower
    from fusec.reference.executor import run_function
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    def text(dtype: str, k: int, n: int) -> str:
        x, h = f"tensor<2x1x{k}x{dtype}>", f"tensor<2x1x{n}x{dtype}>"
        return f"""
func.func @f(%x: {x}, %w1: tensor<{k}x{n}x{dtype}>, %b1: tensor<{n}x{dtype}>) -> {h} {{
  %0 = nn.matmul %x, %w1 : {x}, tensor<{k}x{n}x{dtype}> -> {h}
  %1 = nn.add %0, %b1 : {h}, tensor<{n}x{dtype}> -> {h}
  %2 = nn.gelu %1 : {h} -> {h}
  func.return %2 : {h}
}}"""

    gpu = DeviceInfo("gpu-shaped", is_cpu=False)
    host = {"f32": np.float32, "f16": np.float16}
    for dtype, k, n, bound, k_major in [("f16", 64, 40, True, True),
                                        ("f32", 64, 40, True, True),
                                        ("bf16", 64, 40, True, True),
                                        ("f16", 36, 40, True, False),
                                        ("f16", 64, WIDE, True, False),
                                        ("f16", 64, 40, False, False)]:
        source = text(dtype, k, n)
        names = ["w1", "b1"] if bound else []
        plan = lower(load(source), device_info=gpu, bound=names).plan
        (w1,) = (spec for spec in plan.inputs if spec.name == "w1")
        assert (w1.panels == 1) == k_major and ("K-major" in plan.source) == k_major, \
            (dtype, k, n, bound)
        if n == WIDE:
            continue  # the layout is the point; WIDE columns are slow to run here
        rng = np.random.default_rng(11)
        args = [rng.standard_normal(shape).astype(np.float32)
                for shape in ((2, 1, k), (k, n), (n,))]
        args = [bf16_bits(a) if dtype == "bf16" else a.astype(host[dtype]) for a in args]
        exe = Executable(plan, select_device("cpu"),
                         dict(zip(names, args[1:], strict=False)))
        (got,) = exe(*(args[:1] if bound else args))
        (want,) = run_function(load(source), args)
        got, want = as_float(np.asarray(got)), as_float(np.asarray(want))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-2 * max(np.abs(want).max(), 1))


def test_a_step_stores_a_weight_as_the_program_it_shares_weights_with() -> None:
    """`PlanBuilder.layouts` (``share_weights``): the skinny product reads its bound B as it
    is or K-major, whichever the other program stores; a layout it cannot read (column panels
    of a tiled kernel) leaves it its own choice."""
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.compiler.driver import load, lower

    x, h = "tensor<2x64xf16>", "tensor<2x40xf16>"
    text = f"""
func.func @f(%x: {x}, %w1: tensor<64x40xf16>) -> {h} {{
  %0 = nn.matmul %x, %w1 : {x}, tensor<64x40xf16> -> {h}
  func.return %0 : {h}
}}"""
    gpu = DeviceInfo("gpu-shaped", is_cpu=False)

    def stored(layouts):  # noqa: ANN001, ANN202
        plan = lower(load(text), device_info=gpu, bound=["w1"], layouts=layouts).plan
        (spec,) = (s for s in plan.inputs if s.name == "w1")
        return spec.layout, "K-major" in plan.source

    assert stored(None) == ((1, None), True)
    assert stored({"w1": (None, None)}) == ((None, None), False)
    assert stored({"w1": (1, None)}) == ((1, None), True)
    assert stored({"w1": (16, None)}) == ((1, None), True)
    assert stored({"other": (None, None)}) == ((1, None), True)
