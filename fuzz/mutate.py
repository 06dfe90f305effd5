"""Mangled program text for `fusec-opt`: every case ends in a one-line error, never a crash.

`mutate` applies one random edit to a program's text (bytes): truncation, a deleted or
duplicated span, random or non-UTF-8 bytes, a number made huge, zero or negative, a type or
op name changed, lines swapped, or deep nesting (brackets, parentheses, regions). `run_tool`
runs ``fusec-opt`` (its ``main``, given) in this process on the result, once to print and fuse
it and once to lower it to OpenCL C, and `judge` says what is wrong with the outcome: an exit
code other than 0 or 1, more than one line on stderr, an internal error, a traceback, or no end
within the time limit.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Mutation = Callable[[np.random.Generator, bytes], bytes]
ToolMain = Callable[[list[str]], int]
"""A tool's entry point, ``fusec.tools.fusec_opt.main`` (passed in: `tools` imports `fuzz`,
not the other way round)."""

NUMBER = re.compile(rb"\d+")
TYPE = re.compile(rb"f32|i32|i1|f16|i64")
OP_NAME = re.compile(rb"nn\.[a-z_]+")
HUGE = (b"0", b"-1", b"99999999999", b"18446744073709551617", b"4294967296", b"2147483648",
        b"1e39", b"nan", b"0x7FC00000")


def _span(rng: np.random.Generator, text: bytes) -> tuple[int, int]:
    start = int(rng.integers(0, len(text) + 1))
    end = min(len(text), start + int(rng.integers(1, 40)))
    return start, end


def truncate(rng: np.random.Generator, text: bytes) -> bytes:
    return text[: int(rng.integers(0, len(text) + 1))]


def delete_span(rng: np.random.Generator, text: bytes) -> bytes:
    start, end = _span(rng, text)
    return text[:start] + text[end:]


def duplicate_span(rng: np.random.Generator, text: bytes) -> bytes:
    start, end = _span(rng, text)
    return text[:end] + text[start:end] + text[end:]


def random_bytes(rng: np.random.Generator, text: bytes) -> bytes:
    at = int(rng.integers(0, len(text) + 1))
    noise = bytes(int(b) for b in rng.integers(0, 256, int(rng.integers(1, 8))))
    return text[:at] + noise + text[at:]


def punctuation(rng: np.random.Generator, text: bytes) -> bytes:
    at = int(rng.integers(0, len(text) + 1))
    piece = bytes([int(rng.choice(list(b'%@{}()<>[]:,="x-#^!')))])
    return text[:at] + piece + text[at:]


def _replace_match(rng: np.random.Generator, text: bytes, pattern: re.Pattern[bytes],
                   choices: tuple[bytes, ...]) -> bytes:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = matches[int(rng.integers(len(matches)))]
    return text[: m.start()] + choices[int(rng.integers(len(choices)))] + text[m.end():]


def number(rng: np.random.Generator, text: bytes) -> bytes:
    return _replace_match(rng, text, NUMBER, HUGE)


def type_name(rng: np.random.Generator, text: bytes) -> bytes:
    return _replace_match(rng, text, TYPE, (b"f32", b"i32", b"i1", b"f64", b"bf16", b"index",
                                            b"i0", b"f8E4M3", b"complex<f32>", b"none"))


def op_name(rng: np.random.Generator, text: bytes) -> bytes:
    return _replace_match(rng, text, OP_NAME, (b"nn.add", b"nn.matmul", b"nn.softmax",
                                               b"nn.where", b"nn.reduce_sum", b"nn.attention",
                                               b"nn.frobnicate", b"fused.elementwise",
                                               b"nn.concat", b"nn.constant"))


def swap_lines(rng: np.random.Generator, text: bytes) -> bytes:
    lines = text.split(b"\n")
    if len(lines) < 2:
        return text
    i, j = (int(k) for k in rng.choice(len(lines), 2, replace=False))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def deep_nesting(rng: np.random.Generator, text: bytes) -> bytes:
    depth = int(rng.choice([200, 1000, 5000, 50000]))
    kind = int(rng.integers(4))
    if kind == 0:  # nested dense literal
        body = b"[" * depth + b"1.0" + b"]" * depth
        return (b"func.func @f() {\n  %c = nn.constant {value = dense<" + body
                + b"> : tensor<1xf32>} : tensor<1xf32>\n  func.return\n}\n")
    if kind == 1:  # nested types
        return (b"func.func @f(%x: " + b"tensor<" * depth + b"f32" + b">" * depth
                + b") {\n  func.return\n}\n")
    if kind == 2:  # nested regions
        return b"builtin.module {\n" * depth + b"}\n" * depth
    at = int(rng.integers(0, len(text) + 1))  # parentheses anywhere
    return text[:at] + b"(" * depth + text[at:]


MUTATIONS: tuple[Mutation, ...] = (
    truncate, delete_span, duplicate_span, random_bytes, punctuation, number, number,
    type_name, op_name, swap_lines, deep_nesting,
)


def mutate(rng: np.random.Generator, text: bytes) -> bytes:
    """``text`` with one to three random edits."""
    for _ in range(int(rng.integers(1, 4))):
        text = MUTATIONS[int(rng.integers(len(MUTATIONS)))](rng, text)
    return text


class TimedOut(BaseException):
    """The tool did not end within the limit (a BaseException: no handler swallows it)."""


@dataclass(frozen=True)
class Outcome:
    args: tuple[str, ...]
    code: int | None
    stderr: str
    timed_out: bool = False


TOOL_RUNS = (("-p", "default"), ("-t", "opencl"))
"""The ``fusec-opt`` runs each mutated text goes through: fuse, and lower to OpenCL C."""


def run_tool(main: ToolMain, data: bytes, args: tuple[str, ...], seconds: int = 20) -> Outcome:
    """Runs ``main([FILE, *args])`` (``fusec-opt``) in this process on ``data``."""
    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="fusec-fuzz-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        err, out = io.StringIO(), io.StringIO()

        def alarm(signum: int, frame: object) -> None:
            raise TimedOut()

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.alarm(seconds)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = main([path, *args])
        except TimedOut:
            return Outcome(args, None, err.getvalue(), timed_out=True)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        return Outcome(args, code, err.getvalue().replace(path, "<mutated>"))
    finally:
        os.unlink(path)


def judge(outcome: Outcome) -> str | None:
    """What is wrong with ``outcome`` (None: a success or a clean one-line error)."""
    where = f"fusec-opt {' '.join(outcome.args)}"
    if outcome.timed_out:
        return f"{where}: no end within the time limit"
    lines = outcome.stderr.strip().splitlines()
    if "Traceback" in outcome.stderr:
        return f"{where}: traceback: {lines[-1] if lines else ''}"
    if "internal error" in outcome.stderr:
        return f"{where}: {lines[0]}"
    if outcome.code not in (0, 1):
        return f"{where}: exit {outcome.code}: {lines[0] if lines else '(no message)'}"
    if len(lines) > 1:
        return f"{where}: {len(lines)} lines on stderr: {lines[0]} / {lines[1]}"
    if outcome.code == 1 and not lines:
        return f"{where}: exit 1 without a message"
    return None
