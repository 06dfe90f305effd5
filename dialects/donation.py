"""Donated arguments: a function argument whose buffer a result reuses, updated in place.

A ``func.func`` argument with the attribute ``fusec.aliasing_output = N`` is *donated* to result
``N`` (XLA's ``tf.aliasing_output``, what JAX's ``donate_argnums`` lowers to): the caller hands
its buffer over, and the program writes result ``N`` into it instead of a new buffer. The
semantics stay those of values (the reference returns result ``N`` as a new array); donation
only says where result ``N`` lives::

    func.func @step(%k_cache: tensor<1x64x32xf32> {fusec.aliasing_output = 0 : i64},
                    %k: tensor<1x1x32xf32>, %pos: tensor<i32>) -> tensor<1x64x32xf32> {
      %updated = nn.cache_update %k_cache, %k, %pos : ... -> tensor<1x64x32xf32>
      func.return %updated : tensor<1x64x32xf32>
    }

Rules (checked by `aliased_outputs`): ``N`` is a result of the function, of the argument's
type, and no two arguments are donated to one result. An op that updates its operand in place
(``nn.cache_update``, its cache) may do so on a donated argument only if nothing
reads that argument (or a reshape of it, which is a view of the same buffer) after it: such a
read would see the update (`check_no_read_after_update`, a verifier error at the update).
Where the update cannot be made in place the lowering copies first, so the rule is for the
reader of the program, never what keeps the numbers right.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from fusec.dialects.locations import first_place

ALIASING_OUTPUT = "fusec.aliasing_output"
"""The argument attribute naming the result that reuses a donated argument's buffer."""


def aliased_outputs(fn: func.FuncOp) -> dict[int, int]:
    """Argument index -> the result index it is donated to, for each donated argument of
    ``fn``; a VerifyException naming the argument for an attribute that breaks the rules."""
    if fn.arg_attrs is None:
        return {}
    outputs = fn.function_type.outputs.data
    inputs = fn.function_type.inputs.data
    donated: dict[int, int] = {}
    for index, attrs in enumerate(fn.arg_attrs.data):
        attr = attrs.data.get(ALIASING_OUTPUT)
        if attr is None:
            continue
        where = f"'func.func' @{fn.sym_name.data} argument #{index}"
        if not isinstance(attr, IntegerAttr):
            raise VerifyException(f"{where}: {ALIASING_OUTPUT} must be an integer (a result "
                                  f"index), got {attr}")
        result = attr.value.data
        if not 0 <= result < len(outputs):
            raise VerifyException(f"{where}: {ALIASING_OUTPUT} = {result} is not a result "
                                  f"index (the function has {len(outputs)} results)")
        if outputs[result] != inputs[index]:
            raise VerifyException(f"{where} ({inputs[index]}) is donated to result #{result} "
                                  f"of another type ({outputs[result]})")
        if result in donated.values():
            raise VerifyException(f"{where}: result #{result} already reuses another "
                                  "argument's buffer")
        donated[index] = result
    return donated


def donating_function(value: SSAValue) -> func.FuncOp | None:
    """The function whose donated argument ``value`` is, else None."""
    if not isinstance(value, BlockArgument):
        return None
    fn = value.block.parent_op()
    if not isinstance(fn, func.FuncOp) or fn.body.blocks.first is not value.block:
        return None
    return fn if value.index in aliased_outputs(fn) else None


def same_buffer_values(value: SSAValue) -> list[SSAValue]:
    """``value`` and every reshape of it (transitively): the values the lowering keeps in
    ``value``'s buffer (``nn.reshape`` is a view)."""
    found = [value]
    for current in found:
        for use in current.uses:
            op = use.operation
            if op.name == "nn.reshape":
                found.extend(op.results)
    return found


def later_reader(update: Operation, value: SSAValue) -> Operation | None:
    """The first op after ``update`` in its block that reads ``value`` or a reshape of it."""
    block = update.parent
    readers = [use.operation for v in same_buffer_values(value) for use in v.uses
               if use.operation is not update and use.operation.parent is block]
    later = [op for op in readers if not op.is_before_in_block(update)]
    if not later or block is None:
        return None
    order = {op: i for i, op in enumerate(block.ops)}
    return min(later, key=lambda op: order[op])


def check_no_read_after_update(update: Operation, operand: SSAValue) -> None:
    """A VerifyException when ``operand``, which ``update`` updates in place, is a donated
    argument that some op reads after ``update``."""
    fn = donating_function(operand)
    if fn is None:
        return
    reader = later_reader(update, operand)
    if reader is None:
        return
    name = f"%{operand.name_hint}" if operand.name_hint else f"#{operand.index}"  # type: ignore[attr-defined]
    raise VerifyException(
        f"'{update.name}' updates the donated argument {name} in place, but '{reader.name}' "
        f"reads it afterwards{at(reader)}: read it before the update, or do not "
        "donate it")


def at(op: Operation) -> str:
    """`` (at file:line:col)`` for an op with a file location, else nothing."""
    place = first_place(op.location)
    return f" (at {place})" if place else ""
