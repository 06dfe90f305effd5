"""Donated arguments (``fusec.aliasing_output``) on the OpenCL device: the caller's array is
updated in place and returned as the aliased result, whatever computes that result (an
in-place ``nn.cache_update``, or any op, copied in at the end); the values are always the
reference's; an argument that is not donated is never written.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import fusec
from fusec.compiler.check import run_with_reference
from fusec.compiler.driver import load
from fusec.errors import InputError
from fusec.reference.executor import run_function
from fusec.runtime.device_array import DeviceArray

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
CACHE, NEW = "tensor<2x8x4xf32>", "tensor<2x3x4xf32>"


def update_program(donated: bool) -> str:
    attr = " {fusec.aliasing_output = 0 : i64}" if donated else ""
    return f"""
func.func @f(%c: {CACHE}{attr}, %u: {NEW}, %pos: tensor<i32>) -> ({CACHE}, {CACHE}) {{
  %s = nn.add %c, %c : {CACHE}, {CACHE} -> {CACHE}
  %0 = nn.cache_update %c, %u, %pos : {CACHE}, {NEW}, tensor<i32> -> {CACHE}
  func.return %0, %s : {CACHE}, {CACHE}
}}"""


ACCUMULATE = f"""
func.func @f(%acc: {CACHE} {{fusec.aliasing_output = 1 : i64}}, %x: {CACHE}) -> ({CACHE}, {CACHE}) {{
  %0 = nn.add %acc, %x : {CACHE}, {CACHE} -> {CACHE}
  %1 = nn.mul %0, %x : {CACHE}, {CACHE} -> {CACHE}
  func.return %0, %1 : {CACHE}, {CACHE}
}}"""
"""The donated argument's result is computed by ordinary ops, and the other result is computed
from a value (``%0``) that must not live in the donated buffer."""


def inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((2, 8, 4)).astype(np.float32),
            rng.standard_normal((2, 3, 4)).astype(np.float32), np.array(4, np.int32)]


def test_donated_cache_is_updated_in_place_and_returned() -> None:
    text = update_program(donated=True)
    cache, update, pos = inputs()
    expected = run_function(load(text), [cache, update, pos])
    exe = fusec.compile(text, device=DEVICE)
    outputs = exe(cache, update, pos)
    assert outputs[0] is cache
    np.testing.assert_array_equal(cache, expected[0])
    np.testing.assert_allclose(outputs[1], expected[1])  # read before the update


def test_cache_not_donated_is_left_alone() -> None:
    text = update_program(donated=False)
    cache, update, pos = inputs()
    before = cache.copy()
    outputs, expected = run_with_reference(text, device=DEVICE, args=[cache, update, pos])
    assert outputs[0] is not cache
    np.testing.assert_array_equal(cache, before)
    np.testing.assert_array_equal(outputs[0], expected[0])


def test_result_computed_elsewhere_is_copied_into_the_donated_buffer() -> None:
    acc, x = inputs(1)[0], inputs(2)[0]
    expected = run_function(load(ACCUMULATE), [acc, x])
    exe = fusec.compile(ACCUMULATE, device=DEVICE)
    for _ in range(2):  # the second call starts from the first call's update
        outputs = exe(acc, x)
        assert outputs[1] is acc
        np.testing.assert_allclose(outputs[0], expected[0], rtol=1e-6)
        np.testing.assert_allclose(acc, expected[1], rtol=1e-6)
        expected = run_function(load(ACCUMULATE), [acc.copy(), x])


def test_staged_input_is_updated_too() -> None:
    """An array the device cannot use in place (not C-contiguous) goes through a staging copy,
    which is copied back into it."""
    text = update_program(donated=True)
    cache, update, pos = inputs()
    expected = run_function(load(text), [cache, update, pos])
    strided = np.asfortranarray(cache)
    outputs = fusec.compile(text, device=DEVICE)(strided, update, pos)
    assert outputs[0] is strided
    np.testing.assert_array_equal(strided, expected[0])


def test_device_array_is_updated_in_place() -> None:
    text = update_program(donated=True)
    cache, update, pos = inputs()
    expected = run_function(load(text), [cache, update, pos])
    exe = fusec.compile(text, device=DEVICE)
    on_device = exe.to_device(cache)
    outputs = exe(on_device, update, pos)
    assert outputs[0] is on_device and isinstance(outputs[1], DeviceArray)
    np.testing.assert_array_equal(on_device.get(), expected[0])


def test_read_only_array_is_refused() -> None:
    cache, update, pos = inputs()
    cache.flags.writeable = False
    exe = fusec.compile(update_program(donated=True), device=DEVICE)
    with pytest.raises(InputError, match="input 'c' is donated .* the array given is read-only"):
        exe(cache, update, pos)


def test_donated_input_cannot_be_bound() -> None:
    cache, _, _ = inputs()
    exe = fusec.compile(update_program(donated=True), device=DEVICE)
    with pytest.raises(InputError, match="input 'c' is donated .* it cannot be bound"):
        exe.bind("c", cache)


def test_check_runs_on_copies() -> None:
    """`run_with_reference` and `spared`: the caller's arrays keep their values."""
    acc, x = inputs(1)[0], inputs(2)[0]
    before = acc.copy()
    outputs, expected = run_with_reference(ACCUMULATE, device=DEVICE, args=[acc, x])
    np.testing.assert_array_equal(acc, before)
    for out, ref in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_intermediate_read_after_the_update_keeps_its_value() -> None:
    """An update of an intermediate goes in place only when nothing reads it afterwards: here
    a reshape of it is read after the update, which therefore writes a copy."""
    t = CACHE
    text = f"""
func.func @f(%c: {t}, %u: {NEW}, %pos: tensor<i32>) -> ({t}, tensor<64xf32>, {t}) {{
  %e = nn.exp %c : {t} -> {t}
  %0 = nn.cache_update %e, %u, %pos : {t}, {NEW}, tensor<i32> -> {t}
  %w = nn.exp %c : {t} -> {t}
  %v = nn.reshape %w : {t} -> tensor<64xf32>
  %1 = nn.cache_update %w, %u, %pos : {t}, {NEW}, tensor<i32> -> {t}
  %n = nn.neg %v : tensor<64xf32> -> tensor<64xf32>
  func.return %0, %n, %1 : {t}, tensor<64xf32>, {t}
}}"""
    outputs, expected = run_with_reference(text, device=DEVICE, args=inputs())
    for out, ref in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(out, ref, rtol=1e-6)
