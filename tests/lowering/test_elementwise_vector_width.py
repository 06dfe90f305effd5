"""Elementwise kernels compiled for a CPU run the device's native float vector per work-item
(``fusec.compile`` / `lower` pass ``vector-width`` = `DeviceInfo.float_vector_width`), halved
down to float4 until it divides the innermost dimension, scalar below that; a GPU keeps float4.
Each shape agrees with the numpy reference (tolerances of transcendental ops, as in
``tests/runtime/test_ops_nn.py``)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from fusec import knobs
from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.dtypes import bf16_bits
from fusec.lowering import kernel_builder
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")

LAYOUTS = {
    "avx512": DeviceInfo(name="CPU, 16 floats a vector", is_cpu=True, float_vector_width=16),
    "avx2": DeviceInfo(name="CPU, 8 floats a vector", is_cpu=True, float_vector_width=8),
    "gpu": DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256),
}


def chain(rows: int, cols: int) -> str:
    """``t = a * b + c`` (c a row broadcast) returned, and ``tanh(t) * a``: one kernel."""
    t, v = f"tensor<{rows}x{cols}xf32>", f"tensor<{cols}xf32>"
    return f"""func.func @f(%a: {t}, %b: {t}, %c: {v}) -> ({t}, {t}) {{
  %0 = nn.mul %a, %b : {t}, {t} -> {t}
  %1 = nn.add %0, %c : {t}, {v} -> {t}
  %2 = nn.tanh %1 : {t} -> {t}
  %3 = nn.mul %2, %a : {t}, {t} -> {t}
  func.return %3, %1 : {t}, {t}
}}"""


@pytest.mark.parametrize("layout,cols,width", [
    ("avx512", 64, 16), ("avx512", 24, 8), ("avx512", 12, 4), ("avx512", 6, 1), ("avx512", 1, 1),
    ("avx2", 64, 8), ("avx2", 20, 4), ("avx2", 3, 1),
    ("gpu", 64, 4), ("gpu", 6, 1),
])
def test_vector_width(layout: str, cols: int, width: int) -> None:
    text = chain(5, cols)
    module = load(text)
    args = random_inputs(find_function(module), seed=cols)
    args[0][0, 0] = np.nan
    args[1][1, -1] = np.inf
    expected = run_function(module, args)
    plan = lower(load(text), device_info=LAYOUTS[layout]).plan
    assert len(plan.launches) == 1
    widths = {int(w) for w in re.findall(r"vload(\d+)", plan.source)}
    assert widths == ({width} if width > 1 else set()), plan.source
    outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, 1e-6, 1e-5):
        assert result.ok, result.describe(1e-6, 1e-5)


def test_gpu_pointwise_kernels_run_in_groups_of_256_and_reductions_keep_64():
    """On a GPU a kernel without a reduction runs in work-groups of 256 (cast_chain on an H200:
    0.164 ms in groups of 64, 0.056 in groups of 256); a work-group reduction keeps the pass's
    ``local-size``; a GPU allowing fewer work-items per group gets the largest power of 2 it
    allows; a CPU keeps 64."""
    t = "tensor<64x1024xf32>"
    text = (f"func.func @f(%a: {t}) -> ({t}, tensor<64xf32>) {{\n"
            f"  %0 = nn.tanh %a : {t} -> {t}\n"
            f"  %1 = nn.reduce_sum %a {{axes = array<i64: 1>}} : {t} -> tensor<64xf32>\n"
            f"  func.return %0, %1 : {t}, tensor<64xf32>\n}}\n")

    def local_sizes(info: DeviceInfo) -> dict[str, tuple[int, ...]]:
        plan = lower(load(text), device_info=info, pipeline="none").plan
        return {launch.kernel: launch.local_size for launch in plan.launches}

    gpu = local_sizes(LAYOUTS["gpu"])
    assert [size for name, size in gpu.items() if "tanh" in name] == [(256,)]
    assert [size for name, size in gpu.items() if "reduce" in name] == [(64,)]
    small = local_sizes(DeviceInfo(name="small GPU", is_cpu=False, max_work_group_size=192))
    assert [size for name, size in small.items() if "tanh" in name] == [(128,)]
    cpu = local_sizes(LAYOUTS["avx2"])
    assert [size for name, size in cpu.items() if "tanh" in name] == [(64,)]


def half_chain(rows: int, cols: int, dtype: str) -> str:
    """`chain` in a 16-bit type: every buffer and value of `dtype`."""
    return chain(rows, cols).replace("xf32>", f"x{dtype}>")


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("layout,cols,width", [
    ("avx512", 64, 16), ("avx512", 24, 8), ("avx2", 64, 16), ("avx2", 20, 4),
    ("gpu", 64, 1), ("gpu", 12, 1),
])
def test_16_bit_vector_width(dtype: str, layout: str, cols: int, width: int,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """On a CPU a 16-bit kernel takes twice a float32 vector's lanes (as many bytes an access,
    at most 16; a GPU keeps 16-bit kernels scalar with the knob ``gpu_half_vectors`` off, as
    here: `choose_vector_width`), loaded into float vectors (``vload_half<n>``; bf16's bits widened lane-wise) and stored
    rounded to nearest even (``vstore_half<n>_rte``; bf16 through the lane-wise helper), and
    gives the scalar kernel's bits (and the reference's numbers) on NaN, infinities, the
    largest finite values, subnormals and signed zeros among random values."""
    text = half_chain(7, cols, dtype)
    module = load(text)
    rng = np.random.default_rng(cols)
    values = [rng.uniform(-2, 2, shape).astype(np.float32) for shape in ((7, cols), (7, cols),
                                                                         (cols,))]
    values[0].flat[:6] = [np.nan, np.inf, -np.inf, 65504.0 if dtype == "f16" else 3.0e38,
                          1e-7 if dtype == "f16" else 1e-39, -0.0]
    values[1].flat[:6] = [1.0, 0.5, 2.0, 1.0, 1.0, 3.0]
    args = [v.astype(np.float16) if dtype == "f16" else bf16_bits(v) for v in values]
    with knobs.overridden(gpu_half_vectors=False):
        plan = lower(load(text), device_info=LAYOUTS[layout]).plan
    assert len(plan.launches) == 1
    if dtype == "f16":
        widths = {int(w) for w in re.findall(r"vload_half(\d+)", plan.source)}
        stores = {int(w) for w in re.findall(r"vstore_half(\d+)_rte", plan.source)}
    else:
        widths = {int(w) for w in re.findall(r"as_float(\d+)\(convert_uint", plan.source)}
        stores = {int(w) for w in re.findall(r"fusec_float(\d+)_to_bf16\(", plan.source)}
    want = {width} if width > 1 else set()
    assert widths == want and stores == want, plan.source
    device = select_device(DEVICE)
    outputs = Executable(plan, device)(*args)  # type: ignore[arg-type]
    for result in compare(outputs, run_function(module, args), 1e-2, 1e-2):
        assert result.ok, result.describe(1e-2, 1e-2)
    monkeypatch.setattr(kernel_builder, "VECTOR_FLOAT_TYPES", kernel_builder.VECTOR_FLOAT_TYPES[:1])
    scalar = lower(load(text), device_info=LAYOUTS[layout]).plan
    assert "vload_half(" in scalar.source or "fusec_bf16_to_float(" in scalar.source
    for got, want in zip(outputs, Executable(scalar, device)(*args), strict=True):  # type: ignore[arg-type]
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16),
                                      np.asarray(want).view(np.uint16))


def test_a_16_bit_kernel_stays_scalar_where_so_it_launches_with_its_neighbour():
    """Launch fusion merges launches of one layout only: a 16-bit kernel that could take
    vectors, launched next to one of its iteration space that cannot (it reads a transposed
    input), stays scalar where the two then launch as one (a Llama layer's value copy beside
    its rotary embedding); alone it takes vectors. The numbers are the reference's."""
    t, c = "tensor<4x64xf16>", "tensor<64x4xf16>"
    alone = (f"func.func @f(%a: {t}, %b: {t}) -> {t} {{\n"
             f"  %0 = nn.add %a, %b : {t}, {t} -> {t}\n"
             f"  func.return %0 : {t}\n}}\n")
    both = (f"func.func @f(%a: {t}, %b: {t}, %c: {c}) -> ({t}, {t}) {{\n"
            f"  %0 = nn.add %a, %b : {t}, {t} -> {t}\n"
            f"  %ct = nn.transpose %c {{perm = array<i64: 1, 0>}} : {c} -> {t}\n"
            f"  %1 = nn.mul %b, %ct : {t}, {t} -> {t}\n"
            f"  func.return %0, %1 : {t}, {t}\n}}\n")
    assert "vload_half16" in lower(load(alone), device_info=LAYOUTS["avx2"]).plan.source
    gpu = lower(load(alone), device_info=LAYOUTS["gpu"]).plan.source.split("#endif")[-1]
    assert "fusec_load_half8(" in gpu  # aligned: uint4 pieces (the knob gpu_half_vectors)
    with knobs.overridden(gpu_half_vectors=False):
        gpu = lower(load(alone), device_info=LAYOUTS["gpu"]).plan.source.split("#endif")[-1]
    assert "vload_half(" in gpu and "vload_half8" not in gpu
    for text in (alone, both):
        plan = lower(load(text), device_info=LAYOUTS["avx2"], pipeline="none").plan
        assert len(plan.launches) == 1, plan.launches
        assert ("vload_half16" in plan.source) == (text is alone)
        module = load(text)
        args = random_inputs(find_function(module), seed=1)
        outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
        for result in compare(outputs, run_function(module, args), 1e-2, 1e-2):
            assert result.ok, result.describe(1e-2, 1e-2)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_16_bit_reductions_fold_vectors_on_a_cpu(dtype: str) -> None:
    """A CPU's reduction over 16-bit values folds vectors of 16 along the reduced axis (f16's
    sum of 2048 x 2048 on Intel's CPU OpenCL: 0.22-0.27 ms against 5.4-6.4 element by
    element; bf16 0.26-0.29 against 0.34-0.37), accumulating in float as the scalar fold does,
    within the reference's tolerance of the type (mean, max and a sum whose row has a NaN)."""
    t, r = f"tensor<6x200x{dtype}>", f"tensor<6x{dtype}>"
    text = (f"func.func @f(%a: {t}) -> ({r}, {r}, {r}) {{\n"
            f"  %s = nn.reduce_sum %a {{axes = array<i64: 1>}} : {t} -> {r}\n"
            f"  %m = nn.reduce_mean %a {{axes = array<i64: 1>}} : {t} -> {r}\n"
            f"  %x = nn.reduce_max %a {{axes = array<i64: 1>}} : {t} -> {r}\n"
            f"  func.return %s, %m, %x : {r}, {r}, {r}\n}}\n")
    module = load(text)
    values = np.random.default_rng(2).uniform(-1, 1, (6, 200)).astype(np.float32)
    values[2, 7] = np.nan
    values[3, 150] = 60000.0 if dtype == "f16" else 3.0e38
    args = [values.astype(np.float16) if dtype == "f16" else bf16_bits(values)]
    plan = lower(load(text), device_info=LAYOUTS["avx2"]).plan
    spelled = "vload_half16(" if dtype == "f16" else "convert_uint16(vload16("
    assert spelled in plan.source, plan.source
    outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, run_function(module, args), 2e-2, 2e-2):
        assert result.ok, result.describe(2e-2, 2e-2)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_aligned_16_bit_vectors_on_a_gpu(dtype: str) -> None:
    """With the knob ``gpu_half_vectors`` a GPU's 16-bit kernel whose accesses are 16-byte
    aligned takes 8 lanes, each vector read and written as one ``uint4`` (`half.aligned_vload`),
    and gives the scalar kernel's bits (run here on the CPU device, whose OpenCL takes the
    same C) on NaN, infinities, the largest values, subnormals and signed zeros."""
    text = half_chain(7, 64, dtype)
    module = load(text)
    rng = np.random.default_rng(3)
    values = [rng.uniform(-2, 2, shape).astype(np.float32) for shape in ((7, 64), (7, 64), (64,))]
    values[0].flat[:6] = [np.nan, np.inf, -np.inf, 65504.0 if dtype == "f16" else 3.0e38,
                          1e-7 if dtype == "f16" else 1e-39, -0.0]
    args = [v.astype(np.float16) if dtype == "f16" else bf16_bits(v) for v in values]
    with knobs.overridden(gpu_half_vectors=True):
        plan = lower(load(text), device_info=LAYOUTS["gpu"]).plan
    load_call, store_call = (("fusec_load_half8(", "fusec_store_half8(") if dtype == "f16" else
                             ("fusec_load_bf16x8(", "as_uint4(fusec_float8_to_bf16("))
    # a, b read along the rows (c too: a row broadcast), both results stored so
    body = plan.source.split("#endif")[-1]
    assert body.count(load_call) == 3 and body.count(store_call) == 2, plan.source
    assert "vload_half" not in body and "vstore_half" not in body, plan.source
    device = select_device(DEVICE)
    outputs = Executable(plan, device)(*args)  # type: ignore[arg-type]
    for result in compare(outputs, run_function(module, args), 1e-2, 1e-2):
        assert result.ok, result.describe(1e-2, 1e-2)
    with knobs.overridden(gpu_half_vectors=False):
        scalar = lower(load(text), device_info=LAYOUTS["gpu"]).plan
    assert load_call not in scalar.source
    for got, want in zip(outputs, Executable(scalar, device)(*args), strict=True):  # type: ignore[arg-type]
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16),
                                      np.asarray(want).view(np.uint16))


@pytest.mark.parametrize("text", [
    half_chain(7, 12, "f16"),  # rows of 12: not whole runs of 8
    # a run starting 4 elements into each row of its buffer
    """func.func @f(%a: tensor<4x72xf16>, %b: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %n = nn.narrow %a {axis = 1 : i64, start = 4 : i64, length = 64 : i64} : tensor<4x72xf16> -> tensor<4x64xf16>
  %0 = nn.add %n, %b : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  func.return %0 : tensor<4x64xf16>
}""",
    # rows of 68 read 64 at a time from their start: row 1 starts 136 bytes in
    """func.func @f(%a: tensor<4x68xf16>, %b: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %n = nn.narrow %a {axis = 1 : i64, start = 0 : i64, length = 64 : i64} : tensor<4x68xf16> -> tensor<4x64xf16>
  %0 = nn.add %n, %b : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  func.return %0 : tensor<4x64xf16>
}""",
])
def test_unaligned_16_bit_kernels_stay_scalar(text: str) -> None:
    """Where a run of 8 lanes may start off a 16-byte boundary the kernel stays scalar (no
    ``uint4`` access), and its numbers are the reference's."""
    module = load(text)
    args = random_inputs(find_function(module), seed=5)
    with knobs.overridden(gpu_half_vectors=True):
        plan = lower(load(text), device_info=LAYOUTS["gpu"]).plan
    assert "fusec_load_half8(" not in plan.source.split("#endif")[-1], plan.source
    outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, run_function(module, args), 1e-2, 1e-2):
        assert result.ok, result.describe(1e-2, 1e-2)
