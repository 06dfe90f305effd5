"""The row_reduce template in both layouts (a work-item per row with float8 vectors, the CPU
shape; a work-group per row with tree reductions, the GPU shape), both run on the test device,
and its vector exp (`vector_exp_function`, shared with softmax) against numpy over the whole float range."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os

import numpy as np
import pyopencl as cl
import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.kernels.common import vector_exp_function
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.reference.executor import run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")

LAYOUTS = {
    "cpu": DeviceInfo(name="CPU layout", is_cpu=True),
    "gpu": DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256),
}


def row_program(rows: int, cols: int) -> str:
    """Per-column gain read inside a softmax, then the row's mean of squares: three reductions
    (max, sum, mean), chained."""
    t, r, v = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}x1xf32>", f"tensor<{cols}xf32>"
    return f"""
func.func @f(%x: {t}, %g: {v}) -> {t} {{
  %a = fused.row_reduce %x, %g : ({t}, {v}) -> {t} {{
  ^bb0(%xi: f32, %gi: f32):
    %s = arith.mulf %xi, %gi : f32
    %m = fused.reduce_value %s {{kind = "max"}} : f32 -> f32
    %d = arith.subf %s, %m : f32
    %e = math.exp %d : f32
    %z = fused.reduce_value %e {{kind = "sum"}} : f32 -> f32
    %p = arith.divf %e, %z : f32
    %q = arith.mulf %p, %p : f32
    %ms = fused.reduce_value %q {{kind = "mean"}} : f32 -> f32
    %y = arith.divf %p, %ms : f32
    fused.yield %y : f32
  }}
  func.return %a : {t}
}}"""


@pytest.mark.parametrize("layout", ["cpu", "gpu"])
@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 7), (5, 8), (4, 17), (2, 300), (3, 2049)])
def test_layouts(layout: str, rows: int, cols: int) -> None:
    text = row_program(rows, cols)
    rng = np.random.default_rng(rows * 1000 + cols)
    args = [rng.standard_normal((rows, cols)).astype(np.float32),
            rng.standard_normal(cols).astype(np.float32)]
    if rows > 2:
        args[0][1, cols // 2] = np.nan  # a NaN row stays NaN in both layouts
        args[0][2, 0] = -np.inf
    expected = run_function(load(text), args)
    plan = lower(load(text), pipeline="none", device_info=LAYOUTS[layout]).plan
    assert len(plan.launches) == 1
    outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, 1e-5, 1e-4):
        assert result.ok, result.describe(1e-5, 1e-4)


def test_row_exp_function() -> None:
    """Relative error below 4e-6 where e^x is a normal float (|x| * 6e-8 from rounding
    x log2(e)), inf above 88.72, denormals and 0 below, NaN kept."""
    device = select_device(DEVICE)
    ctx, queue = device.context, device.queue  # type: ignore[attr-defined]
    source = vector_exp_function("e8", 8) + (
        "__kernel void k(__global const float *x, __global float *y) {"
        " const int i = get_global_id(0); vstore8(e8(vload8(i, x)), i, y); }")
    program = cl.Program(ctx, source).build()
    specials = [np.inf, -np.inf, np.nan, 0.0, -0.0, 88.72, 88.73, -87.5, -100.0, -103.5, 1e-30, 5.0]
    x = np.concatenate([np.linspace(-110, 95, 40000), specials]).astype(np.float32)
    x = np.concatenate([x, np.zeros((-len(x)) % 8, np.float32)])
    flags = cl.mem_flags
    x_buffer = cl.Buffer(ctx, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
    y_buffer = cl.Buffer(ctx, flags.WRITE_ONLY, x.nbytes)
    program.k(queue, (len(x) // 8,), None, x_buffer, y_buffer)
    y = np.empty_like(x)
    cl.enqueue_copy(queue, y, y_buffer)
    queue.finish()
    with np.errstate(all="ignore"):
        exact = np.exp(x.astype(np.float64))
        rounded = exact.astype(np.float32)
    normal = np.isfinite(rounded) & (exact > np.finfo(np.float32).tiny)
    assert np.max(np.abs(y[normal] - exact[normal]) / exact[normal]) < 4e-6
    assert np.array_equal(np.isinf(y), np.isinf(rounded))
    assert np.array_equal(np.isnan(y), np.isnan(exact))
    small = exact <= np.finfo(np.float32).tiny
    assert np.max(np.abs(y[small] - exact[small])) < 1e-43


def extreme_program(kind: str, rows: int, cols: int) -> str:
    """Each element of a row replaced by the row's max (or min), so its bits are visible."""
    t = f"tensor<{rows}x{cols}xf32>"
    return f"""
func.func @f(%x: {t}) -> {t} {{
  %a = fused.row_reduce %x : ({t}) -> {t} {{
  ^bb0(%xi: f32):
    %m = fused.reduce_value %xi {{kind = "{kind}"}} : f32 -> f32
    %y = arith.addf %m, %m : f32
    fused.yield %y : f32
  }}
  func.return %a : {t}
}}"""


def ieee_extreme(kind: str, row: np.ndarray) -> np.float32:
    """IEEE 754-2019 maximum (minimum) of a row: NaN if any is, +0 above -0."""
    if np.isnan(row).any():
        return np.float32(np.nan)
    best = row.max() if kind == "max" else row.min()
    if best == 0:
        signs = np.signbit(row[row == 0])
        negative = signs.all() if kind == "max" else signs.any()
        return np.float32(-0.0 if negative else 0.0)
    return np.float32(best)


def extreme_rows(cols: int) -> np.ndarray:
    """Rows that take each path of the CPU fold (`row_reduce.ordered_combine`): ordinary rows,
    and NaN, infinities and zeros of both signs, in the vector part and in the remainder."""
    rng = np.random.default_rng(7)
    rows = [rng.standard_normal(cols) for _ in range(3)]
    negative, positive = -1 - rng.random(cols), 1 + rng.random(cols)
    for base in (negative, positive):
        half = cols // 2
        for spots in ([(1, 0.0), (half, -0.0)], [(1, -0.0), (half, 0.0)], [(2, -0.0)],
                      [(half, 0.0)], [(cols - 1, -0.0)], [(cols - 2, 0.0), (0, -0.0)]):
            row = base.copy()
            for at, value in spots:
                row[at] = value
            rows.append(row)
    for at, value in ((2, np.nan), (cols - 1, np.nan), (half, np.inf), (half, -np.inf),
                      (cols - 1, np.inf), (cols - 1, -np.inf)):
        row = rng.standard_normal(cols)
        row[at] = value
        rows.append(row)
    rows += [np.full(cols, -np.inf), np.full(cols, np.inf), np.zeros(cols), -np.zeros(cols),
             np.where(np.arange(cols) % 2, 0.0, -0.0), np.full(cols, 3.0)]
    return np.array(rows, dtype=np.float32)


@pytest.mark.parametrize("layout", ["cpu", "cpu16", "gpu"])
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("cols", [35, 64, 7])
def test_extreme_bits(layout: str, kind: str, cols: int) -> None:
    """A row's max and min, bit for bit (the sign of a zero, NaN, infinities), in each layout:
    the CPU ones fold vectors by plain comparisons and fold again exactly where that could be
    wrong."""
    x = extreme_rows(cols)
    layouts = {**LAYOUTS, "cpu16": DeviceInfo(name="CPU layout, AVX-512", is_cpu=True,
                                              float_vector_width=16)}
    plan = lower(load(extreme_program(kind, *x.shape)), pipeline="none",
                 device_info=layouts[layout]).plan
    (out,) = Executable(plan, select_device(DEVICE))(x)  # type: ignore[arg-type]
    expected = np.array([2 * ieee_extreme(kind, row) for row in x], dtype=np.float32)
    got = out[:, 0]
    bits = out.view(np.uint32)
    assert ((bits == bits[:, :1]) | np.isnan(out)).all()
    assert (np.isnan(got) == np.isnan(expected)).all(), (got, expected)
    same = ~np.isnan(expected)
    assert (got[same].view(np.uint32) == expected[same].view(np.uint32)).all(), (
        [(i, g, e) for i, (g, e) in enumerate(zip(got, expected, strict=True)) if same[i] and
         g.view(np.uint32) != e.view(np.uint32)])


def strided_program(shape: tuple[int, ...], axis: int) -> str:
    """A softmax over ``axis`` (not the last: strided rows), with a gain per position on that
    axis read in the prologue, then the row's mean of squares: chained reductions whose rows
    are read and stored with a stride."""
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    gain = [1] * len(shape)
    gain[axis] = shape[axis]
    v = f"tensor<{'x'.join(map(str, gain))}xf32>"
    return f"""
func.func @f(%x: {t}, %g: {v}) -> {t} {{
  %a = fused.row_reduce %x, %g {{axis = {axis} : i64}} : ({t}, {v}) -> {t} {{
  ^bb0(%xi: f32, %gi: f32):
    %s = arith.mulf %xi, %gi : f32
    %m = fused.reduce_value %s {{kind = "max"}} : f32 -> f32
    %d = arith.subf %s, %m : f32
    %e = math.exp %d : f32
    %z = fused.reduce_value %e {{kind = "sum"}} : f32 -> f32
    %p = arith.divf %e, %z : f32
    %q = arith.mulf %p, %p : f32
    %ms = fused.reduce_value %q {{kind = "mean"}} : f32 -> f32
    %y = arith.divf %p, %ms : f32
    fused.yield %y : f32
  }}
  func.return %a : {t}
}}"""


def strided_softmax(x: np.ndarray, g: np.ndarray, axis: int) -> np.ndarray:
    s = x.astype(np.float64) * g
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    p = e / e.sum(axis=axis, keepdims=True)
    return p / (p * p).mean(axis=axis, keepdims=True)


@pytest.mark.parametrize("layout", ["cpu", "gpu"])
@pytest.mark.parametrize("shape,axis", [((9, 4), 0), ((1, 5), 0), ((3, 7, 5), 1), ((6, 2, 3), 0),
                                        ((2, 1, 4), 1)])
def test_strided_rows(layout: str, shape: tuple[int, ...], axis: int) -> None:
    """Rows along the first or a middle axis: one launch, each row read and stored with the
    stride of its axis; NaN and -inf stay in their own row (another row is unaffected)."""
    text = strided_program(shape, axis)
    rng = np.random.default_rng(sum(shape) + axis)
    gain = [1] * len(shape)
    gain[axis] = shape[axis]
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(gain).astype(np.float32)
    if x.size > 20:
        x.flat[1] = np.nan
        x.flat[x.size - 1] = -np.inf
    expected = run_function(load(text), [x, g])
    with np.errstate(all="ignore"):
        assert compare(expected, [strided_softmax(x, g, axis)], 1e-5, 1e-4)[0].ok
    plan = lower(load(text), pipeline="none", device_info=LAYOUTS[layout]).plan
    assert len(plan.launches) == 1
    outputs = Executable(plan, select_device(DEVICE))(x, g)  # type: ignore[arg-type]
    for result in compare(outputs, expected, 1e-5, 1e-4):
        assert result.ok, result.describe(1e-5, 1e-4)
