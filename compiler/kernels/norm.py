"""Row normalisation: LayerNorm and RMSNorm over the last axis, with an optional residual input.

``v = x + residual`` (or ``x``), per row of ``cols`` elements:

- LayerNorm: ``out = (v - mean(v)) * rsqrt(var(v) + eps) * gamma (+ beta)``;
- RMSNorm (``rms``): ``out = v * rsqrt(mean(v * v) + eps) * gamma (+ beta)``.

Parameters in order: ``x``, ``residual`` (if `residual`), ``gamma``, ``beta`` (if `has_beta`),
``out``. Only the normalised value is written; ``x + residual`` is not.

One work-group per row; its work-items stride over the row (so that neighbouring work-items
touch neighbouring elements) and combine their partial sums with a tree reduction in local
memory. When each work-item holds at most `MAX_CACHED_SLOTS` elements the row stays in
registers, ``x + residual`` is computed once, and the variance is a second pass over the
registers (two-pass, exact). Longer rows are read twice from global memory: the first pass
accumulates Welford's (count, mean, M2) per work-item and merges them pairwise (Chan et al.),
the second normalises.
"""

from __future__ import annotations

from fusec.compiler.kernels.common import (
    MAX_CACHED_SLOTS,
    DeviceInfo,
    KernelArg,
    KernelSource,
    RowSlots,
    check_positive,
    float_literal,
    kernel_signature,
    row_local_size,
    sum_into,
    tree_reduction,
)


def layer_norm(
    name: str,
    rows: int,
    cols: int,
    eps: float,
    residual: bool = False,
    rms: bool = False,
    has_beta: bool = True,
    local_size: int | None = None,
    device_info: DeviceInfo | None = None,
) -> KernelSource:
    """A LayerNorm (or RMSNorm when `rms`) kernel over `rows` rows of `cols` float32 elements.

    The work-group size is `local_size`, or the default for `device_info` (see
    `default_row_local_size`; a CPU when None)."""
    check_positive(name, rows=rows, cols=cols)
    size = row_local_size(name, cols, local_size, device_info)
    args = (
        KernelArg("x", "in"),
        *((KernelArg("residual", "in"),) if residual else ()),
        KernelArg("gamma", "in"),
        *((KernelArg("beta", "in"),) if has_beta else ()),
        KernelArg("out", "out"),
    )
    norm = _Norm(cols, size, float_literal(eps), residual, rms, has_beta)
    slots = RowSlots(cols, size)
    body = norm.cached(slots) if slots.count <= MAX_CACHED_SLOTS else norm.streamed()
    kind = "rms_norm" if rms else "layer_norm"
    attribute = f"__attribute__((reqd_work_group_size({size}, 1, 1)))"
    source = (
        f"// {name}: {kind} of [{rows}x{cols}], work-group of {size} per row"
        f"{', residual' if residual else ''}{', beta' if has_beta else ''}\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n"
        "    const int lid = get_local_id(0);\n"
        f"    const int base = get_group_id(0) * {cols};\n"
        f"{body}}}\n"
    )
    return KernelSource(name, source, args, (rows * size,), (size,))


class _Norm:
    """Emits the body of one normalisation kernel; `cached` and `streamed` are the two shapes."""

    def __init__(self, cols: int, local_size: int, eps: str, residual: bool, rms: bool,
                 has_beta: bool) -> None:
        self.cols = cols
        self.local_size = local_size
        self.eps = eps
        self.residual = residual
        self.rms = rms
        self.has_beta = has_beta

    def load(self, index: str) -> str:
        """C expression of ``v`` at column `index` of this row."""
        x = f"x[base + {index}]"
        return f"({x} + residual[base + {index}])" if self.residual else x

    def store(self, index: str, centred: str) -> str:
        """C statement writing the normalised value; `centred` is ``v - mean`` (or ``v``)."""
        beta = f" + beta[{index}]" if self.has_beta else ""
        return f"out[base + {index}] = {centred} * rstd * gamma[{index}]{beta};"

    def sum_of(self, variable: str, value: str) -> str:
        """C code reducing the per-work-item `value` over the work-group into `variable`."""
        return (
            f"    scratch[lid] = {value};\n"
            f"{tree_reduction(self.local_size, 'lid', sum_into('scratch'))}"
            f"    const float {variable} = scratch[0];\n"
            "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        )

    def rstd(self, square_sum: str) -> str:
        """C declaration of ``rstd`` from the row's sum of squared (centred) values."""
        return f"    const float rstd = rsqrt({square_sum} / {self.cols}.0f + {self.eps});\n"

    def cached(self, slots: RowSlots) -> str:
        count = slots.count
        lines = [f"    __local float scratch[{self.local_size}];\n"]
        for s in range(count):
            value = self.load(slots.index(s))
            if slots.always_in_row(s):
                lines.append(f"    const float v{s} = {value};\n")
            else:
                lines.append(f"    const float v{s} = ({slots.guard(s)}) ? {value} : 0.0f;\n")
        total = " + ".join(f"v{s}" for s in range(count))
        if self.rms:
            squares = " + ".join(f"v{s} * v{s}" for s in range(count))
            lines.append(self.sum_of("square_sum", squares))
            lines.append(self.rstd("square_sum"))
            for s in range(count):
                lines.append(f"    {slots.guarded(s, self.store(slots.index(s), f'v{s}'))}\n")
            return "".join(lines)
        lines.append(self.sum_of("row_sum", total))
        lines.append(f"    const float mean = row_sum / {self.cols}.0f;\n")
        for s in range(count):
            centred = f"v{s} - mean"
            if not slots.always_in_row(s):
                centred = f"({slots.guard(s)}) ? {centred} : 0.0f"
            lines.append(f"    const float d{s} = {centred};\n")
        lines.append(self.sum_of("square_sum", " + ".join(f"d{s} * d{s}" for s in range(count))))
        lines.append(self.rstd("square_sum"))
        for s in range(count):
            lines.append(f"    {slots.guarded(s, self.store(slots.index(s), f'd{s}'))}\n")
        return "".join(lines)

    def streamed(self) -> str:
        loop = f"for (int i = lid; i < {self.cols}; i += {self.local_size})"
        centred = f"({self.load('i')} - row_mean)"
        if self.rms:
            return (
                f"    __local float scratch[{self.local_size}];\n"
                "    float squares = 0.0f;\n"
                f"    {loop} {{\n"
                f"        const float v = {self.load('i')};\n"
                "        squares = mad(v, v, squares);\n"
                "    }\n"
                f"{self.sum_of('square_sum', 'squares')}"
                f"{self.rstd('square_sum')}"
                f"    {loop} {{\n"
                f"        {self.store('i', self.load('i'))}\n"
                "    }\n"
            )
        return (
            f"    __local float count_of[{self.local_size}], mean_of[{self.local_size}], "
            f"m2_of[{self.local_size}];\n"
            "    float count = 0.0f, mean = 0.0f, m2 = 0.0f;\n"
            f"    {loop} {{\n"
            f"        const float v = {self.load('i')};\n"
            "        count += 1.0f;\n"
            "        const float delta = v - mean;\n"
            "        mean += delta / count;\n"
            "        m2 = mad(delta, v - mean, m2);\n"
            "    }\n"
            "    count_of[lid] = count; mean_of[lid] = mean; m2_of[lid] = m2;\n"
            f"{tree_reduction(self.local_size, 'lid', _welford_merge)}"
            "    const float row_mean = mean_of[0];\n"
            f"{self.rstd('m2_of[0]')}"
            f"    {loop} {{\n"
            f"        {self.store('i', centred)}\n"
            "    }\n"
        )


def _welford_merge(into: str, other: str) -> list[str]:
    """Merge the (count, mean, M2) partials at `other` into those at `into` (Chan et al.)."""
    return [
        f"const float nb = count_of[{other}];",
        "if (nb > 0.0f) {",
        f"    const float na = count_of[{into}], n = na + nb;",
        f"    const float delta = mean_of[{other}] - mean_of[{into}];",
        f"    mean_of[{into}] += delta * (nb / n);",
        f"    m2_of[{into}] += m2_of[{other}] + delta * delta * (na * nb / n);",
        f"    count_of[{into}] = n;",
        "}",
    ]

