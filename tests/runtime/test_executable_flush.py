"""The early flushes of a call's launches (the knob ``early_flush``, `Executable.flushes`)."""

from __future__ import annotations

import os

import numpy as np

import fusec
from fusec.runtime.executable import FLUSH_EVERY, flush_points

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
T = "tensor<4x8xf32>"
PROGRAM = f"""
func.func @f(%a: {T}, %b: {T}) -> ({T}, {T}) {{
  %0 = nn.add %a, %b : {T}, {T} -> {T}
  %1 = nn.reduce_sum %0 {{axes = array<i64: 1>, keepdims = true}} : {T} -> tensor<4x1xf32>
  %2 = nn.sub %0, %1 : {T}, tensor<4x1xf32> -> {T}
  %3 = nn.mul %2, %a : {T}, {T} -> {T}
  func.return %2, %3 : {T}, {T}
}}"""


def test_flush_points_are_the_first_launch_and_every_stride_but_never_the_last():
    assert flush_points(0) == frozenset()
    assert flush_points(1) == frozenset()  # the call's own wait flushes its only launch
    assert flush_points(2) == {0}
    assert flush_points(2 * FLUSH_EVERY + 1) == {0, FLUSH_EVERY}
    assert flush_points(2 * FLUSH_EVERY + 2) == {0, FLUSH_EVERY, 2 * FLUSH_EVERY}


def test_a_device_of_host_memory_never_flushes_and_the_knob_turns_them_off():
    for early in (True, False):
        exe = fusec.compile(PROGRAM, device=DEVICE, pipeline="none", knobs={"early_flush": early})
        launches = len(exe.plan.launches)
        expected = flush_points(launches) if early and not exe.host_memory else frozenset()
        assert exe.flushes == expected
        a, b = (np.random.default_rng(i).standard_normal((4, 8)).astype(np.float32)
                for i in range(2))
        total = a + b
        centred = total - total.sum(axis=1, keepdims=True)
        for got, want in zip(exe(a, b), (centred, centred * a), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
