"""The report of the PyTorch front door: one entry per compiled graph (and shape variant),
appended to a JSON file (``options={"report": PATH}``), and a line on stderr per graph when
``FUSEC_LOG=1``.

    {"graphs": [{"name": "graph0", "ops_in": 41, "fused_ops": {"fused.attention_block": 1},
                 "kernel_launches": 7, "fallback_ops": ["aten.cumsum"],
                 "fallback_reasons": {"aten.cumsum": "no converter for aten.cumsum"},
                 "device": "...", "compile_seconds": 1.8, "specializations": 1,
                 "input_shapes": [[2, 8, 16]], "partitions": 1,
                 "weights_shared_bytes": 65536, "weights_copied_bytes": 262144,
                 "launchers": {"cuda": 1}}]}

``ops_in`` counts the aten graph's ops; ``kernel_launches`` the launches of the fusec
partitions per call (PyTorch's ops not included); ``fallback_ops`` the ops left to PyTorch, one
entry per node; ``specializations`` how many shape variants of this graph were compiled so far;
``weights_shared_bytes`` the bytes of the partitions' bound inputs held over the tensors' own
memory (held once), ``weights_copied_bytes`` those fusec holds copies of (folded, repacked or
converted weights, held twice; `fusec.compiler.torch_weights`), when the graph was compiled;
``launchers`` how the partitions' kernels are launched, by count: ``"cuda"`` (through the CUDA
driver on PyTorch's stream, `fusec.runtime.cuda_launch`), ``"cuda graph"`` (replayed from a
CUDA graph), or ``"opencl (why)"``.
The file is rewritten whole through a temporary file and a rename, so a reader never sees half
of it.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any

from fusec.compiler.torch_partition import CompiledGraph
from fusec.runtime.limits import format_bytes


@dataclass
class GraphReport:
    name: str
    ops_in: int
    fused_ops: dict[str, int]
    kernel_launches: int
    fallback_ops: list[str]
    fallback_reasons: dict[str, str]
    device: str
    compile_seconds: float
    specializations: int
    input_shapes: list[list[int]]
    partitions: int
    weights_shared_bytes: int = 0
    weights_copied_bytes: int = 0
    launchers: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def of(name: str, compiled: CompiledGraph, device: str, specializations: int,
           shapes: list[list[int]]) -> GraphReport:
        return GraphReport(name, compiled.ops_in, dict(sorted(compiled.fused_ops.items())),
                           compiled.kernel_launches, list(compiled.fallback_ops),
                           dict(compiled.fallback_reasons), device,
                           round(compiled.compile_seconds, 3), specializations, shapes,
                           compiled.partitions, compiled.weights.shared_bytes,
                           compiled.weights.copied_bytes, dict(sorted(compiled.launchers.items())))

    def summary(self) -> str:
        fused = ", ".join(f"{n} x{c}" for n, c in self.fused_ops.items()) or "none"
        left = (f"{len(self.fallback_ops)} op(s) left to PyTorch "
                f"({', '.join(sorted(set(self.fallback_ops)))})" if self.fallback_ops
                else "nothing left to PyTorch")
        return (f"fusec: {self.name} {self.input_shapes}: {self.ops_in} aten ops -> "
                f"{self.kernel_launches} kernel launches on {self.device}; fused: {fused}; "
                f"{left}; weights {format_bytes(self.weights_shared_bytes)} held once, "
                f"{format_bytes(self.weights_copied_bytes)} copied; launched through "
                f"{', '.join(f'{n} x{c}' for n, c in self.launchers.items()) or 'nothing'}; "
                f"{self.compile_seconds:.2f} s, variant {self.specializations}")



class Reporter:
    """Where graph reports go: the JSON file (if any), stderr (if logging), and `graphs`."""

    def __init__(self, path: str | None, log: bool):
        self.path = path
        self.log = log
        self.graphs: list[GraphReport] = []

    def add(self, report: GraphReport) -> None:
        self.graphs.append(report)
        if self.log:
            print(report.summary(), file=sys.stderr)
        if self.path:
            append_report(self.path, asdict(report))


def append_report(path: str, entry: dict[str, Any]) -> None:
    """Appends ``entry`` to the ``graphs`` of the JSON file at ``path`` (made if missing; a
    file that is not such a report is replaced)."""
    data: dict[str, Any] = {"graphs": []}
    try:
        with open(path, encoding="utf-8") as f:
            loaded = json.load(f)
        if isinstance(loaded, dict) and isinstance(loaded.get("graphs"), list):
            data = loaded
    except (OSError, ValueError):
        pass
    data["graphs"].append(entry)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".fusec-report-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
