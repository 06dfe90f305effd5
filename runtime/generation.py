"""Greedy text generation with a static KV cache: a prefill program, then one step program
called once per token, every value staying on the device.

The two programs (`Executable`s of one device, weights bound) follow one convention
(docs/generation.md, examples/tiny_decoder.mlir):

- inputs ``tokens`` (``[B, S] i32``: the prompt for the prefill, ``[B, 1]`` for a step) and
  ``pos`` (``tensor<i32>``: the position of the first of them), and the caches: every donated
  input (``fusec.aliasing_output``), the same names and types in both programs;
- results: each cache at the index its input is donated to (updated in place), and, in this
  order, the next token of each sequence (``[B, 1] i32``, chosen on the device, e.g. by
  ``nn.argmax``) and the next position (``tensor<i32>``, ``pos + S``).

`generate` allocates the caches (zeros) on the device, calls the prefill on the prompt, then
the step on the token it returned, each call taking the previous call's outputs as device
arrays: no value goes back to the host between tokens; the host only enqueues the launches.
The tokens are read once at the end (or one at a time, to stream them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fusec.errors import InputError
from fusec.runtime.device_array import DeviceArray
from fusec.runtime.executable import Executable


@dataclass(frozen=True)
class DecodeSignature:
    """Where a decode program's values are: its call inputs in order, the caches' names, the
    index of the next-token and next-position results."""

    inputs: tuple[str, ...]
    caches: tuple[str, ...]
    token: int
    position: int


def decode_signature(exe: Executable, what: str) -> DecodeSignature:
    """The convention of the module docstring checked on `exe`; an InputError naming `what`
    (the prefill or the step) and what is missing otherwise."""
    inputs = tuple(exe.input_names)
    for name in ("tokens", "pos"):
        if name not in inputs:
            raise InputError(f"the {what} program {exe.function} has no input '{name}' "
                             f"(inputs: {', '.join(inputs)})")
    caches = tuple(n for n in inputs if n in exe.donated)
    if not caches:
        raise InputError(f"the {what} program {exe.function} has no donated input (a cache "
                         "with fusec.aliasing_output)")
    others = [i for i, spec in enumerate(exe.plan.outputs) if spec.donor is None]
    if len(others) != 2:
        raise InputError(f"the {what} program {exe.function} must return the next tokens and "
                         f"the next position besides its caches, got {len(others)} other results")
    token, position = others
    tokens = exe.plan.outputs[token]
    if tokens.dtype != np.int32 or len(tokens.shape) != 2 or tokens.shape[1] != 1:
        raise InputError(f"the {what} program {exe.function} returns {tokens.dtype}"
                         f"{list(tokens.shape)} as its next tokens, expected int32[B, 1]")
    if exe.plan.outputs[position].shape != () or exe.plan.outputs[position].dtype != np.int32:
        raise InputError(f"the {what} program {exe.function} must return the next position "
                         "as tensor<i32>")
    return DecodeSignature(inputs, caches, token, position)


def generate(prefill: Executable, step: Executable, prompt: np.ndarray, steps: int,
             stream: Callable[[np.ndarray], None] | None = None) -> np.ndarray:
    """The ``[B, steps]`` int32 tokens that `prefill` on `prompt` (``[B, S]`` int32) and then
    `step` choose greedily, one per call; see the module docstring. `stream`, if given, gets
    each ``[B, 1]`` token as it is made (one read from the device per token)."""
    if steps < 1:
        raise InputError(f"generate: steps must be at least 1, got {steps}")
    first = decode_signature(prefill, "prefill")
    then = decode_signature(step, "step")
    if set(first.caches) != set(then.caches):
        raise InputError(f"the prefill's caches ({', '.join(first.caches)}) are not the step's "
                         f"({', '.join(then.caches)})")
    specs = {p.spec.name: p.spec for p in step.call_inputs}
    for name in then.caches:
        if prefill.inputs[name].spec.shape != specs[name].shape:
            raise InputError(f"cache '{name}' is {list(prefill.inputs[name].spec.shape)} in the "
                             f"prefill and {list(specs[name].shape)} in the step")
    caches = {name: step.to_device(np.zeros(specs[name].shape, specs[name].dtype))
              for name in then.caches}
    values: dict[str, DeviceArray] = {
        **caches, "tokens": step.to_device(np.ascontiguousarray(prompt, np.int32)),
        "pos": step.to_device(np.zeros((), np.int32))}
    made: list[np.ndarray | DeviceArray] = []
    program, signature = prefill, first
    for _ in range(steps):
        outputs = program(*(values[name] for name in signature.inputs))
        token = outputs[signature.token]
        values["tokens"], values["pos"] = token, outputs[signature.position]
        made.append(token.get() if stream is not None else token)
        if stream is not None:
            stream(made[-1])  # type: ignore[arg-type]
        program, signature = step, then
    return np.concatenate([t if isinstance(t, np.ndarray) else t.get() for t in made], axis=1)
