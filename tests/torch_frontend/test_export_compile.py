"""``fusec.compile(module, example_inputs=...)`` through ``torch.export``, and the backend found
through its entry point by a process that never imports fusec."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch_helpers import AutocastInside, assert_close  # noqa: E402

import fusec  # noqa: E402


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x, y):
        return self.norm(torch.relu(self.fc(x)) + y), x.sum(-1)


def test_fusec_compile_of_a_module(tmp_path):
    torch.manual_seed(0)
    model = Block().eval()
    x, y = torch.randn(3, 16), torch.randn(3, 16)
    exe = fusec.compile(model, example_inputs=(x, y), device="cpu",
                        report=str(tmp_path / "r.json"))
    with torch.no_grad():
        assert_close(exe(x, y), model(x, y))
        x2, y2 = torch.randn(5, 16), torch.randn(5, 16)  # another shape: exported again
        assert_close(exe(x2, y2), model(x2, y2))
        model.fc.weight.mul_(0.5)
        assert_close(exe(x, y), model(x, y))


def test_autocast_region_through_export(tmp_path):
    """``torch.export`` keeps an autocast region inside forward as a ``wrap_with_autocast``
    call; it is inlined and its casts made explicit as on the backend's route: eager's types
    and values (bf16 rounding), nothing left to PyTorch."""
    import json

    torch.manual_seed(3)
    model = AutocastInside().eval()
    x = torch.randn(4, 32)
    report = tmp_path / "r.json"
    exe = fusec.compile(model, example_inputs=(x,), device="cpu", report=str(report))
    with torch.no_grad():
        expected, actual = model(x), exe(x)
    assert [t.dtype for t in expected] == [torch.bfloat16, torch.float32]
    assert_close(actual, expected, tol=3e-2)
    graphs = json.loads(report.read_text())["graphs"]
    assert graphs and all(g["fallback_ops"] == [] for g in graphs), graphs


def test_backend_found_without_importing_fusec():
    script = (
        "import sys, torch\n"
        "m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU()).eval()\n"
        "assert 'fusec' not in sys.modules\n"
        "c = torch.compile(m, backend='fusec', options={'device': 'cpu'})\n"
        "x = torch.randn(2, 4)\n"
        "with torch.no_grad():\n"
        "    torch.testing.assert_close(c(x), m(x))\n"
        "assert 'fusec' in sys.modules\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
