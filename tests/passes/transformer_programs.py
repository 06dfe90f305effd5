"""Seeded random transformer programs for the fusion tests.

A program is a chain of blocks over a hidden state ``[B, S, E]``: linear layers with biases and
activations, residual norms, an RMS norm reshaped to rows, SwiGLU FFNs (two matmuls or one
concatenated), shared-input projections, attention, whole BERT layers. Each block may carry
distractors that must block its fusion: an intermediate returned or read twice, a bias that is
really a residual, a norm over another axis, slices at the wrong offsets, a causal or unmasked
attention, more tokens than ``max-tokens``. ``program(seed)`` returns the text of one
``func.func``; ``layers(n)`` a long program without distractors (for the linear-time test).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

Shape = tuple[int, ...]


def ty(shape: Shape, elem: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


@dataclass
class Builder:
    """Writes one function: arguments, ops (each result's shape tracked), extra results."""

    rng: random.Random
    distractors: bool = True
    args: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    shapes: dict[str, Shape] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    count: int = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"%{prefix}{self.count}"

    def arg(self, prefix: str, shape: Shape) -> str:
        name = self.fresh(prefix)
        self.args.append(f"{name}: {ty(shape)}")
        self.shapes[name] = shape
        return name

    def emit(self, shape: Shape, text: str) -> str:
        name = self.fresh("v")
        self.lines.append(f"  {name} = {text}")
        self.shapes[name] = shape
        return name

    def chance(self, p: float) -> bool:
        return self.distractors and self.rng.random() < p

    def ret(self, value: str) -> None:
        self.outputs.append(value)

    # --- ops ---------------------------------------------------------------------------------

    def matmul(self, x: str, w: str) -> str:
        sx, sw = self.shapes[x], self.shapes[w]
        out = (*sx[:-1], sw[-1])
        return self.emit(out, f"nn.matmul {x}, {w} : {ty(sx)}, {ty(sw)} -> {ty(out)}")

    def binary(self, op: str, a: str, b: str) -> str:
        sa, sb = self.shapes[a], self.shapes[b]
        out = tuple(int(d) for d in np.broadcast_shapes(sa, sb))
        return self.emit(out, f"nn.{op} {a}, {b} : {ty(sa)}, {ty(sb)} -> {ty(out)}")

    def unary(self, op: str, x: str) -> str:
        s = self.shapes[x]
        attrs = ""
        if op == "gelu_tanh":
            op, attrs = "gelu", ' {approximate = "tanh"}'
        return self.emit(s, f"nn.{op} {x}{attrs} : {ty(s)} -> {ty(s)}")

    def narrow(self, x: str, axis: int, start: int, length: int) -> str:
        s = self.shapes[x]
        out = tuple(length if i == axis % len(s) else d for i, d in enumerate(s))
        props = f"{{axis = {axis} : i64, start = {start} : i64, length = {length} : i64}}"
        return self.emit(out, f"nn.narrow {x} {props} : {ty(s)} -> {ty(out)}")

    def reshape(self, x: str, shape: Shape) -> str:
        return self.emit(shape, f"nn.reshape {x} : {ty(self.shapes[x])} -> {ty(shape)}")

    def norm(self, kind: str, x: str, axis: int = -1) -> str:
        s = self.shapes[x]
        width = s[axis]
        gamma = self.arg("g", (width,))
        props = "" if axis == -1 else f" {{axis = {axis} : i64}}"
        if kind == "layer_norm":
            beta = self.arg("b", (width,))
            return self.emit(
                s,
                f"nn.layer_norm {x}, {gamma}, {beta}{props} : {ty(s)}, {ty((width,))}, "
                f"{ty((width,))} -> {ty(s)}",
            )
        return self.emit(s, f"nn.rms_norm {x}, {gamma}{props} : {ty(s)}, {ty((width,))} -> {ty(s)}")

    def attention(
        self, q: str, k: str, v: str, heads: int, dim: int, mask: str | None, props: str
    ) -> str:
        s = self.shapes[q]
        m = f" mask {mask}" if mask else ""
        mt = f", {ty(self.shapes[mask])}" if mask else ""
        attrs = f"{{num_heads = {heads} : i64, head_dim = {dim} : i64{props}}}"
        return self.emit(
            s, f"nn.attention {q}, {k}, {v}{m} {attrs} : {ty(s)}, {ty(s)}, {ty(s)}{mt} -> {ty(s)}"
        )

    def constant(self, shape: Shape, value: float) -> str:
        return self.emit(
            shape, f"nn.constant {{value = dense<{value}> : {ty(shape)}}} : {ty(shape)}"
        )

    def text(self, name: str, result: str) -> str:
        outs = [result, *self.outputs]
        types = ", ".join(ty(self.shapes[o]) for o in outs)
        return "\n".join(
            [
                f"func.func @{name}({', '.join(self.args)}) -> ({types}) {{",
                *self.lines,
                f"  func.return {', '.join(outs)} : {types}",
                "}",
            ]
        )


ACTIVATIONS = ["none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh", "exp"]

# --- blocks: each maps the hidden state [B, S, E] to a new one ----------------------------------


def linear(b: Builder, h: str, act: str | None = None, width: int | None = None) -> str:
    """``act(h @ w + bias)``, the bias sometimes [1], [], or a full residual (not a bias)."""
    shape = b.shapes[h]
    n = width or shape[-1]
    w = b.arg("w", (shape[-1], n))
    kind = b.rng.choice(["vec"] * 6 + ["one", "scalar", "full"]) if b.distractors else "vec"
    bias_shape = {"vec": (n,), "one": (1,), "scalar": (), "full": (*shape[:-1], n)}[kind]
    bias = b.arg("bias", bias_shape)
    mm = b.matmul(h, w)
    if b.chance(0.1):
        b.ret(mm)
    y = b.binary("add", mm, bias) if b.rng.random() < 0.5 else b.binary("add", bias, mm)
    act = act or b.rng.choice(ACTIVATIONS)
    if act != "none":
        if b.chance(0.1):
            b.ret(y)
        y = b.unary(act, y)
    return y


def residual_norm(b: Builder, h: str) -> str:
    shape = b.shapes[h]
    r = b.arg("r", shape[-1:] if b.chance(0.15) else shape)
    s = b.binary("add", h, r) if b.rng.random() < 0.5 else b.binary("add", r, h)
    kind = b.rng.choice(["layer_norm", "rms_norm"])
    axis = 1 if b.chance(0.15) else b.rng.choice([-1, len(shape) - 1])
    n = b.norm(kind, s, axis)
    if b.chance(0.15):
        b.ret(s)  # the seed's bug: a returned residual sum
    if b.chance(0.1):
        n = b.binary("add", n, s)  # the residual stream continues
    return n


def rms_rows(b: Builder, h: str) -> str:
    shape = b.shapes[h]
    n = b.norm("rms_norm", h, 1 if b.chance(0.1) else -1)
    if b.chance(0.15):
        b.ret(n)
    rows = (math.prod(shape[:-1]), shape[-1])
    if b.chance(0.1):
        rows = (shape[0], math.prod(shape[1:]))  # not a leading flatten
    flat = b.reshape(n, rows)
    return b.reshape(b.unary("tanh", flat), shape)


def swiglu_dual(b: Builder, h: str) -> str:
    shape = b.shapes[h]
    f = 2 * shape[-1]
    wg, wu, wd = (
        b.arg("wg", (shape[-1], f)),
        b.arg("wu", (shape[-1], f)),
        b.arg("wd", (f, shape[-1])),
    )
    x_up = b.arg("x", shape) if b.chance(0.1) else h
    g, u = (b.matmul(h, wg), b.matmul(x_up, wu))
    a = b.unary("sigmoid" if b.chance(0.1) else "silu", g)
    for value in (g, u, a):
        if b.chance(0.07):
            b.ret(value)
    y = b.binary("mul", a, u) if b.rng.random() < 0.5 else b.binary("mul", u, a)
    return b.matmul(y, wd)


def swiglu_cat(b: Builder, h: str) -> str:
    shape = b.shapes[h]
    f = shape[-1]
    extra = f if b.chance(0.1) else 0  # a third slice: cat is wider than the two halves
    wc, wd = b.arg("wc", (shape[-1], 2 * f + extra)), b.arg("wd", (f, shape[-1]))
    cat = b.matmul(h, wc)
    gate_first = b.rng.random() < 0.5
    off = f // 2 if b.chance(0.1) else f
    up = b.narrow(cat, -1, off if gate_first else 0, f)
    gate = b.narrow(cat, -1, 0 if gate_first else off, f)
    a = b.unary("silu", gate)
    for value in (up, gate, a):
        if b.chance(0.07):
            b.ret(value)
    y = b.binary("mul", up, a) if b.rng.random() < 0.5 else b.binary("mul", a, up)
    return b.matmul(y, wd)


def shared_input(b: Builder, h: str) -> str:
    shape = b.shapes[h]
    e = shape[-1]
    outs = []
    for _ in range(b.rng.randint(2, 4)):
        if b.chance(0.15):
            w = b.arg("wb", (*shape[:-2], e, e))  # a batched weight
        elif b.rng.random() < 0.2:
            w = b.constant((e, e), round(b.rng.uniform(-0.2, 0.2), 3))  # a late weight
        else:
            w = b.arg("w", (e, e))
        outs.append(b.matmul(h, w))
        if b.chance(0.1):
            b.ret(outs[-1])
    y = outs[0]
    for o in outs[1:]:
        y = b.binary("add", y, o)
    return y


def attention(b: Builder, h: str, heads: int = 2) -> str:
    shape = b.shapes[h]
    e = shape[-1]
    dim = e // heads
    qkv = linear(b, h, act="none", width=3 * e)
    if b.chance(0.08):
        b.ret(qkv)
    starts = [0, e, 2 * e]
    if b.chance(0.08):
        starts = [e, 0, 2 * e]
    q, k, v = (b.narrow(qkv, -1 if b.rng.random() < 0.5 else 2, s, e) for s in starts)
    if b.chance(0.08):
        b.ret(k)
    mask = None if b.chance(0.08) else b.arg("mask", shape[:2])
    props = ""
    if b.chance(0.08):
        props = ", causal = true"
    elif b.chance(0.08):
        props = ", scale = 0.25 : f32"
    a = b.attention(q, k, v, heads, dim, mask, props)
    if b.chance(0.08):
        b.ret(a)
    return linear(b, a, act="none")


def bert_layer(b: Builder, h: str) -> str:
    a = attention(b, h)
    shape = b.shapes[h]
    s1 = b.binary("add", a, h)
    if b.chance(0.1):
        b.ret(s1)
    h1 = b.norm("layer_norm", s1)
    if b.chance(0.1):
        b.ret(h1)
    f1 = linear(b, h1, act=b.rng.choice(["gelu", "relu", "silu"]), width=2 * shape[-1])
    f2 = linear(b, f1, act="none", width=shape[-1])
    s2 = b.binary("add", f2, h1) if b.rng.random() < 0.5 else b.binary("add", h1, f2)
    return b.norm("layer_norm", s2)


BLOCKS: Sequence[Callable[[Builder, str], str]] = (
    linear,
    residual_norm,
    rms_rows,
    swiglu_dual,
    swiglu_cat,
    shared_input,
    attention,
    bert_layer,
)


def program(seed: int, blocks: int = 6) -> str:
    """One random program: ``blocks`` blocks with distractors, on 4 or 80 tokens."""
    rng = random.Random(seed)
    b = Builder(rng)
    batch, seq = rng.choice([(1, 4), (2, 3), (2, 40)])
    h = b.arg("hidden", (batch, seq, 16))
    for _ in range(blocks):
        h = rng.choice(BLOCKS)(b, h)
    return b.text(f"random_{seed}", h)


def layers(n: int) -> str:
    """``n`` layers without distractors (BERT layer, SwiGLU FFN, pre-norm), on 4 tokens."""
    b = Builder(random.Random(0), distractors=False)
    h = b.arg("hidden", (1, 4, 16))
    for i in range(n):
        h = (bert_layer, swiglu_dual, residual_norm, shared_input)[i % 4](b, h)
    return b.text(f"layers_{n}", h)
