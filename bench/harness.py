"""Running one workload through fusec and its peers: check first, then time.

Every runner is prepared (compiled), run once, and each output compared with the reference
(``fusec.reference.executor.run_function``, which computes in float64 and rounds to float32) by
``||out - ref|| / ||ref||``. A runner that disagrees is marked ``wrong`` and never timed (the
command exits non-zero). Those that agree are then timed together, interleaved
(`fusec.bench.timing`): in turns of `Settings.block` calls in a row, in an order where each
runner follows each other one equally often (``balanced``), so that no runner alone pays for
following a particular other one (a CPU runtime's worker threads wake up slower after a GPU
call; see `fusec.bench.timing`).
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fusec.bench import fusec_runner
from fusec.dtypes import host_as_float
from fusec.bench.graph import Graph, Unsupported, parse
from fusec.bench.peers import Peer, Prepared, TorchPeer, Unavailable, first_line
from fusec.bench.timing import BLOCK, Timing, interleaved, wall_call
from fusec.bench.workloads import Workload

OK, NA, WRONG, FAILED = "ok", "n/a", "wrong", "failed"


@dataclass
class RunnerResult:
    name: str
    status: str
    reason: str = ""
    error: float | None = None
    """Largest ``||out - ref|| / ||ref||`` over the outputs."""
    wall: Timing | None = None
    device: Timing | None = None
    """Kernel time (profiling events; CUDA events for PyTorch), where the runner has it."""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class WorkloadResult:
    workload: Workload
    graph: Graph
    runners: list[RunnerResult] = field(default_factory=list)

    def runner(self, name: str) -> RunnerResult | None:
        return next((r for r in self.runners if r.name == name), None)


@dataclass(frozen=True)
class Settings:
    device: str = "cpu"
    repeat: int = 5
    warmup: int = 2
    pipeline: str = "default"
    seed: int = 0
    input_alignment: int | None = 4096
    """Bytes the inputs' data is aligned to (None: as numpy allocates, 16 for large arrays).
    The same arrays go to every runner; fusec uses an aligned input in place on the CPU."""
    fusec_arrays: str = "numpy"
    """How fusec gets its inputs: "numpy" (host arrays in, host arrays out, one wait per
    call) or "device" (device arrays made once, as the torch peers' tensors are: a call
    enqueues, returns device arrays and is timed up to `synchronize`)."""
    block: int = BLOCK
    """Calls of one runner in a row, per turn of the interleaved timing."""
    balanced: bool = True
    """Turns in `fusec.bench.timing.turn_order` (each runner after each other one equally
    often); False: always in the order of the runners (fusec first, then the peers)."""


def reference_outputs(text: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    from fusec.compiler.context import make_context
    from fusec.compiler.diagnostics import Source, parse_module
    from fusec.reference.executor import run_function

    module = parse_module(make_context(), Source(text, "<workload>"))
    return [np.asarray(r) for r in run_function(module, list(inputs))]


def relative_error(out: np.ndarray, ref: np.ndarray) -> float:
    """``||out - ref|| / ||ref||`` in float64; inf for a wrong shape or a non-finite value."""
    out, ref = np.asarray(out), np.asarray(ref)
    if out.shape != ref.shape:
        return float("inf")
    o, r = host_as_float(out).astype(np.float64), host_as_float(ref).astype(np.float64)
    if not np.all(np.isfinite(o)):
        return float("inf")
    scale = float(np.linalg.norm(r))
    return float(np.linalg.norm(o - r)) / (scale if scale > 0 else 1.0)


def check(outputs: list[np.ndarray], reference: list[np.ndarray]) -> float:
    if len(outputs) != len(reference):
        return float("inf")
    return max(relative_error(o, r) for o, r in zip(outputs, reference, strict=True))


@dataclass
class Ready:
    """A runner that compiled and agreed with the reference: the next step is timing it."""

    name: str
    prepared: Prepared
    error: float


def prepare_and_check(
    name: str,
    prepare: Callable[[], Prepared],
    reference: list[np.ndarray],
    workload: Workload,
    loud: bool,
) -> Ready | RunnerResult:
    """Prepares and checks one runner: Ready, or its final (untimed) result. `loud` runners
    (fusec) report any exception as ``failed``; for a peer, an exception while preparing means
    it cannot run this program (``n/a``)."""
    try:
        prepared = prepare()
    except (Unavailable, Unsupported) as reason:
        return RunnerResult(name, NA, str(reason))
    except Exception as error:  # noqa: BLE001 - reported in the table, not raised
        return RunnerResult(name, FAILED if loud else NA, first_line(error))
    try:
        error = check(prepared.outputs(), reference)
    except Exception as failure:  # noqa: BLE001
        return RunnerResult(name, FAILED, first_line(failure))
    if not error <= workload.tolerance:
        return RunnerResult(name, WRONG, f"relative error {error:.3g} > {workload.tolerance:g}",
                            error=error)
    return Ready(name, prepared, error)


def time_all(ready: list[Ready], settings: Settings) -> list[RunnerResult]:
    """Wall times of every ready runner, interleaved; then device times, likewise."""
    walls = interleaved([lambda r=r: wall_call(r.prepared.call) for r in ready],
                        settings.warmup, settings.repeat, block=settings.block,
                        balanced=settings.balanced)
    timed = [r for r in ready if r.prepared.device_call is not None]
    device_calls = [r.prepared.device_call for r in timed if r.prepared.device_call]
    devices = dict(zip([r.name for r in timed], interleaved(
        device_calls, 0, settings.repeat, block=settings.block, balanced=settings.balanced),
        strict=True))
    return [RunnerResult(r.name, OK, error=r.error, wall=wall, device=devices.get(r.name),
                         details=r.prepared.details)
            for r, wall in zip(ready, walls, strict=True)]


def run_workload(workload: Workload, peers: Sequence[Peer], settings: Settings,
                 with_fusec: bool = True) -> WorkloadResult:
    """Checks every runner against the reference, then times those that agree, interleaved."""
    graph = dataclasses.replace(parse(workload.text, workload.name),
                                params=frozenset(workload.params))
    inputs = workload.inputs([t.name for t in graph.inputs], [t.shape for t in graph.inputs],
                             settings.seed, settings.input_alignment)
    params = {t.name: a for t, a in zip(graph.inputs, inputs, strict=True)
              if t.name in graph.params}
    reference = reference_outputs(workload.text, inputs)
    outcomes: list[Ready | RunnerResult] = []
    if with_fusec:
        outcomes.append(prepare_and_check(
            fusec_runner.NAME,
            lambda: fusec_runner.prepare(workload.text, inputs, settings.device,
                                         workload.pipeline or settings.pipeline, params,
                                         settings.fusec_arrays, workload.launch_fusion,
                                         allow_tf32=workload.tf32),
            reference, workload, loud=True))
    for peer in peers:
        outcomes.append(prepare_and_check(
            peer.name, lambda peer=peer: peer.prepare(
                graph, inputs, settings.device,
                **({"allow_tf32": True} if workload.tf32 and isinstance(peer, TorchPeer)
                   else {})),
            reference, workload, loud=False))
    ready = [o for o in outcomes if isinstance(o, Ready)]
    timed = {r.name: r for r in time_all(ready, settings)}
    result = WorkloadResult(workload, graph)
    result.runners = [timed[o.name] if isinstance(o, Ready) else o for o in outcomes]
    del ready, outcomes
    gc.collect()
    return result
