"""Each kernel's device time in one workload of ``fusec-bench``: the workload compiled as the
table compiles it (weights bound, device arrays), then the median of `--repeat` profiled calls
per kernel, with the sum and the median wall time of unprofiled calls.

    python3 -m fusec.bench.profile_kernels --device gpu -w llama_b32 -w bert_b32
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import fusec
from fusec.bench.graph import parse
from fusec.bench.workloads import select


def profile(name: str, device: str, repeat: int) -> None:
    (workload,) = select([name], device)
    graph = parse(workload.text, workload.name)
    inputs = workload.inputs([t.name for t in graph.inputs], [t.shape for t in graph.inputs])
    params = {t.name: a for t, a in zip(graph.inputs, inputs, strict=True)
              if t.name in workload.params}
    executable = fusec.compile(workload.text, device=device, params=params)
    args = [executable.to_device(a) for a, spec in zip(inputs, executable.plan.inputs,
                                                       strict=True) if spec.name not in params]
    for _ in range(3):
        executable(*args)
    executable.synchronize()
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        executable(*args)
        executable.synchronize()
        walls.append((time.perf_counter() - start) * 1e3)
    times: dict[tuple[int, str], list[float]] = defaultdict(list)
    for _ in range(repeat):
        for i, kernel in enumerate(executable.profile(*args)[1].kernels):
            times[(i, kernel.kernel)].append(kernel.seconds * 1e3)
    print(f"{name} wall {statistics.median(walls):.4f} ms")
    total = 0.0
    for (i, kernel), values in sorted(times.items()):
        total += statistics.median(values)
        print(f"  {i:02d} {kernel}: {statistics.median(values):.4f} ms")
    print(f"  sum {total:.4f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="gpu")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("-w", "--workload", action="append", required=True)
    args = parser.parse_args()
    for name in args.workload:
        profile(name, args.device, args.repeat)


if __name__ == "__main__":
    main()
