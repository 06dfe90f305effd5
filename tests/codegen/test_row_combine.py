"""Row kernels' combines (`common.RowCombine`): warp shuffles against the tree in local memory.

The shuffle form's indexing and order run on the CPU device through its emulation (each
``shfl.sync`` an exchange through local memory); LayerNorm, RMSNorm, softmax and a
`fused.row_reduce` of three chained reductions are checked against numpy (float64) at rows of
one, two and several warps, rows that are not whole slots, and several rows a work-group with
padding rows. The PTX form is checked as text here (its butterflies, one barrier a reduction
and none for a row of one warp) and runs on the GPU machine (``FUSEC_TEST_DEVICE=gpu``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.codegen.kernels import row_reduce as row_reduce_module
from fusec.codegen.kernels.common import DeviceInfo, RowCombine, warp_shuffles
from fusec.codegen.kernels.norm import layer_norm
from fusec.codegen.kernels.softmax import softmax
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.dtypes import bf16_bits
from fusec.reference.executor import run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable
from tests.codegen.test_kernel_norm import norm_reference
from tests.codegen.test_kernel_row_reduce import row_program

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
FORM = "ptx" if DEVICE == "gpu" else "emulated"
"""The shuffle form the numeric tests run: the real one on the GPU machine."""

H200 = DeviceInfo(name="H200", is_cpu=False, max_work_group_size=1024, compute_units=132,
                  tensor_cores=("f16", "bf16", "tf32"))

NORM_CASES = [  # rows, cols, work-items a row, rows a work-group
    (5, 768, 32, 1),    # one warp a row: no barrier in the shuffle form
    (5, 768, 64, 1),    # two warps
    (7, 129, 64, 3),    # slots past the row's end, and a padding row
    (3, 2048, 128, 1),  # four warps, 16 slots: gamma and beta read with the row
    (2, 8192, 96, 1),   # three warps, 86 slots: streamed (Welford for LayerNorm)
    (4, 40, 32, 2),     # a row shorter than its warp
]


@pytest.mark.parametrize("rms", [False, True], ids=["layer", "rms"])
@pytest.mark.parametrize("case", NORM_CASES, ids=lambda c: "x".join(map(str, c)))
def test_norms_with_warp_shuffles_match_numpy(launch, case, rms):
    rows, cols, row_size, group = case
    rng = np.random.default_rng(cols + row_size)
    x = (rng.standard_normal((rows, cols)) + 20).astype(np.float32)
    res = rng.standard_normal((rows, cols), dtype=np.float32)
    gamma = rng.standard_normal(cols, dtype=np.float32)
    beta = rng.standard_normal(cols, dtype=np.float32)
    kernel = layer_norm("norm_shuffled", rows, cols, 1e-5, residual=True, rms=rms,
                        local_size=row_size, rows_per_group=group, combine=FORM)
    welford = not rms and cols > 64 * row_size  # the streamed LayerNorm: a tree of Welford's
    assert (f"warp shuffles ({FORM})" in kernel.source.splitlines()[0]) != welford
    result = launch(kernel, {"x": x, "residual": res, "gamma": gamma, "beta": beta},
                    {"out": (rows, cols)})["out"]
    np.testing.assert_allclose(result, norm_reference(x, res, gamma, beta, 1e-5, rms),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_16_bit_norm_with_warp_shuffles_matches_the_tree(launch, dtype):
    """The same kernel combined either way rounds to the same 16-bit values but for the order
    of the float32 sums: at most one unit in the last place apart."""
    rows, cols = 6, 768
    rng = np.random.default_rng(11)

    def host(a: np.ndarray) -> np.ndarray:
        return a.astype(np.float16) if dtype == "f16" else bf16_bits(a.astype(np.float32))

    inputs = {"x": host(rng.standard_normal((rows, cols)) + 40),
              "gamma": host(rng.standard_normal(cols)), "beta": host(rng.standard_normal(cols))}
    outs = {}
    for combine in ("tree", FORM):
        kernel = layer_norm("norm16", rows, cols, 1e-5, local_size=64, dtype=dtype,
                            combine=combine)
        outs[combine] = launch(kernel, inputs, {"out": (rows, cols)})["out"].view(np.uint16)
    apart = np.abs(outs["tree"].astype(np.int32) - outs[FORM].astype(np.int32))
    assert apart.max() <= 1, f"{dtype}: {apart.max()} units apart"


@pytest.mark.parametrize("case", [(5, 768, 32, 1), (7, 200, 64, 3), (3, 4096, 128, 1)],
                         ids=lambda c: "x".join(map(str, c)))
def test_softmax_with_warp_shuffles_matches_numpy(launch, case):
    rows, cols, row_size, group = case
    rng = np.random.default_rng(cols)
    x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    x[0, 3] = 60.0  # one dominant value: the max must reach every work-item of the row
    kernel = softmax("softmax_shuffled", rows, cols, local_size=row_size,
                     rows_per_group=group, combine=FORM)
    assert "warp shuffles" in kernel.source.splitlines()[0]
    result = launch(kernel, {"x": x}, {"out": (rows, cols)})["out"]
    shifted = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(result, shifted / shifted.sum(axis=-1, keepdims=True),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows,cols", [(3, 7), (4, 300), (3, 2049)])
def test_row_reduce_with_warp_shuffles_matches_the_reference(monkeypatch, rows, cols):
    """Through the pipeline with the GPU layout, its combine forced to the shuffle form; NaN
    and -inf rows keep numpy's semantics (the fold of `row_reduce.combine` in every lane)."""
    monkeypatch.setattr(row_reduce_module, "warp_shuffles", lambda *args: FORM)
    text = row_program(rows, cols)
    rng = np.random.default_rng(rows * 1000 + cols)
    args = [rng.standard_normal((rows, cols)).astype(np.float32),
            rng.standard_normal(cols).astype(np.float32)]
    args[0][1, cols // 2] = np.nan
    args[0][2, 0] = -np.inf
    expected = run_function(load(text), args)
    gpu_layout = DeviceInfo(name="GPU layout", is_cpu=False, max_work_group_size=256)
    plan = lower(load(text), pipeline="none", device_info=gpu_layout).plan
    assert len(plan.launches) == 1 and "warp shuffles (" in plan.source
    outputs = Executable(plan, select_device(DEVICE))(*args)  # type: ignore[arg-type]
    for result in compare(outputs, expected, 1e-5, 1e-4):
        assert result.ok, result.describe(1e-5, 1e-4)


def test_ptx_form_is_butterflies_and_one_barrier_a_reduction():
    one_warp = layer_norm("n", 128, 768, 1e-5, local_size=32, dtype="f16", combine="ptx")
    two_warps = layer_norm("n", 128, 768, 1e-5, local_size=64, dtype="f16", combine="ptx")
    tree = layer_norm("n", 128, 768, 1e-5, local_size=64, dtype="f16", combine="tree")
    for kernel in (one_warp, two_warps):
        for mask in (16, 8, 4, 2, 1):
            assert f"shfl.sync.bfly.b32 %0, %1, {mask}, 0x1f, 0xffffffff;" in kernel.source
    assert one_warp.source.count("barrier(") == 0
    assert two_warps.source.count("barrier(") == 4  # two reductions: store, barrier, fold, barrier
    assert tree.source.count("barrier(") == 16 and "shfl" not in tree.source


def test_gamma_and_beta_are_read_with_the_row_where_they_fit():
    short = layer_norm("n", 128, 768, 1e-5, local_size=64, combine="tree").source
    assert short.index("gamma[") < short.index("barrier(")
    long_row = layer_norm("n", 8, 4096, 1e-5, local_size=64, combine="tree").source  # 64 slots
    assert long_row.index("gamma[") > long_row.index("barrier(")


def test_warp_shuffles_only_where_the_device_and_the_knob_allow(set_knobs):
    cpu = DeviceInfo(name="cpu", is_cpu=True)
    no_ptx = DeviceInfo(name="gpu", is_cpu=False)
    assert warp_shuffles(H200, 64) == "ptx" and warp_shuffles(H200, 32) == "ptx"
    assert warp_shuffles(H200, 48) is None and warp_shuffles(H200, 16) is None
    assert warp_shuffles(cpu, 64) is None and warp_shuffles(no_ptx, 64) is None
    assert warp_shuffles(None, 64) is None
    assert warp_shuffles(H200, 64, "tree") is None
    assert warp_shuffles(cpu, 64, "emulated") == "emulated"
    assert "warp shuffles (ptx)" in layer_norm("n", 128, 768, 1e-5, device_info=H200,
                                               dtype="f16").source
    set_knobs(row_warp_shuffles=False)
    assert warp_shuffles(H200, 64) is None
    assert "warp shuffles" not in layer_norm("n", 128, 768, 1e-5, device_info=H200,
                                             dtype="f16").source
    with pytest.raises(ValueError, match="combine must be one of"):
        warp_shuffles(H200, 64, "butterfly")
    with pytest.raises(ValueError, match="whole warps of 32, not 48"):
        RowCombine("k", 48, "emulated")
