"""The numpy reference: runs a ``func.func`` of ``nn`` and ``fused`` ops on numpy arrays.

    module = parse_module(make_context(), Source(text, "model.mlir"))
    args = random_inputs(find_function(module), seed=0)
    (out,) = run_function(module, args)

The executor walks the function's ops in order with a map from SSA value to array; each op's
semantics is one numpy function (``reference_ops``, ``reference_scalar``). Every result is
rounded to its declared element type, so ``f32`` programs give ``float32`` arrays. This is what
every differential test compares against: a fused program and its unfused form must agree here,
and the OpenCL kernels must agree with this.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from fusec.dialects import nn
from fusec.dialects.common import int_prop
from fusec.errors import InputError
from fusec.reference.ops import (
    FUSED_IMPLS,
    NN_IMPLS,
    Array,
    OpImpl,
    UnsupportedOpError,
    location_prefix,
    compute_dtype,
    from_host,
    numpy_dtype,
    round_to_type,
    to_host,
)
from fusec.reference.column_stats import COLUMN_STATS_IMPLS
from fusec.reference.scalar import REGION_IMPLS
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

OP_IMPLS: dict[type[Operation], OpImpl] = {**NN_IMPLS, **FUSED_IMPLS, **REGION_IMPLS,
                                           **COLUMN_STATS_IMPLS}


def find_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The ``func.func`` called ``name``, or the module's only one when ``name`` is None."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if name is None:
        if len(functions) != 1:
            names = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
            raise InputError(f"expected exactly one func.func to run, found {names}; name one")
        return runnable(functions[0])
    for f in functions:
        if f.sym_name.data == name:
            return runnable(f)
    names = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    raise InputError(f"no function @{name} in the module (functions: {names})")


def runnable(fn: func.FuncOp) -> func.FuncOp:
    """``fn``, unless it is a declaration: no body, nothing to run."""
    if fn.is_declaration:
        raise InputError(f"@{fn.sym_name.data} is a declaration (no body): nothing to run")
    return fn


def value_spec(t: Attribute) -> tuple[tuple[int, ...], np.dtype[np.generic]]:
    """The numpy shape and dtype of a value of type ``t`` (a tensor or a scalar)."""
    if isinstance(t, TensorType):
        return tuple(t.get_shape()), numpy_dtype(t.element_type)
    return (), numpy_dtype(t)


def check_args(fn: func.FuncOp, args: Sequence[Array]) -> list[Array]:
    """``args`` as arrays, after checking their count, shapes and dtypes against ``fn``."""
    params = fn.body.block.args
    name = f"@{fn.sym_name.data}"
    if len(args) != len(params):
        raise InputError(f"{name} takes {len(params)} arguments, got {len(args)}")
    arrays: list[Array] = []
    for i, (param, arg) in enumerate(zip(params, args, strict=True)):
        shape, dtype = value_spec(param.type)
        array = np.asarray(arg)
        what = f"{name} argument #{i}" + (f" (%{param.name_hint})" if param.name_hint else "")
        if array.shape != shape:
            raise InputError(
                f"{what} has shape {list(array.shape)}, expected {list(shape)} ({param.type})"
            )
        if array.dtype != dtype:
            raise InputError(f"{what} has dtype {array.dtype}, expected {dtype} ({param.type})")
        arrays.append(from_host(array, param.type))
    return arrays


def element_type(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t


def declared(op: Operation, result: SSAValue, value: Array) -> Array:
    """``value`` in the dtype of ``result``; its shape must be the declared one."""
    shape, _ = value_spec(result.type)
    array = round_to_type(value, element_type(result.type))
    if array.shape != shape:
        raise UnsupportedOpError(
            f"{location_prefix(op)}the numpy reference of '{op.name}' produced shape "
            f"{list(array.shape)}, but its result type is {result.type}"
        )
    return array


def run_op(op: Operation, args: Sequence[Array], module: ModuleOp | None) -> list[Array]:
    if isinstance(op, func.CallOp) and module is not None:
        host = [to_host(a, v.type) for a, v in zip(args, op.operands, strict=True)]
        results = run_function(module, host, op.callee.string_value())
        return [from_host(r, v.type) for r, v in zip(results, op.results, strict=True)]
    impl = OP_IMPLS.get(type(op))
    if impl is None:
        raise UnsupportedOpError(
            f"{location_prefix(op)}the numpy reference has no implementation of '{op.name}'"
        )
    if op.results and all(isinstance(r.type, TensorType) and 0 in r.type.get_shape()
                          for r in op.results):
        # No elements to compute (a softmax or a norm of an empty tensor): numpy's max of an
        # empty axis raises and its mean warns, as the kernels would divide by zero.
        return [np.zeros(*value_spec(r.type)) for r in op.results]
    result = impl(op, args)
    return [result] if isinstance(result, np.ndarray | np.generic) else list(result)


def execute(fn: func.FuncOp, args: Sequence[Array], module: ModuleOp | None = None) -> list[Array]:
    """Runs ``fn`` on checked ``args``; ``module`` resolves ``func.call``s."""
    block = fn.body.block
    values: dict[SSAValue, Array] = dict(zip(block.args, args, strict=True))
    with np.errstate(all="ignore"):
        for op in block.ops:
            if isinstance(op, func.ReturnOp):
                return [np.array(to_host(values[v], v.type)) for v in op.arguments]
            outputs = run_op(op, [values[v] for v in op.operands], module)
            for result, output in zip(op.results, outputs, strict=True):
                values[result] = declared(op, result, output)
    raise UnsupportedOpError(f"@{fn.sym_name.data} does not end in func.return")


def run_function(
    module: ModuleOp, args: Sequence[Array], function: str | None = None
) -> list[Array]:
    """Runs the ``func.func`` named ``function`` (or the only one) on ``args``."""
    fn = find_function(module, function)
    return execute(fn, check_args(fn, args), module)


def random_inputs(fn: func.FuncOp, seed: int) -> list[Array]:
    """Random arguments for ``fn``: floats standard normal, ``i1`` random booleans, integers in
    ``[-4, 4]``, but within ``[-dim, dim)`` for indices of an ``nn.gather`` (so that they are
    in range) and a KV-cache position within the range its ops accept (`position_limit`). An
    argument whose name contains ``mask`` gets 0/1 values (in its dtype) with at least one 1
    in every row (last axis), so no attention row is fully masked by accident.
    """
    rng = np.random.default_rng(seed)
    arrays: list[Array] = []
    for param in fn.body.block.args:
        shape, dtype = value_spec(param.type)
        positions = position_limit(param)
        if positions is not None:
            arrays.append(np.array(rng.integers(0, positions + 1), dtype))
        elif "mask" in (param.name_hint or ""):
            mask = random_mask(rng, shape)
            arrays.append(to_host(round_to_type(mask, param.type), param.type))
        elif compute_dtype(param.type).kind == "f":
            normal = rng.standard_normal(shape, dtype=np.float32)
            arrays.append(to_host(round_to_type(normal, param.type), param.type))
        elif dtype == np.bool_:
            arrays.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            dim = min([5, *gathered_dims(param)])
            arrays.append(rng.integers(-min(dim, 4), dim, shape).astype(dtype))
    return arrays


def gathered_dims(value: SSAValue) -> list[int]:
    """The size of the axis of each ``nn.gather`` that `value` is the indices of."""
    dims = []
    for use in value.uses:
        op = use.operation
        if isinstance(op, nn.GatherOp) and use.index == 1:
            shape = op.data.type.get_shape()  # type: ignore[attr-defined]
            dims.append(shape[op.axis.value.data % len(shape)])
    return dims


def position_limit(param: SSAValue) -> int | None:
    """The largest cache position that every KV-cache op reading ``param`` as its ``pos``
    accepts (``pos + S <= T``), or None when no such op reads it."""
    limits = []
    for use in param.uses:
        op = use.operation
        if isinstance(op, nn.CacheUpdateOp) and op.pos is param:
            axis = int_prop(op, "axis") % len(value_spec(op.cache.type)[0])
            limits.append(value_spec(op.cache.type)[0][axis]
                          - value_spec(op.update.type)[0][axis])
        elif isinstance(op, nn.CacheAttentionOp) and op.pos is param:
            limits.append(value_spec(op.k_cache.type)[0][1] - value_spec(op.q.type)[0][1])
    return max(0, min(limits)) if limits else None


def random_mask(rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
    mask = rng.integers(0, 2, shape)
    if mask.ndim == 0:
        return np.ones(shape, np.int64)
    rows = mask.reshape(-1, shape[-1])
    rows[np.arange(rows.shape[0]), rng.integers(0, shape[-1], rows.shape[0])] = 1
    return rows.reshape(shape)
