"""``python -m fusec.bench.vendor_floor``: kernels sorted into products, attention and the rest
by their names as the H200's profiles name them, the floor and the room it leaves, on the rows
of a kernel table written here (no GPU), and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusec.bench import vendor_floor

ROW = {
    "model": "bert", "dtype": "f16", "summary": "BERT-base, 12 layers, B=32 S=128",
    "inductor_kernel_ms": 2.0,
    "inductor_kernels": [
        ["nvjet_sm#_hsh_#x#_#x#_#x#_h_bz_coopB_bias_TNT", 1.0, 60.0],
        ["void cublasLt::splitKreduce_kernel<#, #, int, float, __half>", 0.1, 4.0],
        ["cudnn_generated_fort_native_sdpa_sm#_flash_fprop_wgmma_f#_knob", 0.3, 12.0],
        ["triton_poi_fused__scaled_dot_product_cudnn_attention__to_copy_add", 0.05, 3.0],
        ["triton_per_fused_add_native_layer_norm_view_#", 0.2, 24.0],
    ],
    "fusec_kernel_ms": 2.2,
    "fusec_kernels": [
        ["main_gemm_#", 1.2, 49.0], ["main_gemm_split_sum_#", 0.1, 1.0],
        ["main_attention_#", 0.45, 12.0], ["main_layer_norm_#", 0.2, 25.0],
    ],
}


@pytest.mark.parametrize("name, kind", [
    ("nvjet_sm#_hsh_#x#_#x#_#x#_v_bz_splitK_TNT", "product"),
    ("void cutlass::Kernel#<cutlass_#_simt_sgemm_#x#_#x#_nn_align#>", "product"),
    ("main_gemm_swiglu_#", "product"),
    ("cudnn_generated_fort_native_sdpa_sm#_flash_fprop_wgmma_f#_knob", "attention"),
    ("main_attention_#", "attention"),
    ("triton_poi_fused__scaled_dot_product_cudnn_attention__to_copy", "other"),
    ("triton_tem_fused_addmm_#", "product"),
    ("triton_poi_fused_gemm_flash_view_#", "other"),
    ("main_layer_norm_#", "other"),
    ("Memset (Device)", "other"),
])
def test_kind_of(name: str, kind: str) -> None:
    assert vendor_floor.kind_of(name) == kind


def test_floor_and_room() -> None:
    row = vendor_floor.floor_row(ROW, 0.8)
    assert row is not None
    assert row["floor_ms"] == pytest.approx(1.4)  # products 1.1 and attention 0.3
    assert row["floor_share"] == pytest.approx(0.7)
    assert row["room_ms"] == pytest.approx(0.8 * 2.0 - 1.4)
    assert row["inductor_other_ms"] == pytest.approx(0.6)  # the rest of 2.0, table or not
    assert row["fusec_products_ratio"] == pytest.approx(1.3 / 1.1, abs=1e-3)
    assert row["fusec_attention_ratio"] == pytest.approx(1.5)
    assert row["fusec_other_ms"] == pytest.approx(0.45)


def test_row_without_tables_is_skipped() -> None:
    assert vendor_floor.floor_row({"model": "bert", "fusec_kernel_ms": 1.0}, 0.8) is None


def test_main_reads_a_log_and_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "run.log"
    log.write_text("-- inductor: 2.0 ms of kernels a call\n" + json.dumps(ROW) + "\n")
    listed = tmp_path / "run.json"
    listed.write_text(json.dumps([ROW]))
    assert vendor_floor.main([str(log), str(listed), "--ratio", "0.9"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and "room@0.9" in out[0]
    assert out[1].split()[-9:] == out[2].split()[-9:]
    cells = out[1].split()
    assert "1.4000" in cells and "0.700" in cells and "0.4000" in cells  # floor, share, room


def test_main_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert vendor_floor.main([str(tmp_path / "missing.json")]) == 1
    assert "missing.json: No such file or directory" in capsys.readouterr().err
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    assert vendor_floor.main([str(empty)]) == 1
    assert "no row has Inductor's and fusec's kernel tables" in capsys.readouterr().err
