"""``fusec-run DECODER.mlir --generate STEPS --inputs IN.npz``: greedy decoding from the command
line, for a decoder written in fusec IR as docs/generation.md's convention has it (a
``@prefill`` and a ``@step`` function, their caches donated).

``IN.npz`` holds the prompt as ``tokens`` (``[batch, length]`` integers; int64 narrowed to
int32 where every value fits) and each weight, by argument name: every input of ``@prefill``
but ``tokens``, ``pos`` and the caches (which `fusec.generate` makes, zeroed, on the device).
Both programs are compiled for one device (``--device auto`` takes the fastest there is), the
weights bound once and shared by the step (``share_weights``), and ``STEPS`` tokens per
sequence generated on the device. The tokens are printed, a line per sequence, or written to
``-o OUT.npz`` as ``tokens`` (``[batch, STEPS]`` int32). ``--check`` runs the same greedy loop
through the numpy reference executor on the program as written (before fusion) and fails
(exit 5) unless every token is the same.

    python -m fusec.bench.decoder --write decoder.mlir --write-inputs decoder.npz
    fusec-run decoder.mlir --generate 32 --inputs decoder.npz --check
"""

from __future__ import annotations

import click
import numpy as np

from fusec.tools.cli import EXIT_INPUT

DECODE_FUNCTIONS = ("prefill", "step")
MADE_BY_GENERATE = ("tokens", "pos")
"""Inputs of both programs that generation supplies besides the caches."""


def generate_tokens(file: str, steps: int, inputs: str, device: str, platform: str | None,
                    pipeline: str, output: str | None, check: bool) -> None:
    """Compiles `file`'s two programs, generates `steps` tokens from `inputs` and prints or
    writes them; see the module docstring."""
    import fusec
    from fusec.compiler.driver import load
    from fusec.runtime.device import device_kind, select_device
    from fusec.tools.fusec_run import (
        EXIT_CHECK,
        ToolError,
        read_arrays,
        read_source,
        write_outputs,
    )

    module = load(read_source(file), file)
    names = [op.sym_name.data for op in module.ops if hasattr(op, "sym_name")]
    missing = [f"@{name}" for name in DECODE_FUNCTIONS if name not in names]
    if missing:
        raise ToolError(f"{file}: error: --generate needs the functions @prefill and @step "
                        f"(docs/generation.md); {' and '.join(missing)} not found (the file "
                        f"has {', '.join('@' + n for n in names) or 'none'})", EXIT_INPUT)
    weights = read_arrays(inputs)
    prompt = prompt_of(weights.pop("tokens", None), inputs)
    if device == "auto":  # one device for both programs (share_weights): the fastest there is
        device = device_kind(select_device("auto", platform).device)
    prefill = fusec.compile(module.clone(), "prefill", pipeline, device=device,
                            platform=platform, filename=file, params=weights)
    step = fusec.compile(module.clone(), "step", pipeline, device=device, platform=platform,
                         filename=file, params=weights, share_weights=prefill)
    for exe in (prefill, step):
        unbound = [n for n in exe.input_names if n not in MADE_BY_GENERATE
                   and n not in exe.donated]
        if unbound:
            raise ToolError(f"{inputs}: error: missing input '{unbound[0]}' of @{exe.plan.function} "
                            "(--generate takes the prompt as 'tokens' and every weight)",
                            EXIT_INPUT)
    tokens = fusec.generate(prefill, step, prompt, steps)
    if output:
        write_outputs(output, [tokens], ["tokens"])
    else:
        for row in tokens:
            click.echo(" ".join(str(int(t)) for t in row))
    if check:
        expected = reference_tokens(module, (prefill, step), weights, prompt, steps)
        differs = np.nonzero((tokens != expected).any(axis=0))[0]
        if differs.size:
            raise ToolError(f"{file}: error: --check: the tokens differ from the reference's "
                            f"from step {int(differs[0])}", EXIT_CHECK)
        click.echo(f"check: {steps} tokens x {tokens.shape[0]} sequences, the same as the "
                   "reference's")


def prompt_of(tokens: np.ndarray | None, inputs: str) -> np.ndarray:
    """The prompt of ``IN.npz`` as ``[batch, length]`` int32; a one-line error otherwise."""
    from fusec.tools.fusec_run import ToolError

    if tokens is None:
        raise ToolError(f"{inputs}: error: missing input 'tokens' (the prompt: [batch, length] "
                        "integers)", EXIT_INPUT)
    if tokens.ndim != 2 or tokens.size == 0 or not np.issubdtype(tokens.dtype, np.integer):
        raise ToolError(f"{inputs}: error: 'tokens' is {tokens.dtype}{list(tokens.shape)}; the "
                        "prompt must be [batch, length] integers", EXIT_INPUT)
    info = np.iinfo(np.int32)
    if tokens.min() < info.min or tokens.max() > info.max:
        raise ToolError(f"{inputs}: error: 'tokens' holds values outside int32", EXIT_INPUT)
    return tokens.astype(np.int32)


def reference_tokens(module, programs, weights: dict[str, np.ndarray],  # type: ignore[no-untyped-def]
                     prompt: np.ndarray, steps: int) -> np.ndarray:
    """The tokens of `fusec.generate`'s loop run by the numpy reference executor on `module`
    as written: the caches zeroed, each call's updated caches, next tokens and next position
    fed to the next call."""
    from fusec.codegen.program import argument_name
    from fusec.reference.executor import find_function, run_function
    from fusec.runtime.generation import decode_signature

    prefill, step = programs
    specs = {p.spec.name: p.spec for p in step.call_inputs}
    values: dict[str, np.ndarray] = {
        name: np.zeros(specs[name].shape, specs[name].dtype)
        for name in decode_signature(step, "step").caches}
    values["tokens"], values["pos"] = prompt, np.zeros((), np.int32)
    made = []
    for index in range(steps):
        exe = prefill if index == 0 else step
        signature = decode_signature(exe, exe.function)
        fn = find_function(module, exe.plan.function)
        every_input = [argument_name(a, i) for i, a in enumerate(fn.args)]
        outputs = run_function(module, [weights[n] if n in weights else values[n]
                                        for n in every_input], exe.plan.function)
        for spec, value in zip(exe.plan.outputs, outputs, strict=True):
            if spec.donor is not None:
                values[spec.donor] = value
        values["tokens"] = outputs[signature.token]
        values["pos"] = outputs[signature.position]
        made.append(values["tokens"])
    return np.concatenate(made, axis=1)
