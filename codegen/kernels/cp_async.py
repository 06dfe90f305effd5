"""Asynchronous global-to-local copies (``cp.async``, NVIDIA sm_80+) as inline PTX, shared by
the pipelined GEMMs (`gemm_mma_pipelined`, `gemm_ffma_pipelined`).

A kernel issues 16-byte ``cp.async.cg.shared.global`` copies (`CP_ASYNC`; zero-filled when the
byte count operand is 0), closes each pipeline stage's copies into a group (``_commit``) and
waits until all but ``stages - 2`` groups are done (``_wait``) or all are (``_wait_all``). The
emulated helpers are the test doubles for any OpenCL device: copies are synchronous, so
committing and waiting do nothing.
"""

from __future__ import annotations

CP_ASYNC = "cp.async.cg.shared.global [%0], [%1], 16, %2;"
"""One 16-byte copy: operands the shared address, the global address, the bytes to read."""


def group_helpers(name: str, stages: int) -> str:
    """C functions ``<name>_commit``, ``<name>_wait`` (all but ``stages - 2`` groups done) and
    ``<name>_wait_all``."""
    return (
        f"inline void {name}_commit(void) {{\n"
        '    asm volatile("cp.async.commit_group;" ::: "memory");\n'
        "}\n"
        f"inline void {name}_wait(void) {{\n"
        f'    asm volatile("cp.async.wait_group {stages - 2};" ::: "memory");\n'
        "}\n"
        f"inline void {name}_wait_all(void) {{\n"
        '    asm volatile("cp.async.wait_group 0;" ::: "memory");\n'
        "}\n"
    )


def emulated_group_helpers(name: str) -> str:
    """`group_helpers` for synchronous copies: they do nothing."""
    return (
        f"inline void {name}_commit(void) {{}}\n"
        f"inline void {name}_wait(void) {{}}\n"
        f"inline void {name}_wait_all(void) {{}}\n"
    )
