"""The tensor-level IR as a Graphviz drawing: ``fusec-opt -t dot``, ``fusec-run --dot``.

Each function becomes one ``digraph``: its arguments and its return as ellipses, one box per op
with its result shape and dtype, and each ``fused`` op as a cluster holding the ``nn`` ops it
replaced (from its ``decompose()``, nested where a fused op decomposes into another). Edges carry
the tensor they move (``4x16xf32, 256 B``). With ``kernels`` (op -> kernel names, see
``kernel_names``) each box or cluster also names the kernel launches its lowering emitted.

The output is deterministic: nodes are numbered in program order. fusec writes DOT text only;
``dot -Tsvg`` (Graphviz) renders it.

    digraph "mlp" {
      n0 [label="%x\\n4x16xf32", shape=ellipse];
      subgraph cluster_1 {
        label="fused.matmul_bias_act\\nkernel: gemm";
        n1 [label="nn.matmul\\n4x32xf32"]; ...
      }
      n0 -> n1 [label="4x16xf32, 256 B"];
    }
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from fusec.compiler.diagnostics import FusecError
from fusec.dialects import kernel
from fusec.lowering.lower_to_kernels import LowerToKernelsPass, non_native_fused_ops

KernelNames = dict[Operation, list[str]]
"""A tensor-level op -> the kernels (or templates) its lowering launches."""

FUSED_COLOR = "#1f6fb2"
PORT_STYLE = 'shape=ellipse, style=filled, fillcolor="#eeeeee"'


def type_label(t: Attribute) -> str:
    """``4x16xf32`` for a tensor, the type's text otherwise."""
    if isinstance(t, TensorType):
        return "x".join([*(str(d) for d in t.get_shape()), str(t.element_type)])
    return str(t)


def byte_size(t: Attribute) -> int | None:
    if not isinstance(t, TensorType):
        return None
    width = getattr(t.element_type, "bitwidth", None)
    if width is None:
        return None
    return math.prod(t.get_shape()) * max(1, width // 8 if width >= 8 else 1)


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}".replace(".0 ", " ")
        n /= 1024  # type: ignore[assignment]
    raise AssertionError("unreachable")


def edge_label(t: Attribute) -> str:
    size = byte_size(t)
    return type_label(t) if size is None else f"{type_label(t)}, {human_bytes(size)}"


def quote(text: str) -> str:
    """A DOT string literal; ``\\n`` in ``text`` stays a DOT line break."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def op_label(op: Operation) -> str:
    types = ", ".join(type_label(r.type) for r in op.results)
    return f"{op.name}\n{types}" if types else op.name


class FunctionDrawing:
    """Builds the DOT lines of one tensor-level function."""

    def __init__(self, fn: func.FuncOp, kernels: KernelNames | None):
        self.fn = fn
        self.kernels = kernels
        self.lines: list[str] = []
        self.count = 0
        self.producer: dict[SSAValue, str] = {}
        self.edges: list[tuple[str, str, str]] = []

    def node(self, label: str, style: str, indent: str) -> str:
        name = f"n{self.count}"
        self.count += 1
        self.lines.append(f"{indent}{name} [label={quote(label)}{', ' + style if style else ''}];")
        return name

    def kernel_line(self, op: Operation) -> str:
        if self.kernels is None or op not in self.kernels:
            return ""
        counts = Counter(self.kernels[op])
        if not counts:
            return "\nno kernel (a view)"
        listed = ", ".join(name if n == 1 else f"{name} x{n}" for name, n in counts.items())
        return f"\nkernel{'s' if counts.total() > 1 else ''}: {listed}"

    def connect(self, value: SSAValue, target: str) -> None:
        source = self.producer.get(value)
        if source is not None:
            self.edges.append((source, target, edge_label(value.type)))

    def draw_ops(self, ops: Iterable[Operation], indent: str) -> None:
        for op in ops:
            if isinstance(op, func.ReturnOp):
                ret = self.node("return", PORT_STYLE, indent)
                for v in op.operands:
                    self.connect(v, ret)
            elif op.dialect_name() == "fused":
                self.draw_fused(op, indent)
            else:
                box = self.node(op_label(op) + self.kernel_line(op), "", indent)
                for v in op.operands:
                    self.connect(v, box)
                for r in op.results:
                    self.producer[r] = box

    def draw_fused(self, op: Operation, indent: str) -> None:
        decompose = getattr(op, "decompose", None)
        inner, results = decompose() if decompose is not None else (None, [])
        if inner is None:
            box = self.node(op_label(op) + self.kernel_line(op), f'color="{FUSED_COLOR}"', indent)
            for v in op.operands:
                self.connect(v, box)
            for r in op.results:
                self.producer[r] = box
            return
        cluster = self.count
        self.count += 1
        self.lines.append(f"{indent}subgraph cluster_{cluster} {{")
        label = op_label(op) + self.kernel_line(op)
        self.lines.append(
            f'{indent}  label={quote(label)}; style="rounded"; color="{FUSED_COLOR}"; '
            f'fontcolor="{FUSED_COLOR}";'
        )
        self.draw_ops(inner, indent + "  ")
        self.lines.append(f"{indent}}}")
        for old, new in zip(op.results, results, strict=False):
            if new in self.producer:
                self.producer[old] = self.producer[new]
        for new in inner:
            new.drop_all_references()

    def draw(self) -> list[str]:
        name = self.fn.sym_name.data
        self.lines += [
            f"digraph {quote(name)} {{",
            '  graph [fontname="monospace", compound=true];',
            '  node [shape=box, style=rounded, fontname="monospace", fontsize=10];',
            '  edge [fontname="monospace", fontsize=8];',
        ]
        for arg in self.fn.body.block.args:
            hint = arg.name_hint or f"arg{arg.index}"
            self.producer[arg] = self.node(f"%{hint}\n{type_label(arg.type)}", PORT_STYLE, "  ")
        self.draw_ops(self.fn.body.block.ops, "  ")
        for source, target, label in self.edges:
            self.lines.append(f"  {source} -> {target} [label={quote(label)}];")
        self.lines.append("}")
        return self.lines


def tensor_functions(module: ModuleOp) -> list[func.FuncOp]:
    fns = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    for fn in fns:
        if any(op.dialect_name() in ("kernel", "memref") for op in fn.walk()):
            raise FusecError(
                f"dot target: @{fn.sym_name.data} is kernel-level IR; draw the tensor-level IR "
                "(before lower-opencl) and add kernels=true to name each op's kernels"
            )
    return fns


def module_to_dot(module: ModuleOp, kernels: KernelNames | None = None) -> str:
    """One ``digraph`` per function of ``module``, on a clone (``module`` is not changed)."""
    clone = module.clone()
    originals = [op for fn in tensor_functions(module) for op in fn.body.block.ops]
    copies = [op for fn in tensor_functions(clone) for op in fn.body.block.ops]
    by_copy = dict(zip(copies, originals, strict=True))
    names = None if kernels is None else {c: kernels[o] for c, o in by_copy.items() if o in kernels}
    out: list[str] = []
    for fn in tensor_functions(clone):
        out += FunctionDrawing(fn, names).draw()
    return "\n".join(out) + "\n"


def launch_name(op: Operation) -> str | None:
    if isinstance(op, kernel.LaunchOp):
        return op.kernel.root_reference.data
    if isinstance(op, kernel.TemplateOp):
        return op.template.data
    return None


def kernel_names(module: ModuleOp, device: str) -> KernelNames:
    """Each top-level op of ``module``'s functions -> the kernels its OpenCL lowering for
    ``device`` launches (an un-fused op: those of the ops it decomposes into). Lowers a clone."""
    clone = module.clone()
    originals = [op for fn in tensor_functions(module) for op in fn.body.block.ops]
    copies = [op for fn in tensor_functions(clone) for op in fn.body.block.ops]
    source: dict[Operation, Operation] = dict(zip(copies, originals, strict=True))
    unfused = set(non_native_fused_ops())
    for op in copies:
        if op.name in unfused:
            inner, results = op.decompose()  # type: ignore[attr-defined]
            parent = op.parent_block()
            assert parent is not None
            parent.insert_ops_before(inner, op)
            for old, new in zip(op.results, results, strict=True):
                old.replace_by(new)
            parent.erase_op(op)
            source |= {new: source[op] for new in inner}
    try:
        emitted = LowerToKernelsPass(device=device).lower(clone)
    except Exception as e:
        raise FusecError(f"dot target: cannot lower for kernels=true: {e}") from None
    names: KernelNames = {orig: [] for orig in originals}
    for op, host_ops in emitted.items():
        orig = source.get(op)
        if orig is None:
            continue
        for h in host_ops:
            name = launch_name(h)
            if name is not None:
                names[orig].append(name)
    return names


def draw(module: ModuleOp, *, kernels: bool = False, device: str = "cpu") -> str:
    """The DOT text of ``module``; with ``kernels``, each op names its kernels on ``device``."""
    return module_to_dot(module, kernel_names(module, device) if kernels else None)
