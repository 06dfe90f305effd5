"""bench/wgmma_blocks.py's command line where the GPU is missing (its products are timed on
the GPU machine, bench/gpu.sh)."""

from __future__ import annotations

import pytest

from fusec.bench import wgmma_blocks

torch = pytest.importorskip("torch")


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is here")
def test_resources_without_cuda_is_a_usage_error(monkeypatch, capsys):
    """``--resources`` loads the kernels through CUDA: without a CUDA device it is a one-line
    usage error (exit 2), before anything is compiled."""
    monkeypatch.setattr("sys.argv", ["wgmma_blocks", "--resources", "--models", "llama_b1"])
    with pytest.raises(SystemExit) as exited:
        wgmma_blocks.main()
    assert exited.value.code == 2
    assert "--resources loads the kernels through CUDA" in capsys.readouterr().err


def test_unknown_models_are_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["wgmma_blocks", "--models", "llama_b1,gpt5"])
    with pytest.raises(SystemExit) as exited:
        wgmma_blocks.main()
    assert exited.value.code == 2
    assert "unknown models gpt5" in capsys.readouterr().err
