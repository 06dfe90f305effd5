"""``fusec-calibrate``: measure the CPU and GPU OpenCL devices for auto-offload, cache the result.

    fusec-calibrate             # measure each device that has no cache yet
    fusec-calibrate --refresh   # measure again, replacing the caches
    fusec-calibrate --json out.json

For the host (the CPU OpenCL device) and the accelerator (the GPU), it times a call of a tiny
kernel (the fixed cost of a call), an elementwise add, fused bodies of eight arithmetic ops and of
eight ops with transcendentals, a sum and a square matmul (512 to 1024) at a few sizes and (on
the GPU) copies to and from the device, fits a linear model to each
(`fusec.placement.calibration`), and stores them per device under
``$XDG_CACHE_HOME/fusec/offload/``; ``fusec-run --device auto`` and ``fusec.compile`` read
them. It prints the fitted models, the thresholds derived from them and what changed against
the built-in defaults. With one device it calibrates that one and says that nothing can be
placed.

Exit codes: 0 ok, 1 a device could not be measured or the cache not written, 2 bad command
line, 3 no usable OpenCL device, 70 internal error.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from fusec import __version__
from fusec.files import OutputError, atomic_write, check_writable
from fusec.tools.cli import EXIT_INPUT, run_cli

EXIT_DEVICE = 3


def build(text: str, device: object) -> object:
    """Compiles a calibration program for one device."""
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.compiler.driver import load, lower
    from fusec.runtime.executable import Executable

    compiled = lower(load(text, "<calibration>"), None, "none",
                     DeviceInfo.from_device(device.device))  # type: ignore[attr-defined]
    return Executable(compiled.plan, device)  # type: ignore[arg-type]


def describe_profile(profile: object) -> list[str]:
    from fusec.placement.calibration import MODEL_FIELDS

    p: Any = profile
    lines = [f"    call_s: {p.call_s:.3g}", f"    launch_s: {p.launch_s:.3g}",
             f"    elementwise_step: {p.elementwise_step:.3g}",
             f"    transcendental_step: {p.transcendental_step:.3g}",
             f"    matmul_slowest_per_flop: {p.matmul_slowest_per_flop:.3g}",
             f"    half_step: {p.half_step:.3g}",
             f"    half_transcendental_step: {p.half_transcendental_step:.3g}"]
    for name in MODEL_FIELDS:
        model = getattr(profile, name)
        if model is not None:
            lines.append(f"    {name}: {model.intercept:.3g} s + {model.slope:.3g} s/unit")
    return lines


def calibrate(platform: str | None, refresh: bool, quick: bool) -> dict[str, object]:
    from fusec.placement.calibration import (
        CALIBRATED,
        DeviceIdentity,
        derive_thresholds,
        measure_device,
        profile_to_json,
        read_cache,
        write_cache,
    )
    from fusec.placement.cost_model import Thresholds
    from fusec.placement.devices import find_devices
    from fusec.placement.report import delta

    pair = find_devices(platform)
    devices = [(role, d) for role, d in (("host", pair.host), ("accelerator", pair.accelerator))
               if d is not None]
    summary: dict[str, object] = {"devices": {}, "note": pair.note}
    profiles = {}
    for role, device in devices:
        identity = DeviceIdentity.of(device)
        cached, warning = (None, None) if refresh else read_cache(identity)
        if warning:
            click.echo(f"fusec-calibrate: warning: {warning}", err=True)
        if cached is not None:
            profile, path, duration, source = (cached.profile, cached.path, cached.duration_ms,
                                               "loaded-from-cache")
        else:
            click.echo(f"measuring {role}: {device.description} ...", err=True)
            measured = measure_device(device, build, quick=quick)  # type: ignore[arg-type]
            profile, duration, source = measured.profile, measured.duration_ms, CALIBRATED
            path = write_cache(identity, profile, duration)
        profiles[role] = profile
        click.echo(f"{role}: {device.description}\n  {source}: {path}"
                   + (f" ({duration:.0f} ms)" if duration is not None else ""))
        for line in describe_profile(profile):
            click.echo(line)
        summary["devices"][role] = {  # type: ignore[index]
            "device": device.description, "base_source": source, "cache_path": str(path),
            "calibrate_duration_ms": duration, "profile": profile_to_json(profile)}
    if "host" in profiles and "accelerator" in profiles:
        before = Thresholds()
        after = derive_thresholds(profiles["host"], profiles["accelerator"])
        click.echo("thresholds: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else
                                               f"{k}={v}" for k, v in after.as_dict().items()))
        for name, d in delta(before, after).items():
            click.echo(f"  {name}: {d['before']:.3g} -> {d['after']:.3g}")
        summary["thresholds"] = after.as_dict()
        summary["calibration"] = {"previous": before.as_dict(), "delta": delta(before, after)}
    else:
        click.echo(f"note: {pair.note}; placement needs a CPU and a GPU device")
    return summary


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--refresh", is_flag=True, help="Measure again even where a cache exists.")
@click.option("--platform", metavar="NAME", help="Only accelerators on platforms matching NAME.")
@click.option("--quick", is_flag=True, help="Small sizes only (a rough, fast calibration).")
@click.option("--json", "json_out", metavar="FILE", help="Also write the summary as JSON.")
@click.version_option(__version__, prog_name="fusec-calibrate")
def cli(refresh: bool, platform: str | None, quick: bool, json_out: str | None) -> None:
    """Measure the OpenCL devices for CPU/GPU auto-offload and cache the cost models."""
    from fusec.placement.calibration import CalibrationError
    from fusec.runtime.errors import DeviceError, FusecRuntimeError

    check_writable(json_out)  # before measuring, not after (an OutputError: run_cli's exit 1)
    try:
        summary = calibrate(platform, refresh, quick)
    except DeviceError as e:
        fail(f"fusec-calibrate: error: {e}", EXIT_DEVICE)
        return
    except (CalibrationError, FusecRuntimeError) as e:
        fail(f"fusec-calibrate: error: {e}", EXIT_INPUT)
        return
    if json_out:
        try:
            atomic_write(json_out, json.dumps(summary, indent=1) + "\n")
        except OutputError as e:
            fail(str(e), EXIT_INPUT)


def fail(message: str, code: int) -> None:
    click.echo(message, err=True)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    return run_cli(cli, "fusec-calibrate", argv)


if __name__ == "__main__":
    sys.exit(main())
