"""Writing new rows into a KV cache at a device-side position (``nn.cache_update``).

``out[o, pos + r, n] = update[o, r, n]`` for ``r < rows``: the cache is ``[outer, length,
inner]`` around the updated axis, ``update`` ``[outer, rows, inner]``, ``pos`` one ``int`` in a
buffer (read on the device, so one compiled kernel serves every position). A row that falls
outside ``[0, length)`` is not written.

In place (``copy`` false) the parameters are ``update``, ``pos``, ``out`` (the cache's own
buffer): one work-item per updated element, nothing else is touched. With ``copy`` they are
``update``, ``pos``, ``cache``, ``out``: one work-item per cache element, which copies the cache
or takes the update.
"""

from __future__ import annotations

from fusec.codegen.kernels.common import KernelArg, KernelSource, check_positive, kernel_signature


def cache_update(name: str, outer: int, length: int, rows: int, inner: int, dtype: str,
                 copy: bool) -> KernelSource:
    """A cache-update kernel over buffers of OpenCL element type ``dtype``."""
    check_positive(name, outer=outer, length=length, rows=rows, inner=inner)
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
            f"        out[gid] = update[((long)o * {rows} + r) * {inner} + n];\n"
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
            f"    out[((long)o * {length} + t) * {inner} + n] = update[gid];\n"
        )
    mode = "copied" if copy else "in place"
    source = (
        f"// {name}: cache_update [{outer}x{length}x{inner}] with {rows} rows at pos, {mode}\n"
        f"{kernel_signature(name, args)}\n{{\n"
        "    const int gid = get_global_id(0);\n"
        f"    if (gid >= {total}) return;\n"
        f"{body}}}\n"
    )
    return KernelSource(name, source, args, (total,), None)
