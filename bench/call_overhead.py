"""Where the wall time of a short call goes on a CPU OpenCL device: ``python -m
fusec.bench.call_overhead [-w WORKLOAD ...] [--calls N]``.

fusec-bench's CPU wall time is one call of the executable with numpy arrays, its wait
included; its kernel time comes from OpenCL profiling events of other calls. For kernels of
tens of microseconds the difference is a fixed cost per call. This prints it taken apart:

- the floor, through raw PyOpenCL on fusec's own context and in-order queue: an empty kernel
  enqueued and waited for by ``queue.finish()``, by ``event.wait()`` and by polling the event's
  status; the same on the profiling queue; making a ``CL_MEM_USE_HOST_PTR`` buffer (and
  dropping it), ``set_arg``;
- per workload (``trivial``: one kernel on 16 floats, all overhead): the call's wall time
  and its kernel time (medians, calls and profiled calls in alternating blocks), each step of
  `Executable.run` on a host-memory device timed on its own (checking the arguments, buffers
  over the inputs, output arrays, enqueueing the launches, what `collect` enqueues, the wait,
  the outputs handed back), and the workload's own launches enqueued with their arguments
  already set and waited for: what a call costs with no Python of fusec's around it.

With ``--index-check``, what the check of gather indices costs a call (`fusec.runtime
.index_errors`): an embedding lookup called with numpy arrays, with its record read after the
wait and with that read taken out (blocks alternated), the read alone, and a call with device
arrays with and without its bookkeeping (it adds no wait).

With ``--busy-us N`` the host spins N microseconds before every timed call (and every
profiled one), outside the timing, standing in for the peer that fusec-bench runs between two
calls of fusec: the OpenCL runtime's worker threads go to sleep meanwhile, and the call pays to
wake them, as in fusec-bench and in a user's program that does other work between calls.

Medians of ``--calls`` calls each (perf_counter_ns). On a shared machine run it when the load is
low and compare within one run; the machine's load average is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np
import pyopencl as cl

from fusec.bench.graph import parse
from fusec.bench.workloads import Workload, all_workloads, elementwise_chain
from fusec.runtime.executable import CallState, Executable
from fusec.runtime.host_memory import aligned_empty, use_host_buffer

TRIVIAL = Workload("trivial", "relu((a + b) * c) of 16 floats: a call's fixed cost",
                   elementwise_chain(16).text())
"""Not a fusec-bench workload: one kernel of next to no work, so its call is all overhead."""

DEFAULT_WORKLOADS = ("trivial", "residual_rmsnorm", "residual_layernorm", "row_layernorm",
                     "softmax")

EMPTY_SOURCE = "__kernel void empty(__global float *x) { }\n"


def spin(us: float) -> None:
    """Keeps this thread busy for `us` microseconds (nothing when 0)."""
    end = time.perf_counter_ns() + int(us * 1e3)
    while time.perf_counter_ns() < end:
        pass


def median_us(call: Callable[[], object], calls: int, warmup: int = 20,
              busy_us: float = 0.0) -> float:
    """Median wall time of `call` in microseconds, each call after `spin` (`busy_us`)."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(calls):
        spin(busy_us)
        start = time.perf_counter_ns()
        call()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1e3


def floor_rows(exe: Executable, calls: int) -> list[tuple[str, float]]:
    """Raw PyOpenCL costs on the executable's context (see the module docstring)."""
    context, queue, profiling = exe.device.context, exe.queue, exe.device.queue
    kernel = cl.Kernel(cl.Program(context, EMPTY_SOURCE).build(), "empty")
    kernel.set_arg(0, exe.empty)
    enqueue = cl.enqueue_nd_range_kernel

    def finish() -> None:
        enqueue(queue, kernel, (1,), None)
        queue.finish()

    def poll() -> None:
        event = enqueue(queue, kernel, (1,), None)
        queue.flush()
        while event.command_execution_status != cl.command_execution_status.COMPLETE:
            pass

    def profiled() -> None:
        enqueue(profiling, kernel, (1,), None)
        profiling.finish()

    host = aligned_empty((1 << 18,), np.dtype(np.float32), exe.alignment)
    return [
        ("empty kernel, enqueue + queue.finish()", median_us(finish, calls)),
        ("empty kernel, enqueue + event.wait()",
         median_us(lambda: enqueue(queue, kernel, (1,), None).wait(), calls)),
        ("empty kernel, enqueue + flush + poll the event", median_us(poll, calls)),
        ("empty kernel on the profiling queue, + finish()", median_us(profiled, calls)),
        ("USE_HOST_PTR buffer over 1 MiB, made and dropped",
         median_us(lambda: use_host_buffer(context, host, read_only=True), calls)),
        ("set_arg", median_us(lambda: kernel.set_arg(0, exe.empty), calls)),
    ]


STEPS = ("arguments", "input buffers", "output arrays", "enqueue", "collect", "wait", "outputs",
         "index check")


def step_times(exe: Executable, inputs: Sequence[np.ndarray], calls: int) -> dict[str, float]:
    """Median microseconds of each step of `Executable.run` (host-memory device, unprofiled),
    the steps called one by one as `run` calls them."""
    samples: dict[str, list[int]] = {step: [] for step in STEPS}
    for i in range(calls + 20):
        marks = [time.perf_counter_ns()]
        values = inputs if exe.taken_as_is(inputs) else exe.arguments(inputs, {})
        marks.append(time.perf_counter_ns())
        state = CallState()
        exe.wrap_inputs(values, state)
        marks.append(time.perf_counter_ns())
        outputs = exe.wrap_outputs(state)
        marks.append(time.perf_counter_ns())
        events = exe.launch(exe.queue, False)
        marks.append(time.perf_counter_ns())
        maps = exe.collect(outputs, state, exe.queue) if exe.collects else []
        marks.append(time.perf_counter_ns())
        if exe.collects or not events:
            exe.queue.finish()
        else:
            events[-1].wait()
        marks.append(time.perf_counter_ns())
        for mapped in maps:
            mapped.base.release(exe.queue)
        if exe.resident_outputs:
            outputs = [p.staging.copy() if p.resident is not None else array
                       for p, array in zip(exe.outputs, outputs, strict=True)]
        marks.append(time.perf_counter_ns())
        if exe.index_errors is not None and exe.index_errors.flag[0]:
            raise exe.index_errors.take(exe.queue)
        marks.append(time.perf_counter_ns())
        del outputs, values, state
        if i >= 20:
            for step, begin, end in zip(STEPS, marks[:-1], marks[1:], strict=True):
                samples[step].append(end - begin)
    return {step: statistics.median(s) / 1e3 for step, s in samples.items()}


def workload_rows(workload: Workload, calls: int,
                  busy_us: float = 0.0) -> tuple[Executable, list[tuple[str, float]]]:
    import fusec

    exe = fusec.compile(workload.text, device="cpu")
    if not exe.host_memory:
        raise SystemExit("call_overhead: the CPU device does not share host memory")
    graph = parse(workload.text, workload.name)
    inputs = workload.inputs([t.name for t in graph.inputs], [t.shape for t in graph.inputs],
                             0, 4096)
    walls: list[int] = []
    kernels: list[float] = []
    for _ in range(20):
        exe(*inputs)
    for _ in range(max(1, calls // 10)):
        for _ in range(10):
            spin(busy_us)
            start = time.perf_counter_ns()
            exe(*inputs)
            walls.append(time.perf_counter_ns() - start)
        for _ in range(10):
            spin(busy_us)
            kernels.append(exe.profile(*inputs)[1].kernel_seconds * 1e6)
    wall, kernel = statistics.median(walls) / 1e3, statistics.median(kernels)
    steps = step_times(exe, inputs, calls)
    held = exe(*inputs)  # keeps the buffers of this call alive while the raw launches use them

    def raw() -> None:
        for k, global_size, local_size in exe.launches:
            cl.enqueue_nd_range_kernel(exe.queue, k, global_size, local_size)
        exe.queue.finish()

    raw_us = median_us(raw, calls, busy_us=busy_us)
    del held
    rows = [("call wall", wall), ("kernel (profiling events)", kernel),
            ("wall - kernel", wall - kernel),
            *((f"  step: {step}", us) for step, us in steps.items()),
            ("  steps summed", sum(steps.values())),
            ("its launches alone, raw enqueue + finish()", raw_us),
            ("  raw - kernel", raw_us - kernel)]
    return exe, rows


EMBEDDING = """
func.func @lookup(%table: tensor<64x16xf32>, %ids: tensor<8xi32>) -> tensor<8x16xf32> {
  %e = nn.gather %table, %ids {axis = 0 : i64} : tensor<64x16xf32>, tensor<8xi32> -> tensor<8x16xf32>
  func.return %e : tensor<8x16xf32>
}
"""


def index_check_rows(calls: int) -> list[tuple[str, float]]:
    """What checking gather indices costs a call (see the module docstring)."""
    import fusec

    exe = fusec.compile(EMBEDDING, device="cpu")
    record = exe.index_errors
    assert record is not None
    table = aligned_empty((64, 16), np.dtype(np.float32), exe.alignment)
    table[...] = 1.0
    ids = aligned_empty((8,), np.dtype(np.int32), exe.alignment)
    ids[...] = np.arange(8)
    with_check: list[float] = []
    without: list[float] = []
    for _ in range(5):  # alternating blocks: the machine's load drifts
        exe.index_errors = record
        with_check.append(median_us(lambda: exe(table, ids), calls))
        exe.index_errors = None  # the kernel still records; the call reads nothing
        without.append(median_us(lambda: exe(table, ids), calls))
    exe.index_errors = record
    read = median_us(lambda: exe.index_errors is not None and exe.index_errors.flag[0],
                     calls * 10)
    on_device = [exe.to_device(table), exe.to_device(ids)]
    device_with: list[float] = []
    device_without: list[float] = []
    for _ in range(5):
        exe.index_errors = record
        device_with.append(median_us(lambda: exe(*on_device), calls))
        exe.synchronize()
        exe.index_errors = None
        device_without.append(median_us(lambda: exe(*on_device), calls))
        exe.synchronize()
    exe.index_errors = record
    return [
        ("host-array call, indices checked", statistics.median(with_check)),
        ("host-array call, record not read", statistics.median(without)),
        ("  difference", statistics.median(with_check) - statistics.median(without)),
        ("the read after the wait alone", read),
        ("device-array call (no wait), checked", statistics.median(device_with)),
        ("device-array call (no wait), not recorded", statistics.median(device_without)),
        ("  difference", statistics.median(device_with) - statistics.median(device_without)),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-w", "--workload", action="append",
                        help=f"a fusec-bench workload (default: {', '.join(DEFAULT_WORKLOADS)})")
    parser.add_argument("--calls", type=int, default=400, help="calls per median (400)")
    parser.add_argument("--busy-us", type=float, default=0.0,
                        help="spin this long before each timed call (0: calls back to back)")
    parser.add_argument("--index-check", action="store_true",
                        help="only what checking gather indices costs a call")
    args = parser.parse_args(argv)
    if args.index_check:
        print(f"load average {os.getloadavg()[0]:.2f} at the start, {os.cpu_count()} cpus")
        for label, us in index_check_rows(args.calls):
            print(f"  {label:48s} {us:8.2f} us")
        print(f"load average {os.getloadavg()[0]:.2f} at the end")
        return
    known = {w.name: w for w in (TRIVIAL, *all_workloads())}
    names = args.workload or list(DEFAULT_WORKLOADS)
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)}")
    if args.busy_us < 0:
        parser.error("--busy-us must be at least 0")
    print(f"load average {os.getloadavg()[0]:.2f} at the start, {os.cpu_count()} cpus; "
          f"{args.busy_us:g} us of host work before each timed call")
    exe = None
    for name in names:
        exe, rows = workload_rows(known[name], args.calls, args.busy_us)
        print(f"{name} ({len(exe.launches)} launch{'es' if len(exe.launches) > 1 else ''}, "
              f"{exe.device.description})")
        for label, us in rows:
            print(f"  {label:48s} {us:8.1f} us")
    if exe is not None:
        print("floor (raw PyOpenCL, fusec's context)")
        for label, us in floor_rows(exe, args.calls):
            print(f"  {label:48s} {us:8.1f} us")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
