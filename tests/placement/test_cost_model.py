"""The seed's cost model (004): defaults, the linear fit and its guards, each rule in order,
the 0.95 factor, and threshold overrides with their errors."""

from __future__ import annotations

import dataclasses

import pytest

from fusec.placement.cost_model import (
    GPU_ADVANTAGE,
    DeviceProfile,
    Kind,
    LinearModel,
    OffloadOptionError,
    Reason,
    Thresholds,
    cpu_estimate,
    evaluate,
    fit_linear_model,
    parse_overrides,
    small_batch_guard,
)


def test_defaults_are_the_seeds() -> None:
    t = Thresholds()
    assert (t.unary_min_elems, t.binary_min_elems, t.reduction_min_elems,
            t.matmul_min_flops) == (4096, 4096, 256, 1_000_000)
    assert (t.cpu_elem_per_elem, t.cpu_reduction_per_elem, t.cpu_matmul_per_flop) == (
        1e-7, 1.2e-7, 2.5e-11)
    assert (t.small_batch_max_dim, t.small_batch_min_elems) == (8, 1_048_576)
    assert GPU_ADVANTAGE == 0.95


# --- the linear model -------------------------------------------------------------------------


def test_fit_exact_line() -> None:
    model = fit_linear_model([(1.0, 3.0), (2.0, 5.0), (4.0, 9.0)])
    assert model == pytest.approx(LinearModel(2.0, 1.0))


def test_fit_guards() -> None:
    assert fit_linear_model([]) is None
    assert fit_linear_model([(4.0, 2.0)]) == LinearModel(0.5, 0.0)   # one sample: through 0
    assert fit_linear_model([(0.0, 2.0)]) is None
    assert fit_linear_model([(2.0, 1.0), (2.0, 3.0)]) is None        # no spread in x
    assert fit_linear_model([(1.0, 3.0), (2.0, 1.0)]) is None        # falling: slope <= 0
    clamped = fit_linear_model([(1.0, 1.0), (2.0, 3.0)])            # intercept -1 -> 0
    assert clamped is not None and clamped.intercept == 0.0 and clamped.slope == 2.0


def test_estimate_guards() -> None:
    assert LinearModel(2.0, 1.0).estimate(3) == 7.0
    assert LinearModel(0.0, 1.0).estimate(3) is None
    assert LinearModel(float("nan"), 1.0).estimate(3) is None
    assert LinearModel(float("inf")).estimate(3) is None


def test_cpu_estimate_per_unit_cost() -> None:
    t = Thresholds()
    assert cpu_estimate(t, Kind.ELEMENTWISE, 1000, 0) == pytest.approx(1e-4)
    assert cpu_estimate(t, Kind.REDUCTION, 1000, 0) == pytest.approx(1.2e-4)
    assert cpu_estimate(t, Kind.MATMUL, 1000, 10**6) == pytest.approx(2.5e-5)
    assert cpu_estimate(Thresholds(cpu_elem_per_elem=0.0), Kind.ELEMENTWISE, 10, 0) is None
    assert cpu_estimate(Thresholds(cpu_launch_s=1e-3), Kind.UNARY, 1000, 0) == pytest.approx(
        1.1e-3)


# --- the rules --------------------------------------------------------------------------------


def test_small_batch_guard_bounds() -> None:
    t = Thresholds()
    assert small_batch_guard(t, 1_048_576, 8)
    assert not small_batch_guard(t, 1_048_576, 9)
    assert not small_batch_guard(t, 1_048_575, 8)
    assert not small_batch_guard(t, 10**7, None)
    assert not small_batch_guard(t, 10**7, 0)
    assert not small_batch_guard(Thresholds(small_batch_max_dim=0), 10**7, 1)
    assert not small_batch_guard(Thresholds(small_batch_min_elems=0), 10**7, 1)


def test_threshold_rule_without_a_profile() -> None:
    t = Thresholds()
    for kind, below, at in ((Kind.ELEMENTWISE, 4095, 4096), (Kind.UNARY, 4095, 4096),
                            (Kind.REDUCTION, 255, 256)):
        assert not evaluate(t, None, kind, below, 0, None, False).accelerate
        e = evaluate(t, None, kind, at, 0, None, False)
        assert e.accelerate and e.reason is Reason.THRESHOLD and e.threshold == at
    assert not evaluate(t, None, Kind.MATMUL, 10**9, 999_999, None, False).accelerate
    assert evaluate(t, None, Kind.MATMUL, 1, 1_000_000, None, False).accelerate


def test_residency_keeps_pointwise_work_on_the_accelerator() -> None:
    e = evaluate(Thresholds(), None, Kind.ELEMENTWISE, 4, 0, None, input_on_accelerator=True)
    assert e.accelerate and e.reason is Reason.RESIDENCY
    # not for a reduction or a matmul (the seed applies it to elementwise and unary ops)
    e = evaluate(Thresholds(), None, Kind.REDUCTION, 4, 0, None, input_on_accelerator=True)
    assert not e.accelerate and e.reason is Reason.THRESHOLD


def test_residency_comes_before_the_small_batch_guard() -> None:
    e = evaluate(Thresholds(), None, Kind.ELEMENTWISE, 2_000_000, 0, 4, True)
    assert e.reason is Reason.RESIDENCY


def test_small_batch_guard_before_the_model() -> None:
    fast = DeviceProfile(elementwise=LinearModel(1e-15))
    e = evaluate(Thresholds(), fast, Kind.ELEMENTWISE, 2_000_000, 0, 4, False)
    assert not e.accelerate and e.reason is Reason.SMALL_BATCH_GUARD
    e = evaluate(Thresholds(), fast, Kind.ELEMENTWISE, 2_000_000, 0, 16, False)
    assert e.accelerate and e.reason is Reason.PROFILE_MODEL


def test_profile_model_scales_the_accelerator_by_095() -> None:
    # host: 1e-7 s x 1000 = 1e-4 s. The accelerator at 1.05e-4 s wins (x0.95 = 9.975e-5),
    # at 1.06e-4 s it loses (1.007e-4).
    wins = DeviceProfile(elementwise=LinearModel(1.05e-7))
    loses = DeviceProfile(elementwise=LinearModel(1.06e-7))
    e = evaluate(Thresholds(), wins, Kind.ELEMENTWISE, 1000, 0, None, False)
    assert e.accelerate and e.reason is Reason.PROFILE_MODEL
    assert e.cpu_s == pytest.approx(1e-4) and e.gpu_s == pytest.approx(1.05e-4)
    assert not evaluate(Thresholds(), loses, Kind.ELEMENTWISE, 1000, 0, None, False).accelerate


def test_profile_model_counts_the_transfers() -> None:
    fast = DeviceProfile(matmul=LinearModel(1e-14), launch_s=1e-5)
    t = Thresholds()
    assert evaluate(t, fast, Kind.MATMUL, 0, 10**8, None, False).accelerate   # 1e-5 vs 2.5e-3
    e = evaluate(t, fast, Kind.MATMUL, 0, 10**8, None, False, to_accelerator_s=5e-3)
    assert not e.accelerate and e.gpu_s == pytest.approx(1e-5 + 1e-6 + 5e-3)
    e = evaluate(t, fast, Kind.MATMUL, 0, 10**8, None, False, to_host_s=1.0)
    assert e.accelerate and e.cpu_s == pytest.approx(1.0 + 2.5e-3)


def test_unknown_host_cost_means_the_accelerator() -> None:
    e = evaluate(Thresholds(cpu_elem_per_elem=0.0), DeviceProfile(elementwise=LinearModel(1.0)),
                 Kind.ELEMENTWISE, 10, 0, None, False)
    assert e.accelerate and e.cpu_s is None


def test_a_profile_without_the_kind_falls_back_to_thresholds() -> None:
    e = evaluate(Thresholds(), DeviceProfile(matmul=LinearModel(1e-12)), Kind.REDUCTION, 300, 0,
                 None, False)
    assert e.accelerate and e.reason is Reason.THRESHOLD


# --- overrides --------------------------------------------------------------------------------


def test_overrides_by_name() -> None:
    t = Thresholds().with_overrides({"small_batch_max_dim": "4", "cpu_elem_per_elem": "2e-9"})
    assert t.small_batch_max_dim == 4 and t.cpu_elem_per_elem == 2e-9
    assert parse_overrides(["matmul_min_flops=10", " reduction_min_elems = 3 "]) == {
        "matmul_min_flops": "10", "reduction_min_elems": "3"}


@pytest.mark.parametrize("items, message", [
    (["nope=1"], "unknown offload threshold 'nope'"),
    (["small_batch_max_dim=1.5"], "must be an integer"),
    (["cpu_elem_per_elem=fast"], "must be a number"),
    (["binary_min_elems=-1"], "non-negative"),
    (["cpu_matmul_per_flop=nan"], "finite"),
    (["binary_min_elems"], "is not NAME=VALUE"),
    (["=3"], "is not NAME=VALUE"),
])
def test_bad_overrides(items: list[str], message: str) -> None:
    with pytest.raises(OffloadOptionError, match=message):
        parse_overrides(items)


def test_elementwise_cost_scales_with_traffic_and_steps() -> None:
    t = Thresholds(cpu_elem_per_elem=3e-10, cpu_step_per_elem=1e-9)
    # a + b: traffic 3, one step: the per-element cost alone
    assert cpu_estimate(t, Kind.ELEMENTWISE, 1000, 0) == pytest.approx(3e-7)
    # relu((a+b)*c) traffic 4, 3 steps: 4/3 of the add plus 2 further steps
    assert cpu_estimate(t, Kind.ELEMENTWISE, 1000, 0, traffic=4.0, steps=3) == pytest.approx(
        4e-7 + 2e-6)
    gpu = DeviceProfile(elementwise=LinearModel(3e-12, 1e-6), elementwise_step=1e-12,
                        launch_s=1e-5)
    assert gpu.compute(Kind.ELEMENTWISE, 1000, 0, traffic=2.0, steps=9) == pytest.approx(
        1e-5 + 1e-6 + 2e-9 + 8e-9)
    # reductions and matmuls do not take steps
    assert gpu.compute(Kind.REDUCTION, 1000, 0, steps=9) is None


def test_transcendentals_cost_their_own_step() -> None:
    # 8 steps, 5 of them transcendentals: 2 further arithmetic steps and 5 transcendentals
    t = Thresholds(cpu_elem_per_elem=3e-10, cpu_step_per_elem=1e-10,
                   cpu_transcendental_per_elem=1e-9)
    assert cpu_estimate(t, Kind.ELEMENTWISE, 1000, 0, traffic=2.0, steps=8,
                        transcendentals=5) == pytest.approx(2e-7 + 2e-7 + 5e-6)
    gpu = DeviceProfile(elementwise=LinearModel(3e-12), elementwise_step=1e-13,
                        transcendental_step=1e-12)
    assert gpu.compute(Kind.REDUCTION, 1000, 0, traffic=1.0, steps=5,
                       transcendentals=1) is None   # no reduction model
    gpu = dataclasses.replace(gpu, reduction=LinearModel(1e-12))
    # a softmax: traffic 2 against the sum's 1, 5 steps, one of them an exp
    assert gpu.compute(Kind.REDUCTION, 1000, 0, traffic=2.0, steps=5,
                       transcendentals=1) == pytest.approx(2e-9 + 3e-10 + 1e-9)
    # not measured apart (0): every further step costs a step, as before
    old = Thresholds(cpu_elem_per_elem=3e-10, cpu_step_per_elem=1e-10)
    assert cpu_estimate(old, Kind.ELEMENTWISE, 1000, 0, traffic=2.0, steps=8,
                        transcendentals=5) == pytest.approx(2e-7 + 7e-7)


def test_a_call_cost_is_paid_where_a_unit_opens_a_piece() -> None:
    t = Thresholds(cpu_elem_per_elem=1e-9, cpu_call_s=1e-5)
    gpu = DeviceProfile(elementwise=LinearModel(1e-12), call_s=2e-3)
    # the accelerator's work is far cheaper, but not its call
    alone = evaluate(t, gpu, Kind.ELEMENTWISE, 10**6, 0, None, False,
                     to_host_s=t.cpu_call_s, to_accelerator_s=gpu.call_s)
    assert not alone.accelerate
    assert alone.cpu_s == pytest.approx(1e-3 + 1e-5) and alone.gpu_s == pytest.approx(
        1e-6 + 2e-3)
    joined = evaluate(t, gpu, Kind.ELEMENTWISE, 10**6, 0, None, False,
                      to_host_s=t.cpu_call_s)
    assert joined.accelerate


def test_a_heavy_body_can_tip_the_balance() -> None:
    # The host is faster per element moved, the accelerator per scalar op.
    t = Thresholds(cpu_elem_per_elem=3e-10, cpu_step_per_elem=1e-9)
    gpu = DeviceProfile(elementwise=LinearModel(6e-10), elementwise_step=1e-11)
    light = evaluate(t, gpu, Kind.ELEMENTWISE, 10**6, 0, None, False, steps=1)
    heavy = evaluate(t, gpu, Kind.ELEMENTWISE, 10**6, 0, None, False, steps=15)
    assert not light.accelerate and heavy.accelerate


def test_reduction_cost_scales_against_a_sum() -> None:
    t = Thresholds(cpu_reduction_per_elem=1e-10, cpu_step_per_elem=1e-9)
    assert cpu_estimate(t, Kind.REDUCTION, 1000, 0) == pytest.approx(1e-7)   # like the sum
    # a residual layer norm: reads two, writes one (traffic 3), seven steps
    assert cpu_estimate(t, Kind.REDUCTION, 1000, 0, traffic=3.0, steps=7) == pytest.approx(
        3e-7 + 6e-6)


def test_f16_elementwise_work_is_costed_at_the_f16_kernels_rates() -> None:
    """Elementwise work on f16 arrays (``half``) takes the f16 costs on the host and on the
    accelerator where they were calibrated; f32 work, matmuls and reductions keep theirs, and
    without f16 costs f16 work is costed as f32 work."""
    n = 1 << 20
    t = dataclasses.replace(Thresholds(), cpu_elem_per_elem=3e-10, cpu_step_per_elem=1e-12,
                            cpu_transcendental_per_elem=7e-11, cpu_half_elem_per_elem=3e-9,
                            cpu_half_step_per_elem=2e-11,
                            cpu_half_transcendental_per_elem=4e-10)
    f32 = cpu_estimate(t, Kind.ELEMENTWISE, n, 0, 2.0, 13, 1)
    f16 = cpu_estimate(t, Kind.ELEMENTWISE, n, 0, 2.0, 13, 1, half=True)
    assert f32 == pytest.approx(n * (3e-10 * 2 / 3 + 11 * 1e-12 + 7e-11))
    assert f16 == pytest.approx(n * (3e-9 * 2 / 3 + 11 * 2e-11 + 4e-10))
    for kind in (Kind.REDUCTION, Kind.MATMUL):
        assert cpu_estimate(t, kind, n, n, half=True) == cpu_estimate(t, kind, n, n)
    uncalibrated = dataclasses.replace(t, cpu_half_elem_per_elem=0.0)
    assert cpu_estimate(uncalibrated, Kind.ELEMENTWISE, n, 0, 2.0, 13, 1, half=True) == f32

    gpu = DeviceProfile(elementwise=LinearModel(3e-12, 6e-6), elementwise_step=1e-13,
                        half_elementwise=LinearModel(4e-12, 7e-6), half_step=2e-13,
                        half_transcendental_step=5e-13)
    assert gpu.compute(Kind.UNARY, n, 0, 2.0, 3, 1, half=True) == pytest.approx(
        7e-6 + 4e-12 * n * 2 / 3 + n * (2e-13 + 5e-13))
    assert gpu.compute(Kind.UNARY, n, 0, 2.0, 3, 1) == pytest.approx(
        6e-6 + 3e-12 * n * 2 / 3 + 2 * 1e-13 * n)
    # the verdict follows: 9x the f32 cost on the host sends the f16 unit to the accelerator
    e32 = evaluate(t, gpu, Kind.ELEMENTWISE, n, 0, None, False, 0.0, 1.5e-3, 2.0, 13, 1)
    e16 = evaluate(t, gpu, Kind.ELEMENTWISE, n, 0, None, False, 0.0, 1.5e-3, 2.0, 13, 1,
                   half=True)
    assert not e32.accelerate and e16.accelerate
