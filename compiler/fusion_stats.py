"""What fusion saved: ops and fused regions before and after, kernel launches avoided, and
intermediate bytes no longer written to memory.

Counted over the top-level ops of every ``func.func`` (the scalar ops inside fused bodies are
not ops of the program):
  * ops: every ``nn`` and ``fused`` op, constants included;
  * regions: ``fused.elementwise``, ``fused.reduce``, ``fused.row_reduce`` and
    ``fused.matmul_epilogue`` ops;
  * kernel launches: ops that run a kernel, i.e. every ``nn`` and ``fused`` op but
    ``nn.constant`` (data, not a kernel);
  * bytes written: the size of every result of a kernel op (elements x element size, ``i1`` as
    one byte), from the tensor types. The function's outputs are written before and after, so
    the difference is the intermediates that fusion no longer writes.

``fusec-opt --fusion-stats`` prints the text form on stderr; ``--fusion-stats-json FILE`` writes
the JSON form (for build scripts) to FILE.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Attribute

from fusec.dialects import fused, nn

REGION_OPS = (fused.ElementwiseOp, fused.ReduceOp, fused.RowReduceOp, fused.MatmulEpilogueOp)


@dataclass(frozen=True)
class Counts:
    ops: int = 0
    regions: int = 0
    kernels: int = 0
    bytes_written: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.ops + other.ops,
            self.regions + other.regions,
            self.kernels + other.kernels,
            self.bytes_written + other.bytes_written,
        )


def element_bytes(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return max(1, t.width.data // 8)
    return {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}.get(str(t), 4)


def tensor_bytes(t: Attribute) -> int:
    if not isinstance(t, TensorType):
        return 0
    return t.element_count() * element_bytes(t.element_type)


def count(module: ModuleOp) -> Counts:
    """The counts of ``module`` (see the module docstring for what counts)."""
    total = Counts()
    for fn in module.walk():
        if not isinstance(fn, func.FuncOp):
            continue
        for block in fn.body.blocks:
            for op in block.ops:
                if op.dialect_name() not in ("nn", "fused"):
                    continue
                kernel = not isinstance(op, nn.ConstantOp)
                total += Counts(
                    ops=1,
                    regions=int(isinstance(op, REGION_OPS)),
                    kernels=int(kernel),
                    bytes_written=sum(tensor_bytes(r.type) for r in op.results) if kernel else 0,
                )
    return total


@dataclass(frozen=True)
class FusionReport:
    """The counts of one input (or chunk) before and after the passes."""

    input: str
    before: Counts
    after: Counts

    @property
    def launches_avoided(self) -> int:
        return self.before.kernels - self.after.kernels

    @property
    def bytes_saved(self) -> int:
        return self.before.bytes_written - self.after.bytes_written

    def to_dict(self) -> dict[str, object]:
        return {
            "input": self.input,
            "before": asdict(self.before),
            "after": asdict(self.after),
            "launches_avoided": self.launches_avoided,
            "bytes_saved": self.bytes_saved,
        }

    def to_text(self) -> str:
        b, a = self.before, self.after
        rows = [
            ("ops", b.ops, a.ops, ""),
            ("fused regions", b.regions, a.regions, ""),
            ("kernel launches", b.kernels, a.kernels, f"({self.launches_avoided} avoided)"),
            (
                "bytes written",
                b.bytes_written,
                a.bytes_written,
                f"({self.bytes_saved} intermediate bytes no longer written)",
            ),
        ]
        lines = [f"fusion stats: {self.input}"]
        for label, before, after, note in rows:
            lines.append(f"  {label:<16}{before:>10} -> {after:<10}{note}".rstrip())
        return "\n".join(lines) + "\n"


def total(reports: Sequence[FusionReport], name: str) -> FusionReport:
    before, after = Counts(), Counts()
    for r in reports:
        before, after = before + r.before, after + r.after
    return FusionReport(name, before, after)


def reports_text(reports: Sequence[FusionReport]) -> str:
    return "".join(r.to_text() for r in reports)


def reports_json(reports: Sequence[FusionReport], name: str) -> str:
    """``{"total": report, "chunks": [report, ...]}``; one chunk without --split-input-file."""
    doc = {
        "total": total(reports, name).to_dict(),
        "chunks": [r.to_dict() for r in reports],
    }
    return json.dumps(doc, indent=2) + "\n"
