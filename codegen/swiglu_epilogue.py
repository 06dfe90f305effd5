"""Which ``gemm`` launches compute the ``fused.swiglu`` of their product in the epilogue of
Hopper's ``wgmma`` kernel (`gemm_wgmma.gemm_wgmma` with ``swiglu``; the knob
`wgmma_swiglu_epilogue`).

The kernel IR of ``fused.swiglu(matmul(x, w))`` (``fuse-swiglu-dual-matmul``, or a packed
gate/up weight) is a ``gemm`` template writing ``cat [M, 2F]`` and the generated ``swiglu``
kernel (its launch marked `kernel.SWIGLU_LAUNCH`) reading it into ``[M, F]``. Where

- the device runs ``wgmma`` and the product takes it (`templates.instantiate_gemm_swiglu`:
  on the tensor cores whole tiles, f16 or bf16, no epilogue of its own; or a decode step's
  skinny product reading B K-major, as the tensor-core product stores it
  (`gemm_skinny.gemm_skinny_k_major`), so that the step stores the weight as the prefill does
  and shares it),
- its B is an input bound at compile time that nothing else reads (a weight: its columns can
  be stored in another order once, `plan.interleave_halves`),
- ``cat`` is read by the ``swiglu`` launch only (not returned, not viewed), and that launch
  follows the ``gemm`` with only allocations between them,

the plan builder (`fusec.codegen.program`) replaces both launches by one product that
writes the ``swiglu``'s result, pairing the gate's and up's columns (column ``2 j`` gate
``j``, ``2 j + 1`` up ``j``); ``cat`` gets no buffer. Where the kernel reads B K-major
(stored transposed, ``[N, K]``: the gate's rows, then up's) it pairs the rows as it copies B's
tiles (`SwigluEpilogue.halves`), so the stored B is a model's two weights as they are, which
the torch backend can hold once; where it reads B as it is, B is stored with its columns
interleaved (`SwigluEpilogue.interleaved`). Anything
else is planned as before. It is a choice of code generation for one device, so it is made
here and not as an IR rewrite: the kernel IR, un-fusion and the reference do not change.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from fusec import knobs
from fusec.codegen.kernels import gemm_wgmma
from fusec.codegen.kernels.common import BOUND_B_PANELS, DeviceInfo
from fusec.codegen.templates import Params, epilogue_is_identity, instantiate_gemm_swiglu
from fusec.dialects import kernel


@dataclass(frozen=True)
class SwigluEpilogue:
    """A ``gemm`` and the ``swiglu`` launch that one wgmma launch replaces."""

    gemm: kernel.TemplateOp
    swiglu: kernel.LaunchOp
    gate_first: bool
    b_panels: int | None
    """How the bound B is stored besides the interleave: `common.BOUND_B_PANELS`
    (transposed, where the kernel reads B K-major) or None (as it is)."""

    @property
    def cat(self) -> SSAValue:
        return self.gemm.outputs[0]

    @property
    def out(self) -> SSAValue:
        return self.swiglu.args[1]

    @property
    def weight(self) -> SSAValue:
        return self.gemm.inputs[1]

    @property
    def interleaved(self) -> str | None:
        """How B's columns are interleaved where it is stored (`plan.ValueSpec.interleaved`):
        read K-major (stored transposed), not at all: the kernels pair the gate's and up's
        rows as they read them (`halves`), so that B holds the two weights where they lie;
        read as it is, pairwise, `even_half` first."""
        return None if self.b_panels is not None else self.even_half

    @property
    def halves(self) -> str | None:
        """The half the kernels pair to even columns as they read B (`gemm_wgmma.gemm_wgmma`'s
        and `gemm_skinny.gemm_skinny_k_major`'s ``halves``), where B is not interleaved."""
        return self.even_half if self.b_panels is not None else None

    @property
    def even_half(self) -> str:
        """The half of B's columns (the gate's) that goes to the even columns
        (`plan.ValueSpec.interleaved`)."""
        return "first" if self.gate_first else "second"


def find_swiglu_epilogues(fn: func.FuncOp, device: DeviceInfo | None,
                          bound: dict[SSAValue, str]) -> list[SwigluEpilogue]:
    """The ``gemm`` + ``swiglu`` pairs of `fn` (kernel IR) that one launch computes on
    `device`; `bound` maps the inputs bound at compile time to their names. None without
    ``wgmma`` or with the knob `wgmma_swiglu_epilogue` off."""
    if device is None or not device.wgmma or not knobs.value("wgmma_swiglu_epilogue"):
        return []
    found = []
    for op in fn.body.block.ops:
        if isinstance(op, kernel.LaunchOp) and kernel.SWIGLU_LAUNCH in op.attributes:
            fusion = _fusion(op, device, bound)
            if fusion is not None:
                found.append(fusion)
    return found


def _fusion(launch: kernel.LaunchOp, device: DeviceInfo,
            bound: dict[SSAValue, str]) -> SwigluEpilogue | None:
    if len(launch.args) != 2 or launch.args[0] is launch.args[1]:
        return None
    cat, out = launch.args
    users = [use.operation for use in cat.uses]
    gemms = [op for op in users if isinstance(op, kernel.TemplateOp)]
    if len(users) != 2 or len(gemms) != 1 or launch not in users:
        return None  # cat has another reader (or is returned, or viewed)
    (gemm,) = gemms
    if (gemm.template.data != "gemm" or tuple(gemm.outputs) != (cat,) or gemm.extras
            or len(gemm.inputs) != 2 or not epilogue_is_identity(gemm)):
        return None
    if not _adjacent(gemm, launch, out):
        return None
    weight = gemm.inputs[1]
    if (not isinstance(weight, BlockArgument) or weight not in bound
            or len(list(weight.uses)) != 1 or gemm.inputs[0] is weight):
        return None
    if _elements(out) * 2 != _elements(cat):
        return None
    gate_first = launch.attributes[kernel.SWIGLU_LAUNCH]
    if not isinstance(gate_first, IntegerAttr):
        return None
    dtype = Params(gemm).str("dtype", "f32")
    panels = (BOUND_B_PANELS if gemm_wgmma.stores_bound_b_transposed(dtype)
              else None)
    if instantiate_gemm_swiglu(gemm, "gemm", device, b_transposed=panels is not None) is None:
        return None
    return SwigluEpilogue(gemm, launch, gate_first.value.data != 0, panels)


def _adjacent(gemm: Operation, launch: Operation, out: SSAValue) -> bool:
    """Whether only allocations lie between `gemm` and `launch`, among them `out`'s: the one
    launch then runs where both did, with the gemm's inputs and `out`'s buffer as they were."""
    op = gemm.next_op
    allocates_out = False
    while op is not None and op is not launch:
        if not isinstance(op, memref.AllocOp | kernel.AllocOp):
            return False
        allocates_out |= op.results[0] is out
        op = op.next_op
    return op is launch and allocates_out


def _elements(value: SSAValue) -> int:
    return value.type.element_count()  # type: ignore[attr-defined]
