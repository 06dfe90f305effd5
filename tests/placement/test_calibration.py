"""The calibration cache (per device, versioned, atomic, under XDG_CACHE_HOME), what a bad one
does (a warning and the defaults), thresholds derived from two profiles, and a quick
measurement of the CPU device."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.driver import compile_placed, load, lower
from fusec.placement import calibration
from fusec.placement.calibration import (
    BUILT_IN_DEFAULT,
    CALIBRATION_VERSION,
    LOADED_FROM_CACHE,
    DeviceIdentity,
    cache_file,
    derive_thresholds,
    load_setup,
    measure_device,
    read_cache,
    write_cache,
)
from fusec.placement.cost_model import DeviceProfile, LinearModel, Thresholds
from fusec.placement.devices import DevicePair
from fusec.runtime.device import OpenCLDevice
from fusec.runtime.executable import Executable

IDENTITY = DeviceIdentity("Some Platform", "Card 9000", "1.2.3", "GPU")
PROFILE = DeviceProfile(elementwise=LinearModel(1e-11, 2e-6), reduction=LinearModel(2e-11),
                        matmul=LinearModel(1e-13, 1e-5), upload=LinearModel(1e-10, 1e-5),
                        download=None, launch_s=3e-5)


def test_cache_path_honours_xdg_cache_home(cache_home: Path) -> None:
    path = cache_file(IDENTITY)
    assert path.parent == cache_home / "fusec" / "offload"
    assert path.name == "some_platform-card_9000-1_2_3.json"


def test_round_trip_and_nothing_left_behind(cache_home: Path) -> None:
    path = write_cache(IDENTITY, PROFILE, 123.0)
    cached, warning = read_cache(IDENTITY)
    assert warning is None and cached is not None
    assert cached.profile == PROFILE and cached.path == path and cached.duration_ms == 123.0
    assert json.loads(path.read_text())["version"] == CALIBRATION_VERSION
    assert [p.name for p in path.parent.iterdir()] == [path.name]   # no temporary files


def test_missing_cache_is_silent() -> None:
    assert read_cache(IDENTITY) == (None, None)


@pytest.mark.parametrize("text, warning", [
    ("{not json", "corrupt calibration cache"),
    ("[]", "corrupt calibration cache"),
    (None, "version 4, expected 5"),     # a cache without the f16 kernels' costs
    ("stale-field", "corrupt calibration cache"),
    ("other-device", "another device"),
])
def test_bad_caches_warn_and_give_nothing(text: str | None, warning: str) -> None:
    path = write_cache(IDENTITY, PROFILE, 1.0)
    record = json.loads(path.read_text())
    if text is None:
        record["version"] = 4
        text = json.dumps(record)
    elif text == "stale-field":
        record["profile"]["launch_s"] = -1
        text = json.dumps(record)
    elif text == "other-device":
        record["device"]["name"] = "Card 1"
        text = json.dumps(record)
    path.write_text(text)
    cached, message = read_cache(IDENTITY)
    assert cached is None and message is not None and warning in message
    assert "\n" not in message and str(path) in message


def test_unreadable_cache_warns(cache_home: Path) -> None:
    path = cache_file(IDENTITY)
    path.mkdir(parents=True)          # a folder where the file should be: cannot be read
    cached, message = read_cache(IDENTITY)
    assert cached is None and message is not None and "cannot read" in message


def test_derived_thresholds() -> None:
    host = DeviceProfile(elementwise=LinearModel(1e-9), reduction=LinearModel(2e-9),
                         matmul=LinearModel(1e-11), launch_s=1e-5)
    t = derive_thresholds(host, PROFILE)
    assert (t.cpu_elem_per_elem, t.cpu_reduction_per_elem, t.cpu_matmul_per_flop,
            t.cpu_launch_s, t.cpu_step_per_elem) == (1e-9, 2e-9, 1e-11, 1e-5, 0.0)
    # elementwise: 3e-5 + 2e-6 + 1e-11 n < 1e-5 + 1e-9 n from n = 22424: the grid's 65536
    assert t.binary_min_elems == t.unary_min_elems == 65536
    # matmul: 3e-5 + 1e-5 + 1e-13 n < 1e-5 + 1e-11 n from 3.03e6: 4**11 = 4194304
    assert t.matmul_min_flops == 4 ** 11
    never = derive_thresholds(host, DeviceProfile(elementwise=LinearModel(1.0)))
    assert never.binary_min_elems > 2 ** 30
    assert never.reduction_min_elems == Thresholds().reduction_min_elems   # no model: default


def test_load_setup_from_both_caches(pair: DevicePair) -> None:
    assert pair.host is not None and pair.accelerator is not None
    identity = DeviceIdentity.of(pair.host)      # both contexts are one device: one cache
    write_cache(identity, PROFILE, 50.0)
    setup = load_setup(pair.host, pair.accelerator)
    assert setup.base_source == LOADED_FROM_CACHE and setup.accelerator == PROFILE
    assert setup.previous == Thresholds() and setup.warnings == ()
    assert setup.thresholds == derive_thresholds(PROFILE, PROFILE)


def test_corrupt_cache_gives_defaults_and_one_warning(pair: DevicePair) -> None:
    assert pair.host is not None
    path = cache_file(DeviceIdentity.of(pair.host))
    path.parent.mkdir(parents=True)
    path.write_text("garbage")
    setup = load_setup(pair.host, pair.accelerator)
    assert setup.base_source == BUILT_IN_DEFAULT and setup.thresholds == Thresholds()
    assert setup.accelerator is None and len(setup.warnings) == 2   # one per device
    placed = compile_placed("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                            "  %b = nn.exp %a : tensor<4xf32> -> tensor<4xf32>\n"
                            "  func.return %b : tensor<4xf32>\n}\n", devices=pair)
    assert placed.report["base_source"] == BUILT_IN_DEFAULT
    assert all("corrupt calibration cache" in w for w in placed.report["warnings"])


def build(text: str, device: OpenCLDevice) -> Executable:
    compiled = lower(load(text), None, "none", DeviceInfo.from_device(device.device))
    return Executable(compiled.plan, device)


def test_quick_measurement_of_the_cpu(host: OpenCLDevice) -> None:
    measured = measure_device(host, build, quick=True, repeat=2)
    counts = {k: len(v) for k, v in measured.samples.items()}
    assert counts == {"elementwise": 2, "light": 2, "heavy": 2, "half_add": 2, "half_light": 2,
                      "half_heavy": 2, "reduction": 2, "matmul": 2,
                      "upload": 0, "download": 0}   # the CPU reads host memory
    assert measured.profile.half_elementwise is not None
    assert all(seconds > 0 for v in measured.samples.values() for _, seconds in v)
    assert measured.profile.upload is None and measured.profile.launch_s >= 0
    assert measured.profile.call_s >= 0   # two noisy repeats on a shared machine: maybe 0
    assert [units for units, _ in measured.samples["matmul"]] == [16.0 ** 3, 32.0 ** 3]
    assert measured.duration_ms > 0


def test_transfers_are_measured_on_a_device_with_its_own_memory(
        host: OpenCLDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibration, "shares_host_memory", lambda device: False)
    up, down = calibration.transfer_seconds(host, 1 << 16, 2)
    assert up > 0 and down > 0


def test_step_seconds_from_the_two_elementwise_kernels() -> None:
    add = LinearModel(3e-10)                 # 1e-10 s per element read or written
    light = LinearModel(2e-10 + 7 * 5e-10)   # 2 elements moved, 7 further steps of 5e-10
    assert calibration.step_seconds(add, light) == pytest.approx(5e-10)
    assert calibration.step_seconds(add, LinearModel(1e-10)) == 0.0   # never negative
    assert calibration.step_seconds(None, light) == 0.0


def test_transcendental_seconds_from_the_heavy_kernel() -> None:
    add = LinearModel(3e-10)
    # 2 elements moved, 2 further arithmetic steps of 5e-10, 5 transcendentals of 2e-9
    heavy = LinearModel(2e-10 + 2 * 5e-10 + 5 * 2e-9)
    assert calibration.transcendental_seconds(add, heavy, 5e-10) == pytest.approx(2e-9)
    assert calibration.transcendental_seconds(add, LinearModel(1e-10), 5e-10) == 0.0
    assert calibration.transcendental_seconds(None, heavy, 5e-10) == 0.0


def test_call_seconds_leave_out_the_launch_and_the_transfers() -> None:
    gpu = DeviceProfile(upload=LinearModel(1e-10, 2e-5), download=LinearModel(1e-10, 3e-5),
                        launch_s=1e-5)
    # a trivial call of 170 us: 10 us launch, 20 + 30 us transfer latencies (+ 2 x 25.6 ns)
    assert calibration.call_seconds(gpu, 1.7e-4, 256) == pytest.approx(1.7e-4 - 6e-5 - 5.12e-8)
    assert calibration.call_seconds(DeviceProfile(launch_s=1e-5), 4e-5, 256) == \
        pytest.approx(3e-5)                   # a CPU: no transfers
    assert calibration.call_seconds(gpu, 1e-5, 256) == 0.0   # never negative


def test_transfer_latency_is_the_smallest_copy() -> None:
    samples = [(4096.0, 2e-5 + 4096e-10), (1 << 20, 2e-5 + (1 << 20) * 1e-10 + 1e-6),
               (1 << 24, 2e-5 + (1 << 24) * 1e-10)]
    model = calibration.fit_transfer(samples)
    assert model is not None
    assert model.intercept == pytest.approx(2e-5 + 4096e-10)
    assert model.slope == pytest.approx(1e-10, rel=1e-3)
    assert calibration.fit_transfer([(4096.0, 1e-5), (8192.0, 1e-6)]) is None  # slope < 0


def test_the_heavy_program_has_its_steps(host: OpenCLDevice) -> None:
    from xdsl.dialects import func

    from fusec.placement.work import measure

    module = load(calibration.heavy_program(64))
    (w,) = measure(next(op for op in module.ops if isinstance(op, func.FuncOp)))
    assert (w.steps, w.transcendentals, w.traffic) == (
        calibration.HEAVY_STEPS, calibration.HEAVY_TRANSCENDENTALS, 2.0)
    module = load(calibration.light_program(64))
    (w,) = measure(next(op for op in module.ops if isinstance(op, func.FuncOp)))
    assert (w.steps, w.transcendentals, w.traffic) == (calibration.LIGHT_STEPS, 0, 2.0)


def test_the_f16_programs_have_their_steps() -> None:
    """The f16 programs are the f32 ones with each value read or written converted, counted as
    the cost model counts f16 work (what `half_seconds` solves with)."""
    from xdsl.dialects import func

    from fusec.placement.work import measure

    expected = [(calibration.elementwise_program, 4, 0, 3.0),
                (calibration.light_program, calibration.LIGHT_STEPS + 2, 0, 2.0),
                (calibration.heavy_program, calibration.HEAVY_STEPS + 2,
                 calibration.HEAVY_TRANSCENDENTALS, 2.0)]
    for program, steps, transcendentals, traffic in expected:
        module = load(calibration.as_half(program(64)))
        (w,) = measure(next(op for op in module.ops if isinstance(op, func.FuncOp)))
        assert (w.steps, w.transcendentals, w.traffic, w.half) == (
            steps, transcendentals, traffic, True)


def test_half_seconds_solve_the_three_f16_kernels() -> None:
    """Slopes made from known costs (3 ns a unit of traffic, 0.5 ns a step, 2 ns a
    transcendental) give those costs back; a light kernel cheaper than the add's share of it
    leaves no steps, and without the add there is nothing."""
    e, s, t = 3e-9, 5e-10, 2e-9
    add = LinearModel(e + 3 * s, 4e-5)
    light = LinearModel(2 / 3 * e + 9 * s)
    heavy = LinearModel(2 / 3 * e + 4 * s + 5 * t)
    model, step, transcendental = calibration.half_seconds(add, light, heavy)
    assert model is not None
    assert (model.slope, model.intercept, step, transcendental) == pytest.approx(
        (e, 4e-5, s, t))
    model, step, _ = calibration.half_seconds(add, LinearModel(1e-10), heavy)
    assert model is not None and model.slope == pytest.approx(add.slope) and step == 0.0
    assert calibration.half_seconds(None, light, heavy) == (None, 0.0, 0.0)


def test_the_f16_costs_reach_the_thresholds_and_the_cache(cache_home: Path) -> None:
    host = DeviceProfile(elementwise=LinearModel(3e-10, 3e-5), half_elementwise=LinearModel(
        2.5e-9, 8e-5), half_step=1e-11, half_transcendental_step=1.2e-10)
    t = calibration.derive_thresholds(host, DeviceProfile(elementwise=LinearModel(3e-12)))
    assert (t.cpu_half_elem_per_elem, t.cpu_half_step_per_elem,
            t.cpu_half_transcendental_per_elem) == (2.5e-9, 1e-11, 1.2e-10)
    write_cache(IDENTITY, host, 1.0)
    cached, warning = read_cache(IDENTITY)
    assert warning is None and cached is not None and cached.profile == host


class PlantedKernel:
    """What a `planted` build gives: the seconds its program is planted to take."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


SMALL_RATE, LARGE_RATE = 1e-12, 2.5e-12
"""Planted seconds per matmul flop: products up to 256^3 stay in the caches, larger ones do
not and run 2.5 times slower per flop (as on a 16-core CPU with PoCL)."""


def planted(large_rates: dict[int, float]) -> Any:
    """A build whose kernels take planted times (nothing runs): a square matmul of n
    `SMALL_RATE` seconds a flop up to 256, else ``large_rates.get(n, LARGE_RATE)``."""
    import re

    def build(text: str, device: object) -> PlantedKernel:
        matmul = re.search(r"tensor<(\d+)x(\d+)xf32>", text)
        if matmul:
            n = int(matmul.group(1))
            return PlantedKernel(n ** 3 * (SMALL_RATE if n <= 256 else
                                           large_rates.get(n, LARGE_RATE)))
        found = re.search(r"tensor<(\d+)xf(?:16|32)>", text)
        assert found is not None
        (elements,) = found.groups()
        return PlantedKernel(1e-6 + int(elements) * 1e-9)
    return build


def planted_measurement(monkeypatch: pytest.MonkeyPatch, host: OpenCLDevice,
                        large_rates: dict[int, float]) -> Any:
    monkeypatch.setattr(calibration, "kernel_seconds", lambda exe, args, repeat: exe.seconds)
    monkeypatch.setattr(calibration, "inputs_for", lambda exe, rng: [])
    monkeypatch.setattr(calibration, "launch_seconds", lambda device, build, repeat: (1e-6, 2e-5))
    return measure_device(host, planted(large_rates))


GEMM_EPILOGUE_FLOPS = 512 * 768 * 768


def test_large_matmuls_are_measured_and_predict_large_products(
        host: OpenCLDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted kernel times (nothing is timed): the matmul model comes from products of at
    least 512^3, so a 512x768x768 GEMM and a 1024^3 one are predicted at the large rate, on
    the device's profile and as the host's per-flop cost."""
    from fusec.placement.cost_model import Kind, cpu_estimate

    measured = planted_measurement(monkeypatch, host, {})
    model = measured.profile.matmul
    assert model is not None
    thresholds = derive_thresholds(measured.profile, measured.profile)
    for flops in (GEMM_EPILOGUE_FLOPS, 1024 ** 3):
        assert model.estimate(flops) == pytest.approx(flops * LARGE_RATE, rel=0.02)
        assert cpu_estimate(thresholds, Kind.MATMUL, 0, flops) == pytest.approx(
            1e-6 + flops * LARGE_RATE, rel=0.02)
    sizes = [units for units, _ in measured.samples["matmul"]]
    assert max(sizes) >= 1024.0 ** 3 and min(sizes) >= 512.0 ** 3


def test_the_host_costs_a_flop_at_its_slowest_measured_rate(
        host: OpenCLDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    """512^3 planted slower per flop than the larger ones (too few tiles for the cores): the
    host's per-flop cost is that rate, not the fit's."""
    from fusec.placement.cost_model import Kind, cpu_estimate

    measured = planted_measurement(monkeypatch, host, {512: 4e-12})
    assert measured.profile.matmul_slowest_per_flop == pytest.approx(4e-12, rel=1e-9, abs=0)
    thresholds = derive_thresholds(measured.profile, PROFILE)
    assert thresholds.cpu_matmul_per_flop == pytest.approx(4e-12, rel=1e-9, abs=0)
    fixed = measured.profile.launch_s + calibration.kernel_fixed_seconds(measured.profile)
    assert cpu_estimate(thresholds, Kind.MATMUL, 0, GEMM_EPILOGUE_FLOPS) == pytest.approx(
        fixed + GEMM_EPILOGUE_FLOPS * 4e-12, rel=1e-9)


def test_the_host_matmul_rate() -> None:
    size = float(calibration.MATMUL_SIZES[-1]) ** 3
    model = LinearModel(1e-11, 1e-3)   # a positive intercept: 1 ms + 1e-11 s per flop
    # a profile without the slowest rate: the fit's at the largest size, intercept included
    assert calibration.matmul_rate(DeviceProfile(matmul=model)) == pytest.approx(
        1e-11 + 1e-3 / size, rel=1e-6, abs=0)
    assert calibration.matmul_rate(DeviceProfile(matmul=LinearModel(2e-12))) == \
        pytest.approx(2e-12, rel=1e-6, abs=0)
    with_slowest = DeviceProfile(matmul=model, matmul_slowest_per_flop=5e-11)
    assert calibration.matmul_rate(with_slowest) == 5e-11
    assert derive_thresholds(with_slowest, PROFILE).cpu_matmul_per_flop == 5e-11
    assert calibration.matmul_rate(DeviceProfile()) is None
    assert derive_thresholds(DeviceProfile(), PROFILE).cpu_matmul_per_flop == \
        Thresholds().cpu_matmul_per_flop


def test_the_slowest_rate_is_cached(cache_home: Path) -> None:
    profile = DeviceProfile(matmul=LinearModel(1e-11), matmul_slowest_per_flop=3e-11)
    path = write_cache(IDENTITY, profile, 1.0)
    cached, warning = read_cache(IDENTITY)
    assert warning is None and cached is not None and cached.profile == profile
    record = json.loads(path.read_text())   # a version-4 cache from before the field
    del record["profile"]["matmul_slowest_per_flop"]
    path.write_text(json.dumps(record))
    cached, warning = read_cache(IDENTITY)
    assert warning is None and cached is not None
    assert cached.profile.matmul_slowest_per_flop == 0.0
