"""The SwiGLU epilogue of the wgmma GEMM (`fusec.codegen.swiglu_epilogue`) end to end: programs
planned for a Hopper GPU, run on the CPU device with the wgmma kernels' PTX emulated
(`gemm_wgmma.emulated`), against the numpy reference (`fusec.reference`) and the same plan
with the knob `wgmma_swiglu_epilogue` off (the GEMM, then the ``swiglu`` kernel): f16 and bf16,
``gate_first`` both ways, random and adversarial inputs, and a small Llama block.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from fusec import knobs
from fusec.codegen import templates
from fusec.codegen.kernels import attention_mma
from fusec.dtypes import bf16_bits, bf16_to_f32
from tests.runtime.test_wgmma_layer_emulated import HOPPER, emulated_plan

# x @ w, its two halves, up * silu(gate): fuse-swiglu makes it one fused.swiglu whose
# gate_first says which half the gate is (`swiglu_text`: ROWS rows, 2F = TWOF, F = HALF)
SWIGLU = """func.func @ffn(%x: tensor<ROWSx128xT>, %w: tensor<128xTWOFxT>) -> tensor<ROWSxHALFxT> {
  %c = nn.matmul %x, %w : tensor<ROWSx128xT>, tensor<128xTWOFxT> -> tensor<ROWSxTWOFxT>
  %first = nn.narrow %c {axis = 1 : i64, start = 0 : i64, length = HALF : i64}
    : tensor<ROWSxTWOFxT> -> tensor<ROWSxHALFxT>
  %second = nn.narrow %c {axis = 1 : i64, start = HALF : i64, length = HALF : i64}
    : tensor<ROWSxTWOFxT> -> tensor<ROWSxHALFxT>
  %s = nn.silu %GATE : tensor<ROWSxHALFxT> -> tensor<ROWSxHALFxT>
  %y = nn.mul %UP, %s : tensor<ROWSxHALFxT>, tensor<ROWSxHALFxT> -> tensor<ROWSxHALFxT>
  func.return %y : tensor<ROWSxHALFxT>
}"""


def swiglu_text(dtype: str, gate_first: bool = True, rows: int = 256, half: int = 256) -> str:
    """`SWIGLU` of `dtype`, the gate the first half or the second; by default 256 rows (2 block
    rows) and 2F = 512 (2 block columns)."""
    gate, up = ("first", "second") if gate_first else ("second", "first")
    return (SWIGLU.replace("ROWS", str(rows)).replace("TWOF", str(2 * half))
            .replace("HALF", str(half)).replace("xT>", f"x{dtype}>")
            .replace("GATE", gate).replace("UP", up))


# the gate and up projections as two weights (fuse-swiglu-dual-matmul: concat(w_up, w_gate),
# folded into one bound weight, up first), then the down projection and a residual
DUAL = """func.func @ffn(%x: tensor<2x128x256xT>, %w_gate: tensor<256x256xT>,
                %w_up: tensor<256x256xT>, %w_down: tensor<256x256xT>) -> tensor<2x128x256xT> {
  %g = nn.matmul %x, %w_gate : tensor<2x128x256xT>, tensor<256x256xT> -> tensor<2x128x256xT>
  %u = nn.matmul %x, %w_up : tensor<2x128x256xT>, tensor<256x256xT> -> tensor<2x128x256xT>
  %s = nn.silu %g : tensor<2x128x256xT> -> tensor<2x128x256xT>
  %h = nn.mul %u, %s : tensor<2x128x256xT>, tensor<2x128x256xT> -> tensor<2x128x256xT>
  %d = nn.matmul %h, %w_down : tensor<2x128x256xT>, tensor<256x256xT> -> tensor<2x128x256xT>
  %y = nn.add %x, %d : tensor<2x128x256xT>, tensor<2x128x256xT> -> tensor<2x128x256xT>
  func.return %y : tensor<2x128x256xT>
}"""

TOLERANCE = {"f16": 4e-3, "bf16": 3e-2}
"""Max error over max |y|: a few roundings of the 16-bit type (the fused kernel rounds the
product once, after the SwiGLU; the un-fused one rounds ``cat`` first)."""


def typed(values: np.ndarray, dtype: str) -> np.ndarray:
    return values.astype(np.float16) if dtype == "f16" else bf16_bits(values.astype(np.float32))


def as32(values: np.ndarray, dtype: str) -> np.ndarray:
    return bf16_to_f32(values) if dtype == "bf16" else values.astype(np.float32)


def planned(text: str, params: dict[str, np.ndarray], fused: bool):
    """The plan for `HOPPER` with the weights `params` bound, the SwiGLU epilogue on or off."""
    from fusec.compiler.driver import fuse_and_fold, load, lower

    with knobs.overridden(wgmma_swiglu_epilogue=fused):
        module = load(text)
        pipeline, bound = fuse_and_fold(module, None, "default", "<test>", params)
        plan = lower(module, None, pipeline, HOPPER, bound=list(bound or {})).plan
    return plan, bound


def run_emulated(plan, bound, *args: np.ndarray) -> np.ndarray:
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    got = Executable(emulated_plan(plan), select_device("cpu"), bound)(*args)
    return got[0] if isinstance(got, list | tuple) else got


def reference(text: str, args: list[np.ndarray]) -> np.ndarray:
    from fusec.compiler.driver import load
    from fusec.reference.executor import run_function

    return run_function(load(text), args)[0]


def kernels(plan) -> list[str]:
    return [launch.kernel for launch in plan.launches]


def check(got: np.ndarray, unfused: np.ndarray, want: np.ndarray, dtype: str) -> None:
    want32 = as32(want, dtype)
    scale = float(np.abs(want32).max())
    errors = {name: float(np.abs(as32(v, dtype) - want32).max() / scale)
              for name, v in (("fused", got), ("unfused", unfused))}
    print(f"{dtype}: max error / max |y| {errors}")
    assert np.isfinite(as32(got, dtype)).all()
    assert errors["unfused"] <= TOLERANCE[dtype] and errors["fused"] <= TOLERANCE[dtype]
    assert float(np.abs(as32(got, dtype) - as32(unfused, dtype)).max() / scale) <= \
        TOLERANCE[dtype]


@pytest.mark.parametrize("case", ["random", "saturated", "zeros"])
@pytest.mark.parametrize("gate_first", [True, False], ids=["gate-first", "up-first"])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_swiglu_of_a_product_in_its_epilogue_matches_the_reference_and_the_unfused_plan(
        dtype, gate_first, case):
    """``saturated``: the gate's weights scaled so that |gate| reaches ~50 (silu(g) -> g, or
    -> -0); ``zeros``: zero rows of x and zero columns of both halves of w."""
    text = swiglu_text(dtype, gate_first)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((256, 128)).astype(np.float32)
    w = rng.standard_normal((128, 512)).astype(np.float32) / np.sqrt(128)
    gate_columns = slice(0, 256) if gate_first else slice(256, 512)
    if case == "saturated":
        w[:, gate_columns] *= 12.0
    elif case == "zeros":
        x[rng.choice(256, 32, replace=False)] = 0.0
        w[:, rng.choice(512, 48, replace=False)] = 0.0
    x16, w16 = typed(x, dtype), typed(w, dtype)

    plan, bound = planned(text, {"w": w16}, True)
    assert kernels(plan) == ["ffn_gemm_swiglu_0"], kernels(plan)
    (spec,) = (s for s in plan.inputs if s.name == "w")
    # B stored K-major in both types (nn.Linear's layout), its halves as they are: the
    # kernel pairs the gate's and up's rows as it reads them
    assert spec.interleaved is None and spec.panels == 1
    assert f"B in halves ({'first' if gate_first else 'second'} even)" in plan.source
    assert plan.launches[0].buffers[2] == plan.outputs[0].buffer
    unfused_plan, _ = planned(text, {"w": w16}, False)
    assert [k.split("_")[1] for k in kernels(unfused_plan)] == ["gemm", "swiglu"]

    got = run_emulated(plan, bound, x16)
    unfused = run_emulated(unfused_plan, bound, x16)
    want = reference(text, [x16, w16])
    if case == "saturated":
        c = as32(x16, dtype) @ as32(w16, dtype)
        assert np.abs(c[:, gate_columns]).max() > 40
    if case == "zeros":
        zero = as32(want, dtype) == 0
        assert zero.sum() > 5000 and np.array_equal(as32(got, dtype) == 0, zero)
    check(got, unfused, want, dtype)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_a_product_whole_only_in_64_wide_blocks_takes_its_swiglu_in_the_epilogue(dtype):
    """With the knob `wgmma_64_blocks` (on) a product whose N is whole blocks of 64 columns
    only runs on wgmma with the SwiGLU in its epilogue (32 output columns a block, the halves
    paired as B is read), and matches the reference and the un-fused plan; off, it is no
    whole tiles, and the product and the SwiGLU are two mma.sync-era launches. 128 rows (batch
    1) and 2F = 320: halves of 160 columns, 5 blocks of 32 gate and 32 up columns."""
    text = swiglu_text(dtype, rows=128, half=160)
    rng = np.random.default_rng(11)
    x16 = typed(rng.standard_normal((128, 128)).astype(np.float32), dtype)
    w16 = typed(rng.standard_normal((128, 320)).astype(np.float32) / np.sqrt(128), dtype)
    plan, bound = planned(text, {"w": w16}, True)
    assert kernels(plan) == ["ffn_gemm_swiglu_0"], kernels(plan)
    assert "x64 blocks" in plan.source and "m64n64k16" in plan.source
    unfused_plan, _ = planned(text, {"w": w16}, False)
    got = run_emulated(plan, bound, x16)
    check(got, run_emulated(unfused_plan, bound, x16), reference(text, [x16, w16]), dtype)
    with knobs.overridden(wgmma_64_blocks=False):
        narrowest, _ = planned(text, {"w": w16}, True)
    assert "gemm_swiglu" not in " ".join(kernels(narrowest)), kernels(narrowest)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_two_projections_fused_into_one_weight_with_up_first_then_the_down_projection(
        dtype):
    """``fuse-swiglu-dual-matmul`` packs ``concat(w_up, w_gate)`` (gate second), folded into
    one bound weight; the SwiGLU's result is the down projection's A (a slot of its own, as
    the product's A held the slot the plan gave it)."""
    text = DUAL.replace("xT>", f"x{dtype}>")
    rng = np.random.default_rng(3)
    x = typed(rng.standard_normal((2, 128, 256)), dtype)
    weights = {name: typed(rng.standard_normal((256, 256)) / 16, dtype)
               for name in ("w_gate", "w_up", "w_down")}
    plan, bound = planned(text, weights, True)
    names = kernels(plan)
    assert len(names) == 2 and "gemm_swiglu" in names[0] and "swiglu" not in names[1]
    assert all(s.interleaved is None for s in plan.inputs)
    assert "B in halves (second even)" in plan.source
    product, down = plan.launches
    assert product.buffers[2] == down.buffers[0] and product.buffers[0] != product.buffers[2]
    unfused_plan, _ = planned(text, weights, False)
    assert len(unfused_plan.launches) == 3
    got = run_emulated(plan, bound, x)
    unfused = run_emulated(unfused_plan, bound, x)
    want = reference(text, [x, weights["w_gate"], weights["w_up"], weights["w_down"]])
    check(got, unfused, want, dtype)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_a_small_llama_block_planned_for_hopper_runs_its_ffn_in_one_launch(monkeypatch,
                                                                         set_knobs, dtype):
    """The bench's Llama block (packed gate/up weight, gate first) at hidden 256, FFN 512,
    B=2 S=128: 7 launches, no ``swiglu`` kernel; the same as the un-fused plan and the
    reference. Its norms combine by a tree (their warp shuffles are real PTX on this device,
    not emulated here: test_row_combine emulates them)."""
    set_knobs(row_warp_shuffles=False)
    from fusec.bench.workloads import llama
    from fusec.compiler.driver import load
    from fusec.reference.executor import find_function

    text = llama(2, 128, 256, 4, 512, dtype).text()
    # the attention takes the tensor-core kernel on this device: its PTX emulated as well
    monkeypatch.setattr(templates, "attention_mma",
                        functools.partial(attention_mma.attention_mma, mma="emulated"))
    rng = np.random.default_rng(5)
    names, values = [], []
    for arg in find_function(load(text)).body.block.args:
        shape = tuple(arg.type.get_shape())
        scale = 1 / np.sqrt(shape[0]) if len(shape) == 2 else 1.0
        base = 1.0 if len(shape) == 1 else 0.0  # the norms' gains near 1
        names.append(arg.name_hint)
        values.append(typed(base + scale * rng.standard_normal(shape), dtype))
    params = dict(zip(names[1:], values[1:], strict=True))
    plan, bound = planned(text, params, True)
    kinds = [k.removeprefix(f"llama_{dtype}_").rsplit("_", 1)[0] for k in kernels(plan)]
    assert kinds == ["rms_norm", "gemm", "attention", "gemm", "rms_norm", "gemm_swiglu", "gemm"]
    assert [s.interleaved for s in plan.inputs if s.name == "gate_up_w"] == [None]
    assert "B in halves (first even)" in plan.source
    unfused_plan, _ = planned(text, params, False)
    assert len(unfused_plan.launches) == 8
    got = run_emulated(plan, bound, values[0])
    unfused = run_emulated(unfused_plan, bound, values[0])
    check(got, unfused, reference(text, values), dtype)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])  # bf16: interleaved, not transposed
def test_an_interleaved_weight_unbound_is_interleaved_on_the_host_at_each_call(dtype):
    """Unbound after compiling, the weight is passed per call and stored as the kernel reads
    it (`ValueSpec.stored`); a device array is refused, a one-line error."""
    from fusec.errors import InputError
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    text = swiglu_text(dtype, gate_first=False)
    rng = np.random.default_rng(9)
    x = typed(rng.standard_normal((256, 128)), dtype)
    w = typed(rng.standard_normal((128, 512)) / np.sqrt(128), dtype)
    plan, bound = planned(text, {"w": w}, True)
    exe = Executable(emulated_plan(plan), select_device("cpu"), bound)
    (first,) = exe(x)
    exe.unbind("w")
    (again,) = exe(x, w)
    assert np.array_equal(first, again)
    want = reference(text, [x, w])
    assert float(np.abs(as32(again, dtype) - as32(want, dtype)).max()
                 / np.abs(as32(want, dtype)).max()) <= TOLERANCE[dtype]
    with pytest.raises(InputError, match="stored in the GEMM's"):
        exe(x, exe.to_device(w))


def test_with_layer_gemms_off_an_f16_weight_is_interleaved_as_it_is_and_transposed_per_call(
        set_knobs):
    """The knob `wgmma_layer_gemms` off: a bound f16 B is not stored transposed, so the transpose
    launch runs first, on the interleaved weight."""
    set_knobs(wgmma_layer_gemms=False)
    text = swiglu_text("f16")
    rng = np.random.default_rng(10)
    x = typed(rng.standard_normal((256, 128)), "f16")
    w = typed(rng.standard_normal((128, 512)) / np.sqrt(128), "f16")
    plan, bound = planned(text, {"w": w}, True)
    assert [k.rsplit("_", 1)[-1] for k in kernels(plan)] == ["bt", "0"]
    assert "gemm_swiglu" in kernels(plan)[1]
    assert [(s.panels, s.interleaved) for s in plan.inputs if s.name == "w"] == [(None, "first")]
    unfused_plan, _ = planned(text, {"w": w}, False)
    got = run_emulated(plan, bound, x)
    check(got, run_emulated(unfused_plan, bound, x), reference(text, [x, w]), "f16")
