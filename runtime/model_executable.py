"""An executable called in a model's own terms: its input and output names and host dtypes.

An imported model (ONNX) names its inputs and outputs otherwise than the IR function's
arguments and results, and has int64 tensors that the IR computes as i32. `ModelExecutable`
wraps the compiled (or loaded) executable so that a call takes the model's names and dtypes:
an int64 input (or another integer type) is checked to fit in 32 bits and passed as int32, a
float64 one is checked to fit float32 and passed as float32, and each output comes back in the
model's dtype (integers narrowed as numpy's ``astype`` does: modulo their width). Torch tensors and device arrays are taken and given back as
`Executable` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from fusec.errors import IndexOutOfRangeError, InputError

from .device_array import DeviceArray
from .interop import is_tensor, tensor_to_array, to_tensors


def is_device_array(value: object) -> bool:
    """A `DeviceArray` or a ``pyopencl.array.Array``."""
    if isinstance(value, DeviceArray):
        return True
    import pyopencl.array as cl_array

    return isinstance(value, cl_array.Array)


class ModelValue(Protocol):
    """A model's input or output (`fusec.frontends.onnx_import.GraphValue` is one)."""

    @property
    def onnx_name(self) -> str: ...
    @property
    def arg_name(self) -> str: ...
    @property
    def dtype(self) -> np.dtype: ...
    @property
    def shape(self) -> tuple[int, ...]: ...


def in_model_names(error: IndexOutOfRangeError,
                   inputs: Sequence[ModelValue]) -> IndexOutOfRangeError:
    """`error` naming the model's input by its own name (``input.1``, not the IR argument
    ``input1``)."""
    for value in inputs:
        if error.indices == f"input '{value.arg_name}'" and value.arg_name != value.onnx_name:
            return error.renamed(f"input '{value.onnx_name}'")
    return error


F32_MAX = float(np.finfo(np.float32).max)


def computed_as(array: np.ndarray, name: str) -> np.ndarray:
    """A model's input in the dtype its IR computes it in: integers of other widths and
    signedness as int32, float64 as float32, each checked to fit (an `InputError` naming the
    input otherwise); other dtypes as they are."""
    if array.dtype.kind in "iu" and array.dtype != np.int32:
        if array.size and (int(array.max()) > 2**31 - 1 or int(array.min()) < -(2**31)):
            raise InputError(f"input '{name}' holds values outside the 32-bit range fusec "
                             "computes integers in")
        return array.astype(np.int32)
    if array.dtype.name == "bfloat16":  # ml_dtypes' bfloat16: the bit patterns fusec holds
        return array.view(np.uint16)
    if array.dtype == np.float64:
        finite = array[np.isfinite(array)]
        if finite.size and float(np.abs(finite).max()) > F32_MAX:
            raise InputError(f"input '{name}' holds values outside the float32 range fusec "
                             "computes float64 in")
        return array.astype(np.float32)
    return array


def in_model_dtype(result: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """An output in the model's dtype: bf16 bit patterns (``uint16``) viewed as ml_dtypes'
    bfloat16, others converted (integers narrowed modulo their width)."""
    if result.dtype == dtype:
        return result
    if np.dtype(dtype).name == "bfloat16" and result.dtype == np.uint16:
        return result.view(dtype)
    return result.astype(dtype)


def check_imported_value(info: ModelValue, value: Any) -> None:
    """An `InputError` when ``value`` differs from the value the model was imported with for
    this input (``value`` of `fusec.frontends.onnx_import.GraphValue`: it decides shapes, so
    the compiled model computes for that value only)."""
    imported = getattr(info, "value", None)
    if imported is None:
        return
    if is_device_array(value):
        value = value.get()
    elif is_tensor(value):
        value = tensor_to_array(value, f"input '{info.onnx_name}'")
    if not np.array_equal(np.asarray(value), imported):
        raise InputError(f"input '{info.onnx_name}' differs from the value the model was "
                         f"imported with ({np.asarray(imported).tolist()}), which decides "
                         "shapes: import the model again with this value")


class ModelExecutable:
    """`exe` called with the model's input names and dtypes (see the module docstring)."""

    def __init__(self, exe: Any, inputs: Sequence[ModelValue], outputs: Sequence[ModelValue]):
        self.exe = exe
        self.inputs = list(inputs)
        self.outputs = list(outputs)

    @property
    def input_names(self) -> list[str]:
        return [v.onnx_name for v in self.inputs]

    @property
    def input_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(v.shape) for v in self.inputs]

    @property
    def input_dtypes(self) -> list[np.dtype]:
        return [np.dtype(v.dtype) for v in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [v.onnx_name for v in self.outputs]

    def arguments(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        names = self.input_names
        if len(args) > len(names):
            raise InputError(f"the model takes {len(names)} inputs ({', '.join(names)}), got "
                             f"{len(args)} positional arrays")
        given = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name not in names:
                raise InputError(f"the model has no input '{name}' (inputs: {', '.join(names)})")
            if name in given:
                raise InputError(f"input '{name}' is given twice")
            given[name] = value
        missing = [n for n in names if n not in given]
        if missing:
            raise InputError("the model is missing input" + ("s " if len(missing) > 1 else " ")
                             + ", ".join(f"'{n}'" for n in missing))
        converted: dict[str, Any] = {}
        for info in self.inputs:
            value = given[info.onnx_name]
            check_imported_value(info, value)
            if is_device_array(value):  # taken as it is: in the IR's dtype (int32 for int64)
                converted[info.arg_name] = value
                continue
            if is_tensor(value):
                value = tensor_to_array(value, f"input '{info.onnx_name}'")
            array = np.asarray(value)
            if array.dtype != info.dtype:
                raise InputError(f"input '{info.onnx_name}' must be {info.dtype}, got "
                                 f"{array.dtype}")
            converted[info.arg_name] = computed_as(array, info.onnx_name)
        return converted

    def __call__(self, *args: Any, **kwargs: Any) -> list[Any]:
        """The outputs in the model's output order, in the model's dtypes: numpy arrays for
        numpy inputs, tensors (on the first input tensor's device) when an input is a torch
        tensor, device arrays, left on the device in the IR's dtypes, when an input is a device
        array (`Executable`'s rules)."""
        try:
            results = self.exe(**self.arguments(args, kwargs))
        except IndexOutOfRangeError as e:
            raise in_model_names(e, self.inputs) from None
        if any(is_device_array(r) for r in results):
            return list(results)
        arrays = [in_model_dtype(r, info.dtype) for r, info in zip(results, self.outputs,
                                                                      strict=True)]
        tensor = next((v for v in (*args, *kwargs.values()) if is_tensor(v)), None)
        return arrays if tensor is None else to_tensors(arrays, tensor)

    def run(self, feeds: Mapping[str, Any]) -> dict[str, Any]:
        """``{output name: array}`` for ``{input name: array}`` (ONNX Runtime's habit)."""
        return dict(zip(self.output_names, self(**feeds), strict=True))
