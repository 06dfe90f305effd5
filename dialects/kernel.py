"""The ``kernel`` dialect: what fusec's kernel-level IR needs beyond the upstream dialects.

After ``lower-to-kernels`` a tensor function has become a host schedule over buffers, and each
generated kernel is a ``kernel.func`` next to it. Upstream dialects carry most of both: ``func``
(the schedule is a ``func.func`` over ``memref``s), ``memref`` (``memref.alloc`` for
intermediates, ``memref.global``/``memref.get_global`` for constants, ``memref.load``/``store``
in kernels), ``scf`` (loops), ``arith``/``math`` (scalar and index arithmetic) and ``vector``
(float4 loads, stores and arithmetic). This dialect adds only what those lack:

- ``kernel.func`` is an OpenCL ``__kernel``: buffer arguments, no results, a body of upstream
  ops ending in ``kernel.return``; ``kernel.global_id``/``local_id``/``group_id`` give the
  work-item's position and ``kernel.barrier`` synchronises a work-group. (``gpu.func`` would
  do, but xDSL prints ``gpu`` ops only in the generic form, which no one can read in a test.)
- ``kernel.launch`` enqueues a ``kernel.func`` on buffers with a global and local size;
- ``kernel.template`` launches one of the parameterised OpenCL C templates
  (``fusec.codegen.kernels``): its name, its parameters, the buffers it reads and writes, and an
  epilogue region of scalar IR computing each stored value;
- ``kernel.alloc`` is an intermediate buffer placed in a memory slot by ``plan-buffers``
  (values in one slot share memory: their lifetimes do not overlap);
- ``kernel.view`` reinterprets a buffer with another shape (a reshape costs nothing);
- ``kernel.yield`` ends an epilogue.

A lowered program reads::

    func.func @f(%x: memref<4x8xf32>, %b: memref<8xf32>) -> memref<4x8xf32> {
      %0 = kernel.alloc slot 0 : memref<4x8xf32>
      kernel.launch @f_add_0(%x, %b, %0) {global_size = array<i64: 32>,
          local_size = array<i64: 32>} : memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>
      kernel.template "gemm" {m = 4 : i64, ...} ins(%0, %w : ...) outs(%1 : ...) {
      ^bb0(%acc: f32, %row: index, %col: index):
        kernel.yield %acc : f32
      }
      func.return %1 : memref<4x8xf32>
    }
    kernel.func @f_add_0(%a: memref<4x8xf32>, %b: memref<8xf32>, %out: memref<4x8xf32>) {
      %i = kernel.global_id 0
      ...
      kernel.return
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_region_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

I64Array = DenseArrayBase.constr(i64)


def memref_type(op: IRDLOperation, what: str, value: SSAValue) -> MemRefType:
    t = value.type
    if not isinstance(t, MemRefType):
        raise VerifyException(f"'{op.name}' {what} must be a memref, got {t}")
    return t


def ints(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


# --- device side ---------------------------------------------------------------------------------


@irdl_op_definition
class FuncOp(IRDLOperation):
    """An OpenCL ``__kernel``: buffer arguments in order, no results."""

    name = "kernel.func"
    body = region_def("single_block")
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(self, name: str, arg_types: Sequence[Attribute], body: Region | None = None):
        if body is None:
            body = Region(Block(arg_types=list(arg_types)))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(list(arg_types), []),
            },
            regions=[body],
        )

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args)

    def verify_(self) -> None:
        types = tuple(self.body.block.arg_types)
        if types != self.function_type.inputs.data or self.function_type.outputs.data:
            raise VerifyException(
                f"'{self.name}' @{self.sym_name.data}: block arguments {list(types)} must match "
                f"the function type {self.function_type}, which has no results"
            )
        for t in types:
            if not isinstance(t, MemRefType):
                raise VerifyException(
                    f"'{self.name}' @{self.sym_name.data}: argument type {t} is not a memref"
                )

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name, inputs, _outputs, region, extra, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        op = FuncOp(name, inputs, region)
        if extra is not None:
            op.attributes |= extra.data
        return op

    def print(self, printer: Printer) -> None:
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            reserved_attr_names=("sym_name", "function_type"),
            print_empty_outputs=False,
        )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends a ``kernel.func``."""

    name = "kernel.return"
    traits = traits_def(IsTerminator(), HasParent(FuncOp))
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class WorkItemIdOp(IRDLOperation):
    """A position of the work-item along ``dim`` (0, 1 or 2)."""

    dim = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$dim attr-dict"

    def __init__(self, dim: int = 0):
        super().__init__(result_types=[IndexType()], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self) -> None:
        if self.dim.value.data not in (0, 1, 2):
            raise VerifyException(f"'{self.name}' dim must be 0, 1 or 2, got {self.dim.value.data}")


@irdl_op_definition
class GlobalIdOp(WorkItemIdOp):
    """``get_global_id(dim)``."""

    name = "kernel.global_id"


@irdl_op_definition
class LocalIdOp(WorkItemIdOp):
    """``get_local_id(dim)``."""

    name = "kernel.local_id"


@irdl_op_definition
class GroupIdOp(WorkItemIdOp):
    """``get_group_id(dim)``."""

    name = "kernel.group_id"


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """A work-group barrier with a local memory fence."""

    name = "kernel.barrier"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


ALIGNED_LANES = 8
"""The lanes of an `ALIGNED` vector: 16 bytes of a 16-bit type."""
ALIGNED = "kernel.aligned"
"""A discardable unit attribute of a ``vector.load`` or ``vector.store`` of `ALIGNED_LANES`
16-bit lanes in a kernel function: its address is a multiple of 16 bytes (``lower-to-kernels``
proved it on a GPU under the knob ``gpu_half_vectors``: `fusec.lowering.kernel_builder.
aligned_by`), so the emitter reads or writes it as one ``uint4``
(`fusec.codegen.kernels.half.aligned_vload`)."""


# --- host side -----------------------------------------------------------------------------------

SWIGLU_LAUNCH = "kernel.swiglu"
"""A discardable attribute of the ``kernel.launch`` that ``lower-to-kernels`` makes of a
``fused.swiglu``, its value the op's ``gate_first``: the launch computes ``up * silu(gate)`` of
the two halves of its first buffer into its second. The plan builder may fold such a launch
into the ``gemm`` that writes that buffer (``fusec.codegen.swiglu_epilogue``); a pass that
builds a launch of its own (``fuse-launches``) leaves it off."""


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Enqueues the ``kernel.func`` named ``kernel`` on ``args`` (buffers, in its order)."""

    name = "kernel.launch"
    kernel = prop_def(SymbolRefAttr)
    args = var_operand_def(MemRefType)
    global_size = prop_def(I64Array)
    local_size = prop_def(I64Array)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$kernel `(` $args `)` attr-dict `:` type($args)"

    def __init__(
        self,
        kernel: SymbolRefAttr,
        args: Sequence[SSAValue],
        global_size: Sequence[int],
        local_size: Sequence[int],
    ):
        super().__init__(
            operands=[list(args)],
            properties={
                "kernel": kernel,
                "global_size": ints(global_size),
                "local_size": ints(local_size),
            },
        )

    def sizes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The global and local sizes."""
        glob = tuple(int(v) for v in self.global_size.get_values())
        loc = tuple(int(v) for v in self.local_size.get_values())
        return glob, loc

    def verify_(self) -> None:
        glob, loc = self.sizes()
        if not glob or len(glob) > 3 or (loc and len(loc) != len(glob)):
            raise VerifyException(
                f"'{self.name}' global_size {list(glob)} and local_size {list(loc)} must have "
                "1 to 3 dimensions, the same number"
            )
        for g, size in zip(glob, loc, strict=False):
            if size <= 0 or g % size:
                raise VerifyException(
                    f"'{self.name}' global_size {list(glob)} must be a multiple of "
                    f"local_size {list(loc)}"
                )


ROW_BODY_TEMPLATES: tuple[str, ...] = ("row_reduce",)
"""Templates whose region is a row body (one scalar argument per input, ``fused.reduce_value``
ops among its scalar ops, ending in ``kernel.yield``) rather than an epilogue."""


@irdl_op_definition
class TemplateOp(IRDLOperation):
    """Launches the kernel template ``template`` with ``params`` on buffers.

    ``inputs`` and ``outputs`` bind the template's buffer parameters in order. The ``epilogue``
    region, when it has a block, computes each stored value: its arguments are the accumulated
    value, the flattened output row and the output column, then one memref per ``extras``
    operand; it ends in ``kernel.yield`` of one scalar. An empty region means the identity.
    For the ``ROW_BODY_TEMPLATES`` the region is the row's body instead.
    """

    name = "kernel.template"
    template = prop_def(StringAttr)
    params = prop_def(DictionaryAttr)
    inputs = var_operand_def(MemRefType)
    outputs = var_operand_def(MemRefType)
    extras = var_operand_def(MemRefType)
    epilogue = opt_region_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$template $params `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` "
        "type($outputs) `)` (`extras` `(` $extras^ `:` type($extras) `)`)? attr-dict-with-keyword "
        "(`epilogue` $epilogue^)?"
    )

    def __init__(
        self,
        template: str,
        params: dict[str, Attribute],
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue],
        extras: Sequence[SSAValue] = (),
        epilogue: Region | None = None,
    ):
        super().__init__(
            operands=[list(inputs), list(outputs), list(extras)],
            properties={"template": StringAttr(template), "params": DictionaryAttr(params)},
            regions=[epilogue],
        )

    def param(self, key: str) -> Attribute:
        return self.params.data[key]

    def verify_row_body(self, block: Block) -> None:
        if len(block.args) != len(self.inputs):
            raise VerifyException(
                f"'{self.name}' {self.template.data} body has {len(block.args)} arguments, "
                f"expected one per input ({len(self.inputs)})"
            )
        term = block.last_op
        if not isinstance(term, YieldOp) or len(term.values) != 1:
            raise VerifyException(f"'{self.name}' row body must end in kernel.yield of one value")

    def verify_(self) -> None:
        if self.epilogue is None:
            return
        block = self.epilogue.block
        if self.template.data in ROW_BODY_TEMPLATES:
            self.verify_row_body(block)
            return
        want = 3 + len(self.extras)
        if len(block.args) != want:
            raise VerifyException(
                f"'{self.name}' epilogue has {len(block.args)} arguments, expected {want} "
                "(acc, row, col, then one per extra buffer)"
            )
        if not isinstance(block.args[1].type, IndexType) or not isinstance(
            block.args[2].type, IndexType
        ):
            raise VerifyException(f"'{self.name}' epilogue row and col must be index values")
        for arg, extra in zip(block.args[3:], self.extras, strict=False):
            if arg.type != extra.type:
                raise VerifyException(
                    f"'{self.name}' epilogue argument of type {arg.type} does not match its "
                    f"extra buffer {extra.type}"
                )
        term = block.last_op
        if not isinstance(term, YieldOp) or len(term.values) != 1:
            raise VerifyException(f"'{self.name}' epilogue must end in kernel.yield of one value")


@irdl_op_definition
class AllocOp(IRDLOperation):
    """An intermediate buffer in memory slot ``slot``; values of one slot share memory."""

    name = "kernel.alloc"
    slot = prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)
    assembly_format = "`slot` $slot attr-dict `:` type($result)"

    def __init__(self, slot: int, result_type: Attribute):
        super().__init__(result_types=[result_type], properties={"slot": IntegerAttr(slot, i64)})


@irdl_op_definition
class ViewOp(IRDLOperation):
    """``source`` seen with another shape of as many elements (no copy)."""

    name = "kernel.view"
    source = operand_def(MemRefType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"

    def __init__(self, source: SSAValue, result_type: Attribute):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        src = memref_type(self, "source", self.source)
        res = memref_type(self, "result", self.result)
        if src.element_type != res.element_type or src.element_count() != res.element_count():
            raise VerifyException(
                f"'{self.name}' cannot view {src} as {res}: element type and count must agree"
            )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a ``kernel.template`` epilogue with the value to store."""

    name = "kernel.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(TemplateOp), Pure()))
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


def epilogue_block(acc_type: Attribute, extras: Sequence[Attribute]) -> Block:
    """An empty epilogue block: ``(acc, row, col, *extras)``, the first three named so."""
    block = Block(arg_types=[acc_type, IndexType(), IndexType(), *extras])
    for arg, name in zip(block.args, ("acc", "row", "col"), strict=False):
        arg.name_hint = name
    return block


Kernel = Dialect(
    "kernel",
    [
        FuncOp,
        ReturnOp,
        GlobalIdOp,
        LocalIdOp,
        GroupIdOp,
        BarrierOp,
        LaunchOp,
        TemplateOp,
        AllocOp,
        ViewOp,
        YieldOp,
    ],
    [],
)

__all__ = [
    "AllocOp",
    "BarrierOp",
    "FuncOp",
    "GlobalIdOp",
    "GroupIdOp",
    "LocalIdOp",
    "ReturnOp",
    "Kernel",
    "LaunchOp",
    "TemplateOp",
    "ViewOp",
    "YieldOp",
    "epilogue_block",
]
