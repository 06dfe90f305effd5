"""Weights bound at compile time are stored in the CPU GEMM's column panels.

A GEMM's B that is bound when the executable is made (``params=``, an ONNX model's weights) and
read by nothing but GEMMs is packed once, at bind time, into ``[N / w, K, w]`` panels of the
register tile's columns (`fusec.codegen.plan.pack_panels`); the kernel then reads its columns
as one stream instead of copying B into local memory on every call. The products are the same
sums in the same order, so a packed and an unpacked executable give the same bits.
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

import fusec
from fusec.codegen.plan import pack_panels
from fusec.errors import InputError

MLP = """
func.func @mlp(%x: tensor<37x64xf32>, %w1: tensor<64x96xf32>, %b1: tensor<96xf32>, %w2: tensor<96x64xf32>) -> tensor<37x64xf32> {
  %h = fused.matmul_bias_act %x, %w1, %b1 {activation = "gelu"} : tensor<37x64xf32>, tensor<64x96xf32>, tensor<96xf32> -> tensor<37x96xf32>
  %y = nn.matmul %h, %w2 : tensor<37x96xf32>, tensor<96x64xf32> -> tensor<37x64xf32>
  func.return %y : tensor<37x64xf32>
}"""

# %w is B of one matmul and also added to the output of another: it stays as it is.
SHARED = """
func.func @shared(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %p = nn.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %y = nn.add %p, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}"""


def weights(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"w1": rng.standard_normal((64, 96)).astype(np.float32) * 0.2,
            "b1": rng.standard_normal(96).astype(np.float32),
            "w2": rng.standard_normal((96, 64)).astype(np.float32) * 0.2}


def x_input() -> np.ndarray:
    return np.random.default_rng(7).standard_normal((37, 64)).astype(np.float32)


def test_pack_panels_puts_each_tile_of_columns_in_one_stream() -> None:
    matrix = np.arange(4 * 6).reshape(4, 6)
    packed = pack_panels(matrix, 2)
    assert packed.shape == (3, 4, 2) and packed.flags.c_contiguous
    flat = packed.reshape(-1)
    for k in range(4):
        for j in range(6):
            assert flat[(j // 2) * 4 * 2 + k * 2 + j % 2] == matrix[k, j]
    with pytest.raises(ValueError, match="panels of 4"):
        pack_panels(matrix, 4)


def test_bound_weights_are_packed_and_give_the_unpacked_bits() -> None:
    params = weights(0)
    packed = fusec.compile(MLP, device="cpu", params=params)
    panels = {s.name: s.panels for s in packed.plan.inputs}
    if panels["w1"] is None:
        pytest.skip("this CPU's GEMM tiles do not divide the weights' columns")
    assert panels["w2"] == panels["w1"] and panels["b1"] is None and panels["x"] is None
    assert "B in panels of" in packed.plan.source
    plain = fusec.compile(MLP, device="cpu")
    assert all(s.panels is None for s in plain.plan.inputs)
    assert "B in panels of" not in plain.plan.source
    x = x_input()
    (got,) = packed(x)
    (want,) = plain(x, params["w1"], params["b1"], params["w2"])
    np.testing.assert_array_equal(got, want)
    h = x.astype(np.float64) @ params["w1"] + params["b1"]
    from math import erf
    h = 0.5 * h * (1 + np.vectorize(erf)(h / np.sqrt(2)))
    np.testing.assert_allclose(got, h @ params["w2"], rtol=1e-4, atol=1e-4)


def test_binding_a_packed_weight_again_packs_the_new_values() -> None:
    exe = fusec.compile(MLP, device="cpu", params=weights(0))
    if exe.inputs["w1"].spec.panels is None:
        pytest.skip("this CPU's GEMM tiles do not divide the weights' columns")
    other = weights(1)
    for name, value in other.items():
        exe.bind(name, value)
    (got,) = exe(x_input())
    (want,) = fusec.compile(MLP, device="cpu")(x_input(), other["w1"], other["b1"], other["w2"])
    np.testing.assert_array_equal(got, want)
    # a device array is read back once and packed the same way
    exe.bind("w2", exe.to_device(other["w2"]))
    np.testing.assert_array_equal(exe(x_input())[0], want)


def test_an_unbound_packed_weight_is_packed_on_each_call() -> None:
    params = weights(0)
    exe = fusec.compile(MLP, device="cpu", params=params)
    if exe.inputs["w1"].spec.panels is None:
        pytest.skip("this CPU's GEMM tiles do not divide the weights' columns")
    (want,) = exe(x_input())
    exe.unbind("w1")
    exe.unbind("b1")
    (got,) = exe(x_input(), params["w1"], params["b1"])
    np.testing.assert_array_equal(got, want)
    with pytest.raises(InputError, match="column panels"):
        exe(x_input(), exe.to_device(params["w1"]), params["b1"])


def test_a_weight_read_by_another_kernel_too_stays_as_it_is() -> None:
    w = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    x = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32)
    exe = fusec.compile(SHARED, device="cpu", params={"w": w})
    assert all(s.panels is None for s in exe.plan.inputs)
    np.testing.assert_allclose(exe(x)[0], x @ w + w, rtol=1e-5, atol=1e-4)


def test_a_plan_with_packed_inputs_needs_their_values() -> None:
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.compiler.driver import load, lower
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable

    dev = select_device("cpu", None)
    compiled = lower(load(MLP), None, "default", DeviceInfo.from_device(dev.device),
                     bound=["w1", "b1", "w2"])
    if all(s.panels is None for s in compiled.plan.inputs):
        pytest.skip("this CPU's GEMM tiles do not divide the weights' columns")
    with pytest.raises(InputError, match="given no value"):
        Executable(compiled.plan, dev)


def test_weights_given_as_stored_are_bound_as_they_are() -> None:
    """Values already in their buffers' layout (``stored=``: `ValueSpec.stored`, as the torch
    backend holds a folded weight) satisfy a plan with packed inputs; a device array so given
    is used in place, not read back and packed a second time: the results are those of the
    weights bound plainly."""
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.compiler.driver import load, lower
    from fusec.runtime.device import select_device
    from fusec.runtime.device_array import to_device
    from fusec.runtime.executable import Executable

    dev = select_device("cpu", None)
    compiled = lower(load(MLP), None, "default", DeviceInfo.from_device(dev.device),
                     bound=["w1", "b1", "w2"])
    specs = {s.name: s for s in compiled.plan.inputs}
    if specs["w1"].panels is None:
        pytest.skip("this CPU's GEMM tiles do not divide the weights' columns")
    params = weights(0)
    (want,) = Executable(compiled.plan, dev, params)(x_input())
    w2 = to_device(dev, specs["w2"].stored(params["w2"]))
    stored = Executable(compiled.plan, dev, {"b1": params["b1"]},
                        stored={"w1": specs["w1"].stored(params["w1"]), "w2": w2})
    assert stored.param_arrays.get("w2") is w2
    np.testing.assert_array_equal(stored(x_input())[0], want)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_16_bit_weights_are_packed_by_their_storage(dtype: str) -> None:
    from fusec.dtypes import bf16_bits

    text = f"""func.func @f(%x: tensor<37x64x{dtype}>, %w: tensor<64x96x{dtype}>) -> tensor<37x96x{dtype}> {{
  %y = nn.matmul %x, %w : tensor<37x64x{dtype}>, tensor<64x96x{dtype}> -> tensor<37x96x{dtype}>
  func.return %y : tensor<37x96x{dtype}>
}}"""
    rng = np.random.default_rng(5)

    def draw(shape: tuple[int, int]) -> np.ndarray:
        values = rng.standard_normal(shape).astype(np.float32)
        return values.astype(np.float16) if dtype == "f16" else bf16_bits(values)

    x, w = draw((37, 64)), draw((64, 96))
    packed = fusec.compile(text, device="cpu", params={"w": w})
    if packed.inputs["w"].spec.panels is None:
        pytest.skip("this CPU's GEMM tiles do not divide the weights' columns")
    (got,) = packed(x)
    (want,) = fusec.compile(text, device="cpu")(x, w)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint16), np.asarray(want).view(np.uint16))
