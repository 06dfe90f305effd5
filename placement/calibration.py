"""Calibration: measure what work costs on each OpenCL device, and cache it per device.

`measure_device` runs small fusec programs on one device (an elementwise add, fused bodies of
eight arithmetic ops and of eight ops five of them transcendentals, the same three on f16
arrays (`half_seconds`), a sum, a square matmul, each at a few sizes; the matmuls at the
sizes of the workloads' GEMMs, `MATMUL_SIZES`) and fits a linear model of seconds against
elements (or flops) to each kind's kernel times from OpenCL profiling events; the host time
one more kernel adds to a call is measured apart (`launch_seconds`), as
`DeviceProfile.launch_s`, and so is what a whole call of a tiny kernel costs besides its
kernel, launch and transfers (`DeviceProfile.call_s`: the enqueues and the wait, paid once
per piece a placement runs on the device). On a device with
memory of its own (a GPU) it also fits host->device and device->host copies against bytes (the
fixed latency is the smallest copy's time; copies back go into new arrays, as a call makes
them). The profile is stored per device in
``$XDG_CACHE_HOME/fusec/offload/<platform>-<device>-<driver>.json`` (``~/.cache`` without
``XDG_CACHE_HOME``), with `CALIBRATION_VERSION`; the file is written to a temporary name and
renamed, so a reader sees the old file or the new one, never half of one.

`load_setup` is what compilation uses: the host's and the accelerator's cached profiles, the
thresholds derived from them (the host's per-unit costs; the sizes from which the accelerator
is faster), and where they came from. A cache that is missing gives the built-in defaults; one
that is unreadable, corrupt or of another version gives the defaults and a one-line warning,
never an exception.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyopencl as cl

from fusec.placement.cost_model import (
    ADD_TRAFFIC,
    DeviceProfile,
    Kind,
    LinearModel,
    Thresholds,
    cpu_estimate,
    fit_linear_model,
)
from fusec.runtime.device import OpenCLDevice
from fusec.runtime.executable import Executable
from fusec.runtime.host_memory import shares_host_memory

CALIBRATION_VERSION = 5
"""2: profiles have `DeviceProfile.elementwise_step`; 3: `call_s` and `transcendental_step`,
and the step is measured with arithmetic alone; 4: the matmul model is fitted to matmuls of
512 to 1024 (`MATMUL_SIZES`), not 32 to 256; 5: f16 elementwise work is measured apart
(`DeviceProfile.half_elementwise`, `half_step`, `half_transcendental_step`)."""
BUILT_IN_DEFAULT = "built-in-default"
LOADED_FROM_CACHE = "loaded-from-cache"
CALIBRATED = "calibrated"

ELEMENT_SIZES = (1 << 12, 1 << 16, 1 << 20, 1 << 22)
MATMUL_SIZES = (512, 768, 1024)
"""Square matmuls the matmul model is fitted to: the sizes of the GEMMs that placement weighs
(512x768x768 to 1024^3 and up). A fit to 32..256 extrapolated a per-flop rate that
under-predicted a 512x768x768 GEMM on a 16-core CPU (PoCL) about 2-3 times (on 2 cores with
Intel's CPU OpenCL it was within about 10%): large products are measured, not extrapolated."""
TRANSFER_BYTES = (1 << 12, 1 << 18, 1 << 22, 1 << 24)
QUICK_ELEMENT_SIZES = (1 << 10, 1 << 14)
QUICK_MATMUL_SIZES = (16, 32)
QUICK_TRANSFER_BYTES = (1 << 10, 1 << 14)
CROSSOVER_GRID = tuple(1 << p for p in range(6, 31, 2))
"""Sizes at which the derived thresholds are looked for (powers of 4, 64 to 2^30)."""

Build = Callable[[str, OpenCLDevice], Executable]
"""Compiles fusec IR text for a device (`fusec.compiler.driver` passes one)."""


class CalibrationError(Exception):
    """Calibration could not measure or store a device; the message is one line."""


@dataclass(frozen=True)
class DeviceIdentity:
    """What a cache file is keyed by."""

    platform: str
    name: str
    driver: str
    type: str

    @classmethod
    def of(cls, device: OpenCLDevice) -> DeviceIdentity:
        d = device.device
        kind = "GPU" if d.type & cl.device_type.GPU else "CPU" if d.type & cl.device_type.CPU \
            else "OTHER"
        return cls(d.platform.name.strip(), d.name.strip(), d.driver_version.strip(), kind)

    def as_dict(self) -> dict[str, str]:
        return {"platform": self.platform, "name": self.name, "driver": self.driver,
                "type": self.type}


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/fusec/offload``, or ``~/.cache/fusec/offload``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fusec" / "offload"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "device"


def cache_file(identity: DeviceIdentity) -> Path:
    name = "-".join(slug(p) for p in (identity.platform, identity.name, identity.driver))
    return cache_dir() / f"{name}.json"


# --- the stored record ----------------------------------------------------------------------


MODEL_FIELDS = ("elementwise", "reduction", "matmul", "upload", "download", "half_elementwise")


def profile_to_json(profile: DeviceProfile) -> dict[str, Any]:
    out: dict[str, Any] = {"launch_s": profile.launch_s,
                           "elementwise_step": profile.elementwise_step,
                           "transcendental_step": profile.transcendental_step,
                           "call_s": profile.call_s,
                           "matmul_slowest_per_flop": profile.matmul_slowest_per_flop,
                           "half_step": profile.half_step,
                           "half_transcendental_step": profile.half_transcendental_step}
    for name in MODEL_FIELDS:
        model = getattr(profile, name)
        out[name] = None if model is None else {"slope": model.slope,
                                                "intercept": model.intercept}
    return out


def profile_from_json(data: object) -> DeviceProfile:
    """A profile from its JSON form; ValueError for anything else."""
    if not isinstance(data, dict):
        raise ValueError("'profile' is not an object")
    models: dict[str, LinearModel | None] = {}
    for name in MODEL_FIELDS:
        entry = data.get(name)
        if entry is None:
            models[name] = None
            continue
        if not isinstance(entry, dict):
            raise ValueError(f"'{name}' is not an object")
        models[name] = LinearModel(_number(entry, "slope"), _number(entry, "intercept"))
    return DeviceProfile(launch_s=_number(data, "launch_s"),
                         elementwise_step=_number(data, "elementwise_step"),
                         transcendental_step=_number(data, "transcendental_step"),
                         call_s=_number(data, "call_s"),
                         matmul_slowest_per_flop=_number(data, "matmul_slowest_per_flop")
                         if "matmul_slowest_per_flop" in data else 0.0,
                         half_step=_number(data, "half_step") if "half_step" in data else 0.0,
                         half_transcendental_step=_number(data, "half_transcendental_step")
                         if "half_transcendental_step" in data else 0.0, **models)


def _number(data: dict[str, Any], key: str) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value < 0:
        raise ValueError(f"'{key}' is not a non-negative number")
    return float(value)


@dataclass(frozen=True)
class CachedProfile:
    profile: DeviceProfile
    path: Path
    duration_ms: float | None


def read_cache(identity: DeviceIdentity) -> tuple[CachedProfile | None, str | None]:
    """The cached profile of a device, or None; and a one-line warning when a file is there
    but cannot be used (unreadable, not JSON, another version, another device, bad fields)."""
    path = cache_file(identity)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as e:
        return None, f"{path}: cannot read the calibration cache ({e}); using defaults"
    try:
        record = json.loads(text)
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        version = record.get("version")
        if version != CALIBRATION_VERSION:
            return None, (f"{path}: calibration cache version {version!r}, expected "
                          f"{CALIBRATION_VERSION}; using defaults (run fusec-calibrate)")
        if record.get("device") != identity.as_dict():
            raise ValueError("it is for another device")
        duration = record.get("duration_ms")
        return CachedProfile(profile_from_json(record.get("profile")), path,
                             float(duration) if isinstance(duration, int | float) else None), None
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        return None, f"{path}: corrupt calibration cache ({e}); using defaults"


def write_cache(identity: DeviceIdentity, profile: DeviceProfile, duration_ms: float) -> Path:
    """Stores a profile atomically (a temporary file in the same folder, then a rename)."""
    path = cache_file(identity)
    record = {"version": CALIBRATION_VERSION, "recorded_at": int(time.time()),
              "device": identity.as_dict(), "duration_ms": duration_ms,
              "profile": profile_to_json(profile)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f, indent=1)
                f.write("\n")
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as e:
        raise CalibrationError(f"{path}: cannot write the calibration cache: "
                               f"{e.strerror or e}") from None
    return path


# --- what compilation uses ------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    """The cost model's inputs for one pair of devices, and where they came from."""

    thresholds: Thresholds
    accelerator: DeviceProfile | None
    base_source: str
    cache_path: str | None
    calibrate_duration_ms: float | None
    previous: Thresholds | None = None
    """The thresholds before calibration (for the report's deltas), where there was one."""
    warnings: tuple[str, ...] = ()
    overrides: dict[str, str] = field(default_factory=dict)


def matmul_rate(profile: DeviceProfile) -> float | None:
    """The host's seconds per matmul flop (the seed's `cpu_matmul_per_flop`, a rate alone):
    the slowest rate among the matmuls measured (`DeviceProfile.matmul_slowest_per_flop`), so
    the host is not estimated faster on a large GEMM than it was on any measured one. A GEMM's
    rate depends on its shape as well as its flops (how many tiles it gives the cores: on the
    H100 machine's 16-core CPU, a 512x768x768 GEMM with its epilogue took 1.24 ms a call, 4.1
    ps a flop, a 1024^3 one 2.5 ms, 2.4 ps a flop); erring toward the accelerator costs little
    near the crossover, where a near tie is measured (`fusec.placement.tie`), and keeping a
    large GEMM on the CPU costs a lot. Without that measurement (a profile of before it): the
    fitted model's time for the largest matmul over its flops, its intercept folded in rather
    than dropped. None without a matmul model. On a loaded machine a load spike during one
    size reads as a slow host: calibrate on a quiet one."""
    if profile.matmul_slowest_per_flop > 0:
        return profile.matmul_slowest_per_flop
    if profile.matmul is None:
        return None
    flops = float(MATMUL_SIZES[-1]) ** 3
    seconds = profile.matmul.estimate(flops)
    return profile.matmul.slope if seconds is None else seconds / flops


def kernel_fixed_seconds(profile: DeviceProfile) -> float:
    """The device time every kernel costs whatever its size: the intercept of the fitted
    elementwise kernel times (0 where there is none). The accelerator's estimates include their
    fits' intercepts (`DeviceProfile.compute`); the host's per-unit costs are slopes, so this
    is what a kernel on the host costs besides them (48.8 us on the H100 machine's 16-core
    PoCL CPU: a program of 64 small kernels is 3.5 ms there, 0.66 ms on the GPU)."""
    if profile.elementwise is None:
        return 0.0
    return max(0.0, profile.elementwise.intercept)


def derive_thresholds(host: DeviceProfile, accelerator: DeviceProfile,
                      base: Thresholds | None = None) -> Thresholds:
    """The seed's calibrated thresholds from two profiles: the host's per-unit costs (its
    fitted slopes, for matmuls `matmul_rate`; its fixed cost per call) and, per kind, the
    smallest size of `CROSSOVER_GRID` from which the accelerator's estimate is below the
    host's (the largest size plus one where it never is)."""
    t = base or Thresholds()
    if host.elementwise:
        t = replace(t, cpu_elem_per_elem=host.elementwise.slope)
    if host.reduction:
        t = replace(t, cpu_reduction_per_elem=host.reduction.slope)
    rate = matmul_rate(host)
    if rate is not None:
        t = replace(t, cpu_matmul_per_flop=rate)
    t = replace(t, cpu_launch_s=host.launch_s + kernel_fixed_seconds(host),
                cpu_step_per_elem=host.elementwise_step,
                cpu_transcendental_per_elem=host.transcendental_step, cpu_call_s=host.call_s)
    if host.half_elementwise is not None:
        t = replace(t, cpu_half_elem_per_elem=host.half_elementwise.slope,
                    cpu_half_step_per_elem=host.half_step,
                    cpu_half_transcendental_per_elem=host.half_transcendental_step)

    def crossover(kind: Kind, default: int) -> int:
        for n in CROSSOVER_GRID:
            flops = n if kind is Kind.MATMUL else 0
            gpu = accelerator.compute(kind, n, flops)
            cpu = cpu_estimate(t, kind, n, flops)
            if gpu is None or cpu is None:
                return default
            if gpu < cpu:
                return n
        return CROSSOVER_GRID[-1] + 1

    elementwise = crossover(Kind.ELEMENTWISE, t.binary_min_elems)
    return replace(t, binary_min_elems=elementwise, unary_min_elems=elementwise,
                   reduction_min_elems=crossover(Kind.REDUCTION, t.reduction_min_elems),
                   matmul_min_flops=crossover(Kind.MATMUL, t.matmul_min_flops))


def load_setup(host: OpenCLDevice, accelerator: OpenCLDevice | None) -> Setup:
    """The thresholds and accelerator profile for placing work on `host` and `accelerator`,
    from their caches where both are there (else the defaults; see the module docstring)."""
    if accelerator is None:
        return Setup(Thresholds(), None, BUILT_IN_DEFAULT, None, None)
    warnings = []
    cached = []
    for device in (host, accelerator):
        entry, warning = read_cache(DeviceIdentity.of(device))
        if warning:
            warnings.append(warning)
        cached.append(entry)
    host_entry, accel_entry = cached
    if host_entry is None or accel_entry is None:
        return Setup(Thresholds(), None, BUILT_IN_DEFAULT, None, None, warnings=tuple(warnings))
    durations = [e.duration_ms for e in cached if e is not None and e.duration_ms is not None]
    return Setup(derive_thresholds(host_entry.profile, accel_entry.profile),
                 accel_entry.profile, LOADED_FROM_CACHE, str(accel_entry.path),
                 sum(durations) if durations else None, previous=Thresholds(),
                 warnings=tuple(warnings))


# --- measuring ------------------------------------------------------------------------------


def elementwise_program(n: int) -> str:
    t = f"tensor<{n}xf32>"
    return (f"func.func @cal_add(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %0 = nn.add %a, %b : {t}, {t} -> {t}\n  func.return %0 : {t}\n}}\n")


HEAVY_STEPS = 8
"""Scalar ops per element of `heavy_program` (one input, one output: traffic 2)."""
HEAVY_TRANSCENDENTALS = 5
"""How many of them are transcendentals (tanh, exp)."""
LIGHT_STEPS = 8
"""Scalar ops per element of `light_program`, arithmetic alone (traffic 2)."""


def light_program(n: int) -> str:
    """A fused elementwise body of `LIGHT_STEPS` arithmetic steps: what one more step of
    arithmetic per element costs (`DeviceProfile.elementwise_step`)."""
    t = f"tensor<{n}xf32>"
    return (f"func.func @cal_light(%a: {t}) -> {t} {{\n"
            f"  %0 = fused.elementwise %a : ({t}) -> {t} {{\n"
            "  ^bb0(%x: f32):\n"
            "    %1 = arith.mulf %x, %x : f32\n    %2 = arith.addf %1, %x : f32\n"
            "    %3 = arith.mulf %2, %x : f32\n    %4 = arith.subf %3, %1 : f32\n"
            "    %5 = arith.mulf %4, %2 : f32\n    %6 = arith.addf %5, %3 : f32\n"
            "    %7 = arith.maximumf %6, %x : f32\n    %8 = arith.mulf %7, %4 : f32\n"
            "    fused.yield %8 : f32\n  }\n"
            f"  func.return %0 : {t}\n}}\n")


def heavy_program(n: int) -> str:
    """A fused elementwise body of `HEAVY_STEPS` steps, `HEAVY_TRANSCENDENTALS` of them
    transcendentals: what one more transcendental per element costs
    (`DeviceProfile.transcendental_step`)."""
    t = f"tensor<{n}xf32>"
    return (f"func.func @cal_heavy(%a: {t}) -> {t} {{\n"
            f"  %0 = fused.elementwise %a : ({t}) -> {t} {{\n"
            "  ^bb0(%x: f32):\n"
            "    %1 = math.tanh %x : f32\n    %2 = math.exp %1 : f32\n"
            "    %3 = arith.mulf %2, %x : f32\n    %4 = math.tanh %3 : f32\n"
            "    %5 = math.exp %4 : f32\n    %6 = arith.addf %5, %x : f32\n"
            "    %7 = math.tanh %6 : f32\n    %8 = arith.mulf %7, %2 : f32\n"
            "    fused.yield %8 : f32\n  }\n"
            f"  func.return %0 : {t}\n}}\n")


def step_seconds(add: LinearModel | None, light: LinearModel | None) -> float:
    """Seconds per element per further step of arithmetic: the light kernel's slope less
    what its traffic (2 elements against the add's 3) costs at the add's rate, over its
    further steps."""
    if add is None or light is None:
        return 0.0
    return max(0.0, (light.slope - add.slope * 2 / ADD_TRAFFIC) / (LIGHT_STEPS - 1))


def transcendental_seconds(add: LinearModel | None, heavy: LinearModel | None,
                           step: float) -> float:
    """Seconds per element per transcendental: the heavy kernel's slope less its traffic at
    the add's rate and its other further steps at `step`, over its transcendentals."""
    if add is None or heavy is None:
        return 0.0
    plain = HEAVY_STEPS - 1 - HEAVY_TRANSCENDENTALS
    return max(0.0, (heavy.slope - add.slope * 2 / ADD_TRAFFIC - plain * step)
               / HEAVY_TRANSCENDENTALS)


def as_half(program: str) -> str:
    """`program` (`elementwise_program`, `light_program` or `heavy_program`) on f16 arrays, as
    fusec compiles f32 work on f16 arrays: each value read converted to f32 (``arith.extf``),
    the same f32 body, the result converted back (``arith.truncf``): `HALF_CONVERSIONS` more
    steps for the one-input bodies, three for the add (two reads, one write)."""
    n = re.search(r"tensor<(\d+)xf32>", program).group(1)  # type: ignore[union-attr]
    t16, t32 = f"tensor<{n}xf16>", f"tensor<{n}xf32>"
    if "nn.add" in program:
        return (f"func.func @cal_half_add(%a: {t16}, %b: {t16}) -> {t16} {{\n"
                f"  %0 = fused.elementwise %a, %b : ({t16}, {t16}) -> {t16} {{\n"
                "  ^bb0(%p: f16, %q: f16):\n"
                "    %x = arith.extf %p : f16 to f32\n    %y = arith.extf %q : f16 to f32\n"
                "    %s = arith.addf %x, %y : f32\n    %r = arith.truncf %s : f32 to f16\n"
                "    fused.yield %r : f16\n  }\n"
                f"  func.return %0 : {t16}\n}}\n")
    body = program.replace(t32, t16).replace("@cal_", "@cal_half_")
    head, rest = body.split("^bb0(%x: f32):\n", 1)
    rest, tail = rest.split("    fused.yield %8 : f32\n", 1)
    return (head + "^bb0(%h: f16):\n    %x = arith.extf %h : f16 to f32\n" + rest
            + "    %r = arith.truncf %8 : f32 to f16\n    fused.yield %r : f16\n" + tail)


HALF_CONVERSIONS = 2
"""Steps `as_half` adds to a one-input body (a read and a write converted)."""


def half_seconds(add: LinearModel | None, light: LinearModel | None,
                 heavy: LinearModel | None) -> tuple[LinearModel | None, float, float]:
    """The f16 kernels' costs from the f16 add (4 steps, traffic 3), light body (`LIGHT_STEPS`
    + 2 steps, traffic 2) and heavy body (`HEAVY_STEPS` + 2, `HEAVY_TRANSCENDENTALS` of them
    transcendentals) as the cost model counts them (`DeviceProfile.compute`): per element of
    the add (the model's `half_elementwise`, the add's intercept), each further step, each
    transcendental: slopes ``a = e + 3 s``, ``l = 2/3 e + (LIGHT_STEPS + 1) s`` and ``h = 2/3 e
    + (HEAVY_STEPS + 1 - HEAVY_TRANSCENDENTALS) s + HEAVY_TRANSCENDENTALS t`` solved for e, s
    and t (none negative). (None, 0, 0) without the add; 0 for what its kernel is missing."""
    if add is None:
        return None, 0.0, 0.0
    step = 0.0
    if light is not None:
        step = max(0.0, (light.slope - add.slope * 2 / ADD_TRAFFIC)
                   / (LIGHT_STEPS + 1 - 2 * 3 / ADD_TRAFFIC))
    per_element = add.slope - 3 * step
    if per_element <= 0:   # the steps cannot be told apart from the add's own work
        per_element, step = add.slope, 0.0
    transcendental = 0.0
    if heavy is not None:
        plain = HEAVY_STEPS + HALF_CONVERSIONS - 1 - HEAVY_TRANSCENDENTALS
        transcendental = max(0.0, (heavy.slope - per_element * 2 / ADD_TRAFFIC - plain * step)
                             / HEAVY_TRANSCENDENTALS)
    return LinearModel(per_element, add.intercept), step, transcendental


def reduction_program(n: int) -> str:
    t = f"tensor<{n}xf32>"
    return (f"func.func @cal_sum(%x: {t}) -> tensor<f32> {{\n"
            f"  %0 = nn.reduce_sum %x {{axes = array<i64: 0>}} : {t} -> tensor<f32>\n"
            f"  func.return %0 : tensor<f32>\n}}\n")


def matmul_program(n: int) -> str:
    t = f"tensor<{n}x{n}xf32>"
    return (f"func.func @cal_mm(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %0 = nn.matmul %a, %b : {t}, {t} -> {t}\n  func.return %0 : {t}\n}}\n")


def median_call(call: Callable[[], float], repeat: int) -> float:
    call()  # warm-up: first-touch, lazy build
    return statistics.median(call() for _ in range(repeat))


def kernel_seconds(exe: Executable, args: Sequence[np.ndarray], repeat: int) -> float:
    return median_call(lambda: exe.profile(*args)[1].kernel_seconds, repeat)


def inputs_for(exe: Executable, rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal(p.spec.shape).astype(p.spec.dtype) for p in exe.call_inputs]


@dataclass(frozen=True)
class Measurement:
    profile: DeviceProfile
    samples: dict[str, list[tuple[float, float]]]
    """Kind -> the (units, seconds) it was fitted to."""
    duration_ms: float


def measure_device(device: OpenCLDevice, build: Build, quick: bool = False,
                   repeat: int = 5) -> Measurement:
    """Measures `device` (see the module docstring); `quick` uses small sizes (tests)."""
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    elements = QUICK_ELEMENT_SIZES if quick else ELEMENT_SIZES
    matmuls = QUICK_MATMUL_SIZES if quick else MATMUL_SIZES
    samples: dict[str, list[tuple[float, float]]] = {
        "elementwise": [], "light": [], "heavy": [], "half_add": [], "half_light": [],
        "half_heavy": [], "reduction": [], "matmul": [], "upload": [], "download": []}
    try:
        launch_s, trivial_call_s = launch_seconds(device, build, repeat)
        for kind, program, sizes, units in (
            ("elementwise", elementwise_program, elements, lambda n: n),
            ("light", light_program, elements, lambda n: n),
            ("heavy", heavy_program, elements, lambda n: n),
            ("half_add", lambda n: as_half(elementwise_program(n)), elements, lambda n: n),
            ("half_light", lambda n: as_half(light_program(n)), elements, lambda n: n),
            ("half_heavy", lambda n: as_half(heavy_program(n)), elements, lambda n: n),
            ("reduction", reduction_program, elements, lambda n: n),
            ("matmul", matmul_program, matmuls, lambda n: n * n * n),
        ):
            for n in sizes:
                exe = build(program(n), device)
                seconds = kernel_seconds(exe, inputs_for(exe, rng), repeat)
                samples[kind].append((float(units(n)), seconds))
        if not shares_host_memory(device.device):
            for size in QUICK_TRANSFER_BYTES if quick else TRANSFER_BYTES:
                up, down = transfer_seconds(device, size, repeat)
                samples["upload"].append((float(size), up))
                samples["download"].append((float(size), down))
    except cl.Error as e:
        raise CalibrationError(f"calibration failed on {device.description}: {e}") from None
    elementwise = fit_linear_model(samples["elementwise"])
    step = step_seconds(elementwise, fit_linear_model(samples["light"]))
    half, half_step, half_transcendental = half_seconds(
        *(fit_linear_model(samples[k]) for k in ("half_add", "half_light", "half_heavy")))
    profile = DeviceProfile(
        elementwise=elementwise,
        elementwise_step=step,
        transcendental_step=transcendental_seconds(
            elementwise, fit_linear_model(samples["heavy"]), step),
        reduction=fit_linear_model(samples["reduction"]),
        matmul=fit_linear_model(samples["matmul"]),
        matmul_slowest_per_flop=max((s / f for f, s in samples["matmul"] if f > 0),
                                    default=0.0),
        upload=fit_transfer(samples["upload"]),
        download=fit_transfer(samples["download"]),
        launch_s=launch_s,
        half_elementwise=half,
        half_step=half_step,
        half_transcendental_step=half_transcendental,
    )
    profile = replace(profile, call_s=call_seconds(profile, trivial_call_s, CHAIN_BYTES))
    return Measurement(profile, samples, (time.perf_counter() - started) * 1e3)


def chain_program(kernels: int, n: int = 64) -> str:
    """`kernels` exps one after the other (each its own kernel: built without fusion)."""
    t = f"tensor<{n}xf32>"
    body = "".join(f"  %v{i + 1} = nn.exp %v{i} : {t} -> {t}\n" for i in range(kernels))
    return f"func.func @cal_chain(%v0: {t}) -> {t} {{\n{body}  func.return %v{kernels} : {t}\n}}\n"


CHAIN_KERNELS = 9
CHAIN_BYTES = 64 * 4
"""Bytes of the input and of the output of `chain_program`."""


def launch_seconds(device: OpenCLDevice, build: Build, repeat: int) -> tuple[float, float]:
    """The host time one more kernel adds to a call: calls of 1 and of `CHAIN_KERNELS` tiny
    kernels, wall time less kernel time, the difference per extra kernel (a call's own fixed
    cost, its wait and copies, cancels out); and the host time of the call of one kernel
    (what a whole call costs besides its kernel time, for `call_seconds`)."""
    rng = np.random.default_rng(0)
    host_times = []
    for kernels in (1, CHAIN_KERNELS):
        exe = build(chain_program(kernels), device)
        args = inputs_for(exe, rng)

        def host_time(exe: Executable = exe, args: list[np.ndarray] = args) -> float:
            _, prof = exe.profile(*args)
            return prof.wall_seconds - prof.kernel_seconds

        host_times.append(median_call(host_time, repeat))
    return max(0.0, (host_times[1] - host_times[0]) / (CHAIN_KERNELS - 1)), host_times[0]


def call_seconds(profile: DeviceProfile, trivial_call_s: float, nbytes: int) -> float:
    """`DeviceProfile.call_s`: the host time of a call of one tiny kernel with one input and
    one output of `nbytes` (`launch_seconds`) less what the model counts apart: the kernel's
    launch and the two transfers' own costs (with their fixed latencies)."""
    return max(0.0, trivial_call_s - profile.launch_s - profile.upload_s(nbytes)
               - profile.download_s(nbytes))


def fit_transfer(samples: Sequence[tuple[float, float]]) -> LinearModel | None:
    """A transfer's model: its fixed latency is the time of the smallest copy measured (a
    least-squares intercept over sizes up to megabytes says little about it), its cost per
    byte the least-squares slope through that latency of the larger ones."""
    if len(samples) < 2:
        return fit_linear_model(samples)
    ordered = sorted(samples)
    latency = ordered[0][1]
    rest = [(x, y - latency) for x, y in ordered[1:] if x > 0]
    sum_xx = sum(x * x for x, _ in rest)
    slope = sum(x * y for x, y in rest) / sum_xx if sum_xx > 0 else 0.0
    return LinearModel(slope, latency) if math.isfinite(slope) and slope > 0 else None


def transfer_seconds(device: OpenCLDevice, size: int, repeat: int) -> tuple[float, float]:
    """Median wall seconds of a blocking host->device and device->host copy of `size` bytes,
    as a call makes them: from the caller's array into a buffer kept from call to call, and
    into a new array (`Executable` returns new arrays: their pages are first touched by the
    copy)."""
    host = np.ones(size, np.uint8)
    buffer = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, size)
    queue = device.queue

    def copy(dst: Any, src: Any) -> float:
        start = time.perf_counter()
        cl.enqueue_copy(queue, dst, src, is_blocking=True)
        return time.perf_counter() - start

    def copy_back() -> float:
        start = time.perf_counter()
        cl.enqueue_copy(queue, np.empty(size, np.uint8), buffer, is_blocking=True)
        return time.perf_counter() - start

    up = median_call(lambda: copy(buffer, host), repeat)
    down = median_call(copy_back, repeat)
    return up, down
