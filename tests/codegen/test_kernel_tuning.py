"""The GEMM autotuner: picks a working candidate, caches it per device, skips impossible ones."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from fusec.codegen.kernels import tuning
from fusec.codegen.kernels.gemm import GemmTiles

SHAPES = [(1, 19, 23, 17, False), (2, 8, 9, 5, True)]
SMALL = GemmTiles(thread_m=2, thread_n=4, vector_width=4)
STAGED = GemmTiles(thread_m=3, thread_n=8, vector_width=8, group_m=2, staging="rhs", block_k=4)
TOO_LARGE_A_GROUP = GemmTiles(thread_m=1, thread_n=8, vector_width=8, group_m=1 << 20,
                              staging="rhs", block_k=4)


def test_autotune_picks_a_candidate_and_caches_it(cpu_device, tmp_path, monkeypatch):
    path = tmp_path / "tuning.json"
    chosen = tuning.autotune_gemm(cpu_device.context, cpu_device.queue, SHAPES,
                                  [TOO_LARGE_A_GROUP, SMALL, STAGED], path=path, repeats=1)
    assert chosen in (SMALL, STAGED)
    entry = json.loads(path.read_text())[tuning.device_key(cpu_device.device)]["gemm"]
    assert set(entry["seconds"]) == {SMALL.key(), STAGED.key()}
    assert tuning.cached_gemm_tiles(cpu_device.device, path) == chosen
    assert not list(tmp_path.glob(".tuning*"))  # no temporary file left behind

    def no_timing(*args, **kwargs):
        raise AssertionError("a cached choice must not be timed again")

    monkeypatch.setattr(tuning, "_time_gemm", no_timing)
    again = tuning.autotune_gemm(cpu_device.context, cpu_device.queue, SHAPES, [SMALL],
                                 path=path)
    assert again == chosen


def test_autotune_fails_when_no_candidate_works(cpu_device, tmp_path):
    with pytest.raises(ValueError, match="no GEMM tile candidate"):
        tuning.autotune_gemm(cpu_device.context, cpu_device.queue, SHAPES,
                             [TOO_LARGE_A_GROUP], path=tmp_path / "tuning.json")


def test_a_corrupt_cache_is_ignored(cpu_device, tmp_path):
    path = tmp_path / "tuning.json"
    path.write_text("{not json")
    assert tuning.cached_gemm_tiles(cpu_device.device, path) is None


def test_device_info_carries_the_cached_tiles_into_the_template(cpu_device, tmp_path):
    """`DeviceInfo.from_device` reads the tuner's choice; `gemm` then uses it by default, and
    a choice that does not fit the device (here: a work-group too large) is ignored."""
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.codegen.kernels.gemm import gemm

    path = tmp_path / "tuning.json"
    assert DeviceInfo.from_device(cpu_device.device, path).gemm_tiles is None
    tuning.autotune_gemm(cpu_device.context, cpu_device.queue, SHAPES, [STAGED], path=path,
                         repeats=1)
    info = DeviceInfo.from_device(cpu_device.device, path)
    assert info.gemm_tiles == STAGED
    assert DeviceInfo.from_device(cpu_device.device, path, tuned=False).gemm_tiles is None
    # the portable kernel (an NVIDIA device with inline PTX would take gemm_ffma_pipelined,
    # whose tiles are its own: run with FUSEC_TEST_DEVICE=gpu, the tuned tiles are still read)
    portable = replace(info, tensor_cores=())
    assert f"tiles {STAGED.key()}" in gemm("g", 1, 40, 40, 40, False,
                                           device_info=portable).source
    tuning.autotune_gemm(cpu_device.context, cpu_device.queue, SHAPES, [TOO_LARGE_A_GROUP, SMALL],
                         path=path, repeats=1, retune=True)
    data = json.loads(path.read_text())
    data[tuning.device_key(cpu_device.device)]["gemm"]["tiles"]["group_m"] = 1 << 20
    path.write_text(json.dumps(data))
    assert DeviceInfo.from_device(cpu_device.device, path).gemm_tiles is None
