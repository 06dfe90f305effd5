"""Stage 3, lowering: `nn`/`fused` IR in, the kernel-level IR (`kernel` dialect) out.

`lower-to-kernels` turns each function into a host schedule of buffers and kernel launches;
the kernel-IR passes after it (`fuse-launches`, `plan-buffers`) rewrite that schedule. `LOWERING_PASSES` lists
them for `fusec.compiler.registry`. The result goes to `fusec.codegen`, next.
"""

from __future__ import annotations

# CLI name -> (module in fusec.lowering, class name)
LOWERING_PASSES: dict[str, tuple[str, str]] = {
    "fuse-launches": ("fuse_launches", "FuseLaunchesPass"),
    "lower-to-kernels": ("lower_to_kernels", "LowerToKernelsPass"),
    "plan-buffers": ("plan_buffers", "PlanBuffersPass"),
}
