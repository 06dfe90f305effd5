"""fusec as a benchmark runner: ``fusec.compile`` once, then time calls of the executable.

The time of fusec is the wall time of one call of the compiled executable, its wait for the
device included: with numpy arrays (``arrays="numpy"``: inputs moved in and outputs out in every
call), or with device arrays made once before timing (``arrays="device"``, as the torch peers'
tensors are: the call enqueues its kernels and returns device arrays, then ``synchronize``
waits; the outputs are read back only for the check). Where the executable reports the kernel
time of its last call from OpenCL profiling events, that is reported beside it.

If ``fusec.compile`` does not exist (the backend is not in this checkout), the runner is
unavailable and the table says so: no numbers are made up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fusec.bench.peers import Prepared, Unavailable

NAME = "fusec"


def as_arrays(result: Any) -> list[np.ndarray]:
    """The outputs of one call as a list (an executable may return one array or several)."""
    if isinstance(result, np.ndarray):
        return [result]
    if isinstance(result, dict):
        return [np.asarray(v) for v in result.values()]
    return [np.asarray(v) for v in result]  # a device array's __array__ reads it back


def compile_function() -> Any:
    import fusec

    fn = getattr(fusec, "compile", None)
    if fn is None:
        raise Unavailable("fusec.compile unavailable")
    return fn


ARRAYS = ("numpy", "device")
"""How fusec's inputs and outputs are held (see the module docstring)."""


def prepare(text: str, inputs: Sequence[np.ndarray], device: str, pipeline: str,
            params: Mapping[str, np.ndarray] | None = None, arrays: str = "numpy",
            launch_fusion: bool = True, allow_tf32: bool = False) -> Prepared:
    """Compiles `text` for `device` and returns its timed call. `params` (input name ->
    array, `Workload.params`) are bound to the device once; `inputs` are every input in order,
    and a call passes those not in `params`, as numpy arrays or device arrays (`arrays`).
    `launch_fusion=False` keeps one launch per kernel (``fuse-launches`` off)."""
    params = dict(params or {})
    options: dict[str, bool] = {} if launch_fusion else {"launch_fusion": False}
    if allow_tf32:
        options["allow_tf32"] = True
    executable = compile_function()(text, pipeline=pipeline, device=device, params=params,
                                    **options)
    args: list[Any] = [a for a, spec in zip(inputs, executable.plan.inputs, strict=True)
                       if spec.name not in params]
    details = describe(executable)
    if arrays == "device":
        args = [executable.to_device(a) for a in args]
        details["arrays"] = "device"

        def call() -> None:
            executable(*args)
            executable.synchronize()
    else:
        def call() -> list[np.ndarray]:
            return executable(*args)
    device_call = None
    if hasattr(executable, "profile"):
        def device_call() -> float:
            return executable.profile(*args)[1].kernel_seconds * 1e3
    return Prepared(
        call=call,
        outputs=lambda: as_arrays(executable(*args)),
        device_call=device_call,
        details=details,
    )


def describe(executable: Any) -> dict[str, Any]:
    """The number of kernels per call and the device, where the executable tells them."""
    details: dict[str, Any] = {}
    launches = getattr(getattr(executable, "plan", None), "launches", None)
    if launches is not None:
        details["kernels"] = len(launches)
    device = getattr(getattr(executable, "device", None), "description", None)
    if device:
        details["device"] = device
    return details
