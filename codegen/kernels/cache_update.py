"""Writing new rows into a KV cache at a device-side position (``nn.cache_update``).

``out[o, pos + r, n] = update[o, r, n]`` for ``r < rows``: the cache is ``[outer, length,
inner]`` around the updated axis, ``update`` ``[outer, rows, inner]``, ``pos`` one ``int`` in a
buffer (read on the device, so one compiled kernel serves every position). A row that falls
outside ``[0, length)`` is not written.

With ``update_row_stride`` the update is read as the first ``inner`` columns from
``update_offset`` of rows ``update_row_stride`` long (a slice of the last axis of a packed
q/k/v, read in place instead of copied out first by an ``nn.narrow`` kernel); ``inner`` is then
the last axis.

In place (``copy`` false) the parameters are ``update``, ``pos``, ``out`` (the cache's own
buffer): one work-item per updated element, nothing else is touched. With ``copy`` they are
``update``, ``pos``, ``cache``, ``out``: one work-item per cache element, which copies the cache
or takes the update.
"""

from __future__ import annotations

from fusec.codegen.kernels.common import KernelArg, KernelSource, check_positive, kernel_signature


def cache_update(name: str, outer: int, length: int, rows: int, inner: int, dtype: str,
                 copy: bool, update_row_stride: int | None = None,
                 update_offset: int = 0) -> KernelSource:
    """A cache-update kernel over buffers of OpenCL element type ``dtype``."""
    check_positive(name, outer=outer, length=length, rows=rows, inner=inner)
    stride = inner if update_row_stride is None else update_row_stride
    if stride < update_offset + inner or update_offset < 0:
        raise ValueError(f"kernel '{name}': columns [{update_offset}, {update_offset + inner}) "
                         f"do not fit rows of {stride}")

    def update_at(row: str, n: str) -> str:
        """The update's element ``n`` of flattened row ``row`` (``o * rows + r``)."""
        offset = f" + {update_offset}" if update_offset else ""
        return f"update[(long)({row}) * {stride}{offset} + {n}]"

    args = (KernelArg("update", "in", dtype), KernelArg("pos", "in", "int"),
            *((KernelArg("cache", "in", dtype),) if copy else ()),
            KernelArg("out", "out", dtype))
    if copy:
        total = outer * length * inner
        body = (
            f"    const int t = (gid / {inner}) % {length};\n"
            f"    const int r = t - pos[0];\n"
            f"    if (r >= 0 && r < {rows}) {{\n"
            f"        const int o = gid / {inner * length}, n = gid % {inner};\n"
            f"        out[gid] = {update_at(f'o * {rows} + r', 'n')};\n"
            "    } else {\n"
            "        out[gid] = cache[gid];\n"
            "    }\n"
        )
    else:
        total = outer * rows * inner
        body = (
            f"    const int n = gid % {inner}, r = (gid / {inner}) % {rows};\n"
            f"    const int o = gid / {inner * rows}, t = pos[0] + r;\n"
            f"    if (t < 0 || t >= {length}) return;\n"
            f"    out[((long)o * {length} + t) * {inner} + n] = "
            f"{update_at(f'o * {rows} + r', 'n')};\n"
        )
    mode = "copied" if copy else "in place"
    read = (f", the update read from columns {update_offset}.. of rows of {stride}"
            if stride != inner else "")
    source = (
        f"// {name}: cache_update [{outer}x{length}x{inner}] with {rows} rows at pos, {mode}"
        f"{read}\n"
        f"{kernel_signature(name, args)}\n{{\n"
        "    const int gid = get_global_id(0);\n"
        f"    if (gid >= {total}) return;\n"
        f"{body}}}\n"
    )
    return KernelSource(name, source, args, (total,), None)
