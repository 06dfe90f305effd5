"""A `ProgramPlan` as JSON data and arrays, and back, for artifacts (`fusec.runtime.artifact`).

The plan is plain data made of the frozen dataclasses of `fusec.codegen.plan`, tuples, numpy
arrays and dtypes, strings and numbers. `encode_plan` writes each dataclass as an object with
its class name under ``"$type"`` and every field, a tuple as ``{"$tuple": [...]}``, a dtype as
``{"$dtype": "<f4"}`` and an array as ``{"$array": NAME}``, the array itself going to the
returned blobs. It walks the dataclasses' fields, so a field added to the plan is carried
without a change here.

`decode_plan` only builds dataclasses of `fusec.codegen.plan` named in the data, with exactly
the fields this fusec's classes have (`PlanLayoutError` otherwise: the artifact comes from a
fusec whose plan differs), and nothing else: no code is looked up or run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from fusec.codegen import plan as plan_module
from fusec.codegen.plan import ProgramPlan

PLAN_TYPES: dict[str, type] = {
    name: value for name, value in vars(plan_module).items()
    if isinstance(value, type) and dataclasses.is_dataclass(value)
    and value.__module__ == plan_module.__name__
}
"""The classes a plan is made of, by name: the only ones `decode_plan` builds."""


class PlanLayoutError(ValueError):
    """Encoded plan data that does not fit this fusec's plan classes."""


def encode_plan(plan: ProgramPlan) -> tuple[Any, dict[str, np.ndarray]]:
    """The plan as JSON data, and its arrays by the names the data uses for them."""
    arrays: dict[str, np.ndarray] = {}

    def encode(value: Any, path: str) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            name = type(value).__name__
            if PLAN_TYPES.get(name) is not type(value):
                raise TypeError(f"{path}: {name} is not a class of fusec.codegen.plan")
            return {"$type": name, **{f.name: encode(getattr(value, f.name), f"{path}.{f.name}")
                                      for f in dataclasses.fields(value)}}
        if isinstance(value, np.ndarray):
            arrays[path] = value
            return {"$array": path}
        if isinstance(value, np.dtype):
            return {"$dtype": value.str}
        if isinstance(value, tuple | list):
            items = [encode(v, f"{path}[{i}]") for i, v in enumerate(value)]
            return {"$tuple": items} if isinstance(value, tuple) else items
        if isinstance(value, np.integer | np.floating | np.bool_):
            return value.item()
        if value is None or isinstance(value, str | int | float | bool):
            return value
        raise TypeError(f"{path}: cannot store a {type(value).__name__} in an artifact")

    return encode(plan, "plan"), arrays


def decode_plan(data: Any, array: Callable[[str], np.ndarray]) -> ProgramPlan:
    """The plan of `encode_plan`'s data, its arrays read by name with `array`;
    PlanLayoutError when the data does not fit this fusec's plan classes."""

    def decode(value: Any, path: str) -> Any:
        if isinstance(value, list):
            return [decode(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        if "$tuple" in value:
            return tuple(decode(v, f"{path}[{i}]") for i, v in enumerate(value["$tuple"]))
        if "$dtype" in value:
            return np.dtype(str(value["$dtype"]))
        if "$array" in value:
            return array(str(value["$array"]))
        name = value.get("$type")
        cls = PLAN_TYPES.get(str(name))
        if cls is None:
            raise PlanLayoutError(f"{path}: unknown plan class {name!r}")
        fields = {f.name for f in dataclasses.fields(cls)}
        given = set(value) - {"$type"}
        if given != fields:
            missing, extra = sorted(fields - given), sorted(given - fields)
            raise PlanLayoutError(
                f"{name} " + "; ".join(
                    part for part in (f"lacks {', '.join(missing)}" if missing else "",
                                      f"has unknown {', '.join(extra)}" if extra else "")
                    if part))
        return cls(**{k: decode(v, f"{path}.{k}") for k, v in value.items() if k != "$type"})

    plan = decode(data, "plan")
    if not isinstance(plan, ProgramPlan):
        raise PlanLayoutError("the plan is not a ProgramPlan")
    return plan
