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

When the pipeline runs ``fuse-launches`` (``lower-opencl`` does), the report also counts what
launch fusion saved on the kernel-level IR, from the IR just before and just after that pass:
  * launches: ``kernel.launch`` and ``kernel.template`` ops;
  * bytes written: the size of every buffer a launch writes (the buffers its kernel stores to,
    a template's outputs), so the difference is the intermediates no longer written.

``fusec-opt --fusion-stats`` prints the text form on stderr; ``--fusion-stats-json FILE`` writes
the JSON form (for build scripts) to FILE.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from xdsl.dialects import func, memref, vector
from xdsl.dialects.builtin import IntegerType, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from fusec.dialects import fused, kernel, nn

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


def buffer_bytes(t: Attribute) -> int:
    if not isinstance(t, MemRefType):
        return 0
    return t.element_count() * element_bytes(t.element_type)


@dataclass(frozen=True)
class KernelCounts:
    """Launches and bytes they write, on the kernel-level IR."""

    launches: int = 0
    bytes_written: int = 0

    def __add__(self, other: KernelCounts) -> KernelCounts:
        return KernelCounts(
            self.launches + other.launches, self.bytes_written + other.bytes_written
        )


def kernel_count(module: ModuleOp) -> KernelCounts:
    """The launches of ``module``'s host functions and the bytes of the buffers they write."""
    kernels = {k.sym_name.data: k for k in module.ops if isinstance(k, kernel.FuncOp)}
    total = KernelCounts()
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        for op in fn.body.block.ops if fn.body.blocks else ():
            written = []
            if isinstance(op, kernel.TemplateOp):
                written = list(op.outputs)
            elif isinstance(op, kernel.LaunchOp):
                k = kernels.get(op.kernel.root_reference.data)
                stored = {
                    s.operands[1] for s in (k.walk() if k else ())
                    if isinstance(s, memref.StoreOp | vector.StoreOp)
                }
                written = [v for v, a in zip(op.args, k.args if k else (), strict=False)
                           if a in stored]
            else:
                continue
            total += KernelCounts(1, sum(buffer_bytes(v.type) for v in written))
    return total


@dataclass(frozen=True)
class LaunchFusionCounts:
    """The kernel-level counts just before and just after ``fuse-launches``."""

    before: KernelCounts
    after: KernelCounts

    def __add__(self, other: LaunchFusionCounts) -> LaunchFusionCounts:
        return LaunchFusionCounts(self.before + other.before, self.after + other.after)

    def to_dict(self) -> dict[str, int]:
        return {
            "launches_before": self.before.launches,
            "launches_after": self.after.launches,
            "launches_avoided": self.before.launches - self.after.launches,
            "bytes_written_before": self.before.bytes_written,
            "bytes_written_after": self.after.bytes_written,
            "intermediate_bytes_avoided": self.before.bytes_written - self.after.bytes_written,
        }


class LaunchFusionTracker:
    """Records the kernel-level counts around each ``fuse-launches`` run, as `run_passes`'s
    ``after_each`` callback (several runs: before the first, after the last)."""

    def __init__(self, module: ModuleOp):
        self.last = kernel_count(module)
        self.before: KernelCounts | None = None
        self.after: KernelCounts | None = None

    def after_pass(self, done: ModulePass, module: ModuleOp) -> None:
        now = kernel_count(module)
        if done.name == "fuse-launches":
            if self.before is None:
                self.before = self.last
            self.after = now
        self.last = now

    def counts(self) -> LaunchFusionCounts | None:
        if self.before is None or self.after is None:
            return None
        return LaunchFusionCounts(self.before, self.after)


@dataclass(frozen=True)
class FusionReport:
    """The counts of one input (or chunk) before and after the passes."""

    input: str
    before: Counts
    after: Counts
    launch_fusion: LaunchFusionCounts | None = None
    """What ``fuse-launches`` saved, when the passes ran it."""

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
            "launch_fusion": self.launch_fusion.to_dict() if self.launch_fusion else None,
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
        if self.launch_fusion is not None:
            d = self.launch_fusion.to_dict()
            lines.append("  launch fusion (kernel IR):")
            for label, key, note in (
                ("launches", "launches", f"({d['launches_avoided']} avoided)"),
                ("bytes written", "bytes_written",
                 f"({d['intermediate_bytes_avoided']} intermediate bytes no longer written)"),
            ):
                before, after = d[f"{key}_before"], d[f"{key}_after"]
                lines.append(f"    {label:<14}{before:>10} -> {after:<10}{note}".rstrip())
        return "\n".join(lines) + "\n"


def total(reports: Sequence[FusionReport], name: str) -> FusionReport:
    before, after = Counts(), Counts()
    launch_fusion: LaunchFusionCounts | None = None
    for r in reports:
        before, after = before + r.before, after + r.after
        if r.launch_fusion is not None:
            launch_fusion = r.launch_fusion if launch_fusion is None else (
                launch_fusion + r.launch_fusion)
    return FusionReport(name, before, after, launch_fusion)


def reports_text(reports: Sequence[FusionReport]) -> str:
    return "".join(r.to_text() for r in reports)


def reports_json(reports: Sequence[FusionReport], name: str) -> str:
    """``{"total": report, "chunks": [report, ...]}``; one chunk without --split-input-file."""
    doc = {
        "total": total(reports, name).to_dict(),
        "chunks": [r.to_dict() for r in reports],
    }
    return json.dumps(doc, indent=2) + "\n"
