"""The auto-offload cost model (seed 004): thresholds, per-unit costs, fitted linear models.

A unit of work (a kernel and its fused group, `fusec.placement.work.Work`) is placed on the host
device (a CPU OpenCL device) or on the accelerator (a GPU) by these rules, in this order:

1. **residency**: an elementwise unit with an input that lives on the accelerator (made there
   by an earlier unit) stays there;
2. **fusion-override**: a fused elementwise or reduction group whose result feeds a unit on the
   accelerator goes there too, keeping the chain resident (`fusec.placement.decide` applies it
   once the other units are placed);
3. **small-batch-guard**: an elementwise unit with a small leading batch
   (``<= small_batch_max_dim``) but many elements (``>= small_batch_min_elems``) stays on the
   host;
4. **profile-model**: where the accelerator was calibrated, its fitted linear model estimates the
   unit's time there; the accelerator wins when ``0.95 x`` that estimate is below the host's
   (per-unit costs ``cpu_*``); the inputs that must cross to the device that would run the unit
   are part of each side's estimate, and so is a call's fixed cost on a device where the unit
   opens a new piece there (`DeviceProfile.call_s`, `Thresholds.cpu_call_s`); elementwise
   work scales with the elements it reads and writes and with its scalar ops, transcendentals
   apart from arithmetic (a fused body of many steps costs more than an add); elementwise work
   on f16 arrays has costs of its own where calibrated (`half_costs`). A split whose
   whole call the model estimates dearer than one device's is undone
   (`fusec.placement.decide.unsplit`);
5. **threshold**: otherwise the unit goes to the accelerator when its elements (or matmul flops)
   reach the kind's threshold.

With one device there is nothing to decide: every unit gets reason **disabled**.

The defaults are the seed's. Calibration (`fusec.placement.calibration`) replaces the per-unit
costs and thresholds with measured ones; `Thresholds.with_overrides` applies ``NAME=VALUE``
overrides given on the command line or to ``fusec.compile``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

DEFAULT_CPU_ELEM_PER_ELEM = 1.0e-7
"""Seconds per element of elementwise work on the host, before calibration."""
DEFAULT_CPU_REDUCTION_PER_ELEM = 1.2e-7
"""Seconds per reduced element on the host, before calibration."""
DEFAULT_CPU_MATMUL_PER_FLOP = 2.5e-11
"""Seconds per matmul flop (``m*k*n``) on the host, before calibration."""
SMALL_BATCH_DEFAULT_MAX_DIM = 8
SMALL_BATCH_DEFAULT_MIN_ELEMS = 1_048_576
ADD_TRAFFIC = 3.0
"""Elements read and written per element by ``a + b``, the kernel the per-element costs of
elementwise work are measured with."""
SUM_TRAFFIC = 1.0
"""Likewise for a sum (it reads each element once), the reductions' kernel."""


def half_costs(kind: Kind, half: bool) -> bool:
    """Whether a unit is costed at the f16 kernels' rates: elementwise work (unary or not) that
    reads or writes f16 arrays. fusec emits such kernels one element per work item (it prints
    no vectors of 16-bit types) and converts every value to and from f32, where it emits f32
    kernels 16 lanes wide: on the H200 machine's 16-core CPU (PoCL) the f16 ``cast_chain``
    (a tanh GELU times a gain over 4096x4096) took 64.6 ms, its f32 costs estimated 4.8 ms.
    Calibration measures f16 kernels of its own (`fusec.placement.calibration.half_seconds`);
    without them (0), f16 work is costed as f32 work."""
    return half and kind in (Kind.UNARY, Kind.ELEMENTWISE)


def reference_traffic(kind: Kind) -> float:
    return SUM_TRAFFIC if kind is Kind.REDUCTION else ADD_TRAFFIC


def scaled_units(kind: Kind, elements: int, flops: int, traffic: float | None) -> float:
    """The units a per-unit cost multiplies: flops for a matmul, else the elements scaled by
    the unit's traffic against its kind's calibration kernel (None: the same traffic)."""
    if kind is Kind.MATMUL:
        return float(flops)
    return elements * (1.0 if traffic is None else traffic / reference_traffic(kind))
GPU_ADVANTAGE = 0.95
"""The accelerator's estimate is scaled by this before the comparison (the seed's 0.95)."""


class OffloadOptionError(ValueError):
    """A bad ``NAME=VALUE`` threshold override: unknown name or a value of the wrong kind."""


class Reason(str, Enum):
    """Why a unit was placed where it was (the report spells these)."""

    RESIDENCY = "residency"
    FUSION_OVERRIDE = "fusion-override"
    SMALL_BATCH_GUARD = "small-batch-guard"
    PROFILE_MODEL = "profile-model"
    THRESHOLD = "threshold"
    DISABLED = "disabled"


class Kind(str, Enum):
    """What a unit's cost grows with."""

    UNARY = "unary"
    """One input, data movement or a pointwise function (transpose, narrow, ...)."""
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    MATMUL = "matmul"


@dataclass(frozen=True)
class Thresholds:
    """The seed's `ThresholdConfig`: when the accelerator is worth it, and what the host costs."""

    unary_min_elems: int = 4_096
    binary_min_elems: int = 4_096
    reduction_min_elems: int = 256
    matmul_min_flops: int = 1_000_000
    cpu_elem_per_elem: float = DEFAULT_CPU_ELEM_PER_ELEM
    cpu_reduction_per_elem: float = DEFAULT_CPU_REDUCTION_PER_ELEM
    cpu_matmul_per_flop: float = DEFAULT_CPU_MATMUL_PER_FLOP
    small_batch_max_dim: int = SMALL_BATCH_DEFAULT_MAX_DIM
    small_batch_min_elems: int = SMALL_BATCH_DEFAULT_MIN_ELEMS
    cpu_launch_s: float = 0.0
    """Seconds every kernel costs on the host device besides its per-unit work: the host time
    of its launch plus its fixed device time (`calibration.kernel_fixed_seconds`); 0 until
    calibrated."""
    cpu_step_per_elem: float = 0.0
    """Host seconds per element for each scalar op of a unit's body after the first (an
    elementwise body, or a norm's or softmax's arithmetic); 0 until calibrated."""
    cpu_transcendental_per_elem: float = 0.0
    """Host seconds per element for each transcendental of a unit's body (exp, tanh, ...),
    in place of `cpu_step_per_elem`; 0 (until calibrated): they cost a step."""
    cpu_call_s: float = 0.0
    """Host seconds a call on the host device costs besides its kernels (checking, wrapping
    the arrays, the wait); paid once per piece of a program run there. 0 until calibrated."""
    cpu_half_elem_per_elem: float = 0.0
    """`cpu_elem_per_elem` for elementwise work on f16 arrays (`half_costs`); 0 (until
    calibrated): that of f32 work."""
    cpu_half_step_per_elem: float = 0.0
    """`cpu_step_per_elem` for elementwise work on f16 arrays; used with
    `cpu_half_elem_per_elem`."""
    cpu_half_transcendental_per_elem: float = 0.0
    """`cpu_transcendental_per_elem` for elementwise work on f16 arrays; used with
    `cpu_half_elem_per_elem`."""
    tie_margin: float = 0.25
    """Where the model's seconds for a whole call of the chosen placement and of the best
    other one (all on the host, all on the accelerator) are within this fraction of each
    other, the auto executable measures both on its first calls and keeps the faster
    (`fusec.placement.tie`); 0 turns measuring off."""
    tie_trials: int = 3
    """Timed calls of each candidate while measuring a near tie (each after an untimed one:
    ``4 x tie_trials`` calls in all); 0 turns measuring off."""

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    def as_dict(self) -> dict[str, float | int]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> Thresholds:
        """Thresholds from a stored mapping; every value must parse as its field's type."""
        return cls().with_overrides({k: str(v) for k, v in values.items()})

    def with_overrides(self, overrides: Mapping[str, str | int | float]) -> Thresholds:
        """A copy with ``name -> value`` replaced; OffloadOptionError for an unknown name or a
        value that is not a non-negative number of the field's type."""
        fields = {f.name: f for f in dataclasses.fields(self)}
        changes: dict[str, float | int] = {}
        for name, raw in overrides.items():
            if name not in fields:
                raise OffloadOptionError(
                    f"unknown offload threshold '{name}' (known: {', '.join(fields)})")
            changes[name] = _parse_value(name, raw, fields[name].type == "int")
        return dataclasses.replace(self, **changes)


def _parse_value(name: str, raw: str | int | float, integer: bool) -> float | int:
    text = str(raw).strip()
    try:
        value: float | int = int(text) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise OffloadOptionError(
            f"offload threshold '{name}' must be {kind}, got '{raw}'") from None
    if not math.isfinite(value) or value < 0:
        raise OffloadOptionError(
            f"offload threshold '{name}' must be finite and non-negative, got '{raw}'")
    return value


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    """``["small_batch_max_dim=4", ...]`` -> ``{"small_batch_max_dim": "4"}``, checked against
    `Thresholds` (OffloadOptionError names the bad item)."""
    parsed: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise OffloadOptionError(f"offload threshold '{item}' is not NAME=VALUE")
        if name.strip() in parsed:  # the last one would win, silently
            raise OffloadOptionError(f"offload threshold '{name.strip()}' is given twice")
        parsed[name.strip()] = value.strip()
    Thresholds().with_overrides(parsed)
    return parsed


@dataclass(frozen=True)
class LinearModel:
    """``seconds = intercept + slope * units``."""

    slope: float
    intercept: float = 0.0

    def estimate(self, units: float) -> float | None:
        """Seconds for `units`, or None where the model cannot say (the seed's guard: a slope
        that is not a positive finite number, or a total that is not positive)."""
        if not math.isfinite(self.slope) or self.slope <= 0.0:
            return None
        total = self.intercept + self.slope * units
        return total if math.isfinite(total) and total > 0.0 else None


def fit_linear_model(samples: Sequence[tuple[float, float]]) -> LinearModel | None:
    """Least squares over ``(units, seconds)`` samples, as the seed fits its profiles: one
    sample gives a line through the origin; a negative intercept is clamped to 0; no samples,
    equal units or a slope that is not positive give None."""
    if not samples:
        return None
    if len(samples) == 1:
        x, y = samples[0]
        return LinearModel(max(y / x, 0.0), 0.0) if x > 0 else None
    n = float(len(samples))
    sum_x = sum(x for x, _ in samples)
    sum_y = sum(y for _, y in samples)
    sum_xx = sum(x * x for x, _ in samples)
    sum_xy = sum(x * y for x, y in samples)
    denom = n * sum_xx - sum_x * sum_x
    if abs(denom) < 1e-300 or denom <= 0:
        return None
    slope = (n * sum_xy - sum_x * sum_y) / denom
    if not math.isfinite(slope) or slope <= 0.0:
        return None
    intercept = max(sum_y / n - slope * sum_x / n, 0.0)
    return LinearModel(slope, intercept)


@dataclass(frozen=True)
class DeviceProfile:
    """One device's measured costs (what calibration stores per device)."""

    elementwise: LinearModel | None = None
    """Seconds vs elements."""
    reduction: LinearModel | None = None
    """Seconds vs reduced elements."""
    matmul: LinearModel | None = None
    """Seconds vs flops (``m*k*n``)."""
    upload: LinearModel | None = None
    """Seconds vs bytes, host array -> device; None where the device reads host memory in
    place (a CPU device)."""
    download: LinearModel | None = None
    """Seconds vs bytes, device -> host array; None where the device writes host memory."""
    launch_s: float = 0.0
    """Host seconds one more kernel adds to a call (enqueueing it), besides its own time."""
    elementwise_step: float = 0.0
    """Seconds per element for each scalar op of an elementwise body after the first."""
    transcendental_step: float = 0.0
    """Seconds per element for each transcendental op (exp, tanh, ...) of a body, in place of
    `elementwise_step`; 0 where not measured (they then cost a step)."""
    call_s: float = 0.0
    """Host seconds a call on this device costs besides its kernels and its transfers' own
    costs (checking, the enqueues, the wait for the device): paid once per piece of a program
    run there (a placement that splits a program pays it for every piece)."""
    matmul_slowest_per_flop: float = 0.0
    """The most seconds per flop among the matmuls calibration measured (0: not measured):
    the host's per-flop cost (`fusec.placement.calibration.matmul_rate`)."""
    half_elementwise: LinearModel | None = None
    """`elementwise` for elementwise work on f16 arrays (`half_costs`); None where not
    measured (f16 work is then costed as f32 work)."""
    half_step: float = 0.0
    """`elementwise_step` for elementwise work on f16 arrays; used with `half_elementwise`."""
    half_transcendental_step: float = 0.0
    """`transcendental_step` for elementwise work on f16 arrays; used with
    `half_elementwise`."""

    def steps_s(self, elements: int, steps: int, transcendentals: int) -> float:
        return body_seconds(self.elementwise_step, self.transcendental_step, elements, steps,
                            transcendentals)

    def compute(self, kind: Kind, elements: int, flops: int, traffic: float | None = None,
                steps: int = 1, transcendentals: int = 0, half: bool = False) -> float | None:
        """Estimated seconds of a unit's work (a kernel launch plus its kernel time, without
        transfers); None without a model for its kind. Elementwise and reduction work is the
        calibrated add's (or sum's) per element, scaled by the unit's traffic, plus
        `elementwise_step` per element for each further scalar step; elementwise work on f16
        arrays (`half`) at the f16 kernels' rates where they were measured."""
        if half_costs(kind, half) and self.half_elementwise is not None:
            seconds = self.half_elementwise.estimate(scaled_units(kind, elements, flops, traffic))
            if seconds is None:
                return None
            return self.launch_s + seconds + body_seconds(
                self.half_step, self.half_transcendental_step, elements, steps, transcendentals)
        model = {Kind.MATMUL: self.matmul, Kind.REDUCTION: self.reduction}.get(
            kind, self.elementwise)
        seconds = model.estimate(scaled_units(kind, elements, flops, traffic)) if model else None
        if seconds is None:
            return None
        if kind is not Kind.MATMUL:
            seconds += self.steps_s(elements, steps, transcendentals)
        return self.launch_s + seconds

    def upload_s(self, nbytes: int) -> float:
        return (self.upload.estimate(nbytes) or 0.0) if self.upload and nbytes else 0.0

    def download_s(self, nbytes: int) -> float:
        return (self.download.estimate(nbytes) or 0.0) if self.download and nbytes else 0.0


def body_seconds(step: float, transcendental: float, elements: int, steps: int,
                 transcendentals: int) -> float:
    """Seconds of a body's further steps: each transcendental at `transcendental` per element
    and each other step after the first at `step`; where `transcendental` is 0 (not
    measured), every step after the first at `step`."""
    if transcendental <= 0:
        return elements * step * max(0, steps - 1)
    plain = max(0, steps - 1 - transcendentals)
    return elements * (step * plain + transcendental * transcendentals)


def cpu_estimate(thresholds: Thresholds, kind: Kind, elements: int, flops: int,
                 traffic: float | None = None, steps: int = 1,
                 transcendentals: int = 0, half: bool = False) -> float | None:
    """The host's seconds for a unit: its per-unit cost times the units (the seed's
    `cpu_estimate`, None for a per-unit cost that is not a positive number) plus a launch (0
    until calibrated); units scale with their traffic and further steps as in
    `DeviceProfile.compute`, f16 elementwise work (`half`) likewise at its own costs where
    calibrated."""
    per_unit = {Kind.MATMUL: thresholds.cpu_matmul_per_flop,
                Kind.REDUCTION: thresholds.cpu_reduction_per_elem}.get(
                    kind, thresholds.cpu_elem_per_elem)
    step, transcendental = thresholds.cpu_step_per_elem, thresholds.cpu_transcendental_per_elem
    if half_costs(kind, half) and thresholds.cpu_half_elem_per_elem > 0:
        per_unit = thresholds.cpu_half_elem_per_elem
        step = thresholds.cpu_half_step_per_elem
        transcendental = thresholds.cpu_half_transcendental_per_elem
    if not (math.isfinite(per_unit) and per_unit > 0.0):
        return None
    extra = 0.0
    if kind is not Kind.MATMUL:
        extra = body_seconds(step, transcendental, elements, steps, transcendentals)
    return (thresholds.cpu_launch_s + per_unit * scaled_units(kind, elements, flops, traffic)
            + extra)


def threshold_for(thresholds: Thresholds, kind: Kind) -> int:
    """The element (or flop) count from which the threshold rule picks the accelerator."""
    return {
        Kind.UNARY: thresholds.unary_min_elems,
        Kind.ELEMENTWISE: thresholds.binary_min_elems,
        Kind.REDUCTION: thresholds.reduction_min_elems,
        Kind.MATMUL: thresholds.matmul_min_flops,
    }[kind]


def small_batch_guard(thresholds: Thresholds, elements: int, batch: int | None) -> bool:
    """The seed's guard: a small batch (``1..small_batch_max_dim``) over many elements
    (``>= small_batch_min_elems``) stays on the host; a 0 in either setting turns it off."""
    if not batch:
        return False
    return (thresholds.small_batch_max_dim > 0 and thresholds.small_batch_min_elems > 0
            and batch <= thresholds.small_batch_max_dim
            and elements >= thresholds.small_batch_min_elems)


@dataclass(frozen=True)
class Evaluation:
    """One rule's verdict on a unit, with the estimates it saw (seconds, None if unknown)."""

    accelerate: bool
    reason: Reason
    cpu_s: float | None
    gpu_s: float | None
    threshold: int | None


def evaluate(
    thresholds: Thresholds,
    accelerator: DeviceProfile | None,
    kind: Kind,
    elements: int,
    flops: int,
    batch: int | None,
    input_on_accelerator: bool,
    to_host_s: float = 0.0,
    to_accelerator_s: float = 0.0,
    traffic: float | None = None,
    steps: int = 1,
    transcendentals: int = 0,
    half: bool = False,
) -> Evaluation:
    """Rules 1, 3, 4 and 5 of the module docstring for one unit (rule 2 looks at the units
    after it, so `fusec.placement.decide` applies it). `to_host_s` and `to_accelerator_s` are
    what running the unit on each device costs besides its work: the transfers its inputs
    need to get there, and the fixed cost of a call where it opens a new piece there."""
    threshold = threshold_for(thresholds, kind)
    cpu = cpu_estimate(thresholds, kind, elements, flops, traffic, steps, transcendentals, half)
    cpu_total = None if cpu is None else cpu + to_host_s
    pointwise = kind in (Kind.UNARY, Kind.ELEMENTWISE)
    if pointwise and input_on_accelerator:
        return Evaluation(True, Reason.RESIDENCY, cpu_total, None, threshold)
    if pointwise and small_batch_guard(thresholds, elements, batch):
        return Evaluation(False, Reason.SMALL_BATCH_GUARD, cpu_total, None, threshold)
    gpu = (accelerator.compute(kind, elements, flops, traffic, steps, transcendentals, half)
           if accelerator else None)
    if gpu is not None:
        gpu_total = gpu + to_accelerator_s
        cpu_cmp = math.inf if cpu_total is None else cpu_total
        return Evaluation(gpu_total * GPU_ADVANTAGE < cpu_cmp, Reason.PROFILE_MODEL, cpu_total,
                          gpu_total, threshold)
    units = flops if kind is Kind.MATMUL else elements
    return Evaluation(units >= threshold, Reason.THRESHOLD, cpu_total, None, threshold)
