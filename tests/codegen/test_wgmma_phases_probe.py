"""bench/wgmma_phases.py's clock reads, placed in a `gemm_wgmma` kernel's text: checked on the
CPU with each read replaced by its line number (the emulated kernel runs the rest)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from fusec.bench.wgmma_phases import PHASES, SLOTS, instrumented, phases
from fusec.codegen.kernels.common import KernelArg
from fusec.codegen.kernels.gemm_wgmma import emulated, gemm_wgmma
from tests.codegen.test_kernel_gemm_wgmma import MMA, operands

READ = re.compile(r'asm volatile\("mov\.u64 %0, %%(clock64|globaltimer);" : "=l"\((\w+)\)\);')


def numbered(source: str) -> str:
    """Each clock read replaced by its line's number (``__LINE__``), so that what a work-group
    wrote says which read wrote it."""
    return READ.sub(lambda m: f"{m.group(2)} = (ulong)__LINE__;", source)


@pytest.mark.skipif(MMA == "ptx", reason="reads the clocks' text, not the GPU's clocks")
@pytest.mark.parametrize("groups", [0, 4], ids=["a-work-group-a-block", "persistent"])
def test_each_block_writes_its_phases_in_order(launch, groups):
    """A work-group writes its start and end, and for each of its blocks the four reads of
    `PHASES` in the kernel's order (so `phases` finds every difference positive) into its own
    row; no other word; and the product is still right."""
    m, n, k = 1152, 256, 192
    kernel = gemm_wgmma("g", m, n, k, "f16", block_n=128, persistent_groups=groups)
    source = numbered(instrumented(kernel.source, bool(groups)))
    assert source.count("= (ulong)__LINE__;") == len(PHASES) + 2
    timed = emulated(replace(kernel, source=source,
                             args=(*kernel.args, KernelArg("clocks", "out", "ulong"))))
    launched = kernel.global_size[0] // kernel.local_size[0]
    a, b_t, a32, b32 = operands("f16", m, n, k, seed=51)
    out = launch(timed, {"lhs": a, "rhs_t": b_t}, {"out": (m, n), "clocks": (launched, SLOTS)})
    error = float(np.abs(out["out"].astype(np.float32) - a32 @ b32.T).max())
    assert error <= 2e-3 * float(np.abs(a32 @ b32.T).max())
    words = out["clocks"].astype(np.int64)
    blocks = (m // 128) * (n // 128)
    blocks_of = [len(range(g, blocks, launched)) for g in range(launched)]
    assert sum(blocks_of) == blocks and (groups == 0 or max(blocks_of) == 5)
    lines = words[0, 2:6]
    assert list(lines) == sorted(lines) and len(set(lines)) == 4
    for group, count in enumerate(blocks_of):
        assert 0 < words[group, 0] < lines[0] and words[group, 1] > lines[3]
        for block in range(count):
            assert list(words[group, 2 + 4 * block:6 + 4 * block]) == list(lines)
        assert (words[group, 2 + 4 * count:] == -1).all()  # never written
    cycles = phases(out["clocks"], blocks_of)
    assert all(c > 0 for key in ("first copies", "K loop", "store") for c in cycles[key])
    assert len(cycles["between"]) == blocks - launched
