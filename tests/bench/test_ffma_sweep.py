"""`fusec.bench.ffma_sweep`'s variants (the sweep itself runs on the GPU machine)."""

from __future__ import annotations

import pytest

from fusec.bench.ffma_sweep import _kernel


@pytest.mark.parametrize("variant,k_major", [
    ("default", False),
    ("default,k", True),
    ("64,64,16,2,2,4,3,k", True),
    ("128,64,16,2,2,8,3,a,k", True),
    ("128,64,16,2,2,8,3,a", False),
])
def test_each_variant_builds_the_kernel_it_names(variant, k_major):
    header = _kernel(variant, 256, 192, 128, None).source.splitlines()[0]
    assert ("]^T" in header) == k_major


def test_the_wgmma_variants_read_b_k_major_and_split_where_named():
    from fusec.bench.ffma_sweep import _reads_b_k_major

    for variant, split in (("tf32", False), ("tf32x3", True)):
        source = _kernel(variant, 256, 256, 64, None).source
        assert "m64n128k8.f32.tf32.tf32" in source and _reads_b_k_major(variant)
        assert ("split TF32" in source) == split
