"""``fusec-build`` of a saved PyTorch ``ExportedProgram`` (``.pt2``): a small MLP and a small
attention block, exported with ``torch.export.save``, built into artifacts that a fresh
process loads (without the compiler) and runs to PyTorch's numbers; ``fusec-run`` runs the
``.pt2`` itself too. A file that is not a saved program, one with dynamic shapes, or a
``.pt2`` without PyTorch installed is one line, exit 1, nothing written. On the CPU device."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fusec.tools import fusec_build, fusec_run
from tests.tools.test_fusec_build import LOAD_AND_RUN, one_line, run_fresh

torch = pytest.importorskip("torch")


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.fc2(torch.nn.functional.gelu(self.fc1(x))))


class Attention(torch.nn.Module):
    """A post-norm self-attention block with a 0/1 int64 key mask, as a BERT layer's."""

    def __init__(self, width: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in self.qkv(x).split(d, dim=-1))
        keep = mask[:, None, None, :].bool()
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        return self.norm(x + self.out(a.transpose(1, 2).reshape(b, t, d)))


def exported(folder: Path, name: str) -> tuple[Path, dict[str, np.ndarray], np.ndarray]:
    """`name`'s program saved in `folder`, inputs for it (other values than the example
    inputs it was exported with) and PyTorch's output for them."""
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    if name == "mlp":
        model: torch.nn.Module = MLP().eval()
        inputs = {"x": rng.standard_normal((4, 16), dtype=np.float32)}
        example: tuple[torch.Tensor, ...] = (torch.randn(4, 16),)
    else:
        model = Attention().eval()
        mask = np.ones((2, 8), np.int64)
        mask[1, 5:] = 0
        inputs = {"x": rng.standard_normal((2, 8, 32), dtype=np.float32), "mask": mask}
        example = (torch.randn(2, 8, 32), torch.ones(2, 8, dtype=torch.int64))
    path = folder / f"{name}.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(model, example), str(path))
        expected = model(*(torch.from_numpy(a) for a in inputs.values())).numpy()
    np.savez(folder / f"{name}_in.npz", **inputs)  # type: ignore[arg-type]
    return path, inputs, expected


@pytest.mark.parametrize("name", ["mlp", "attention"])
def test_built_artifact_runs_to_torch_numbers(tmp_path: Path, name: str) -> None:
    """Built from the .pt2, loaded in a fresh process without the compiler: the program's
    user inputs by their names and dtypes (the mask stays int64), PyTorch's numbers."""
    path, inputs, expected = exported(tmp_path, name)
    artifact = tmp_path / f"{name}.fusec"
    assert fusec_build.main([str(path), "-o", str(artifact), "--device", "cpu"]) == 0
    result = run_fresh(LOAD_AND_RUN, str(artifact), str(tmp_path / f"{name}_in.npz"),
                       str(tmp_path / "out.npz"))
    assert result.returncode == 0, result.stderr
    names = list(inputs)
    shapes = [list(a.shape) for a in inputs.values()]
    dtypes = [str(a.dtype) for a in inputs.values()]
    assert result.stdout.strip() == f"{names} {shapes} {dtypes} ['result0'] []"
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_allclose(out["result0"], expected, rtol=1e-5, atol=1e-5)


def test_fusec_run_runs_the_pt2(tmp_path: Path) -> None:
    path, _, expected = exported(tmp_path, "attention")
    assert fusec_run.main([str(path), "--device", "cpu", "--inputs",
                           str(tmp_path / "attention_in.npz"), "-o",
                           str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_allclose(out["result0"], expected, rtol=1e-5, atol=1e-5)


BUILD_EACH = """
import sys
from fusec.tools.fusec_build import main
for path in sys.argv[2:]:
    code = main([path, "-o", sys.argv[1]])
    print(f"=== exit {code}", file=sys.stderr, flush=True)
"""
"""fusec-build on each file named, in one fresh process (whose stderr is the real one, where
PyTorch's loggers write), a line ``=== exit N`` on stderr after each."""


def test_not_a_saved_program_is_one_line(tmp_path: Path) -> None:
    """Text, a truncated program, a zip of something else, a torch.save file, a missing
    file: one line naming the file, exit 1 (not the traceback torch.export.load logs)."""
    good, _, _ = exported(tmp_path, "mlp")
    np.savez(tmp_path / "arrays.npz", x=np.ones(3))
    torch.save({"w": torch.ones(2)}, str(tmp_path / "state.pt2"))
    files = {"text.pt2": b"garbage\n", "cut.pt2": good.read_bytes()[:3000],
             "npz.pt2": (tmp_path / "arrays.npz").read_bytes()}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    names = [*files, "state.pt2", "missing.pt2"]
    out = tmp_path / "out.fusec"
    result = run_fresh(BUILD_EACH, str(out), *(str(tmp_path / n) for n in names))
    parts = re.split(r"=== exit (\d+)\n", result.stderr)
    errors, codes = parts[0:-1:2], parts[1::2]
    assert codes == ["1"] * len(names), result.stderr
    for name, err in zip(names, errors, strict=True):
        assert one_line(err).startswith(f"{tmp_path / name}: error: cannot load the "
                                        "ExportedProgram: ")
    assert not out.exists()


def test_dynamic_shapes_are_one_line(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    batch = torch.export.Dim("batch", min=2, max=64)
    program = torch.export.export(MLP().eval(), (torch.randn(4, 16),),
                                  dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, str(tmp_path / "dynamic.pt2"))
    capsys.readouterr()
    assert fusec_build.main([str(tmp_path / "dynamic.pt2"), "-o",
                             str(tmp_path / "d.fusec")]) == 1
    assert "has a dynamic dimension; fusec compiles one static shape" in one_line(
        capsys.readouterr().err)


def test_without_torch_is_one_line(tmp_path: Path) -> None:
    """PyTorch absent (a process where ``import torch`` fails): one line saying what to
    install, exit 1."""
    path, _, _ = exported(tmp_path, "mlp")
    script = ("import sys; sys.modules['torch'] = None\n"
              "from fusec.tools.fusec_build import main\n"
              "sys.exit(main(sys.argv[1:]))\n")
    result = subprocess.run([sys.executable, "-c", script, str(path), "-o",
                             str(tmp_path / "m.fusec")], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 1
    assert one_line(result.stderr) == (f"{path}: error: importing an ExportedProgram needs "
                                       "PyTorch (install fusec[torch]: pip install "
                                       "'fusec[torch]')")
    assert not (tmp_path / "m.fusec").exists()
