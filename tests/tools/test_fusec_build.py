"""``fusec-build`` and ``fusec.load``: an artifact built once runs in a fresh process that
imports neither xDSL nor the compiler, gives the very numbers of ``fusec-run`` on the source,
is byte-identical when built again, and a damaged or foreign artifact is one line, exit 1.
On the CPU device, with small programs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fusec.runtime import artifact as artifact_module
from fusec.runtime import artifact_format, artifact_program
from fusec.tools import fusec_build, fusec_run

ROOT = Path(__file__).resolve().parents[2]

WEIGHTED = """\
builtin.module attributes {fusec.params = "mlp.params.npz"} {
func.func @mlp(%x: tensor<8x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x64xf32>) -> tensor<8x64xf32> {
  %h = nn.matmul %x, %w1 : tensor<8x64xf32>, tensor<64x128xf32> -> tensor<8x128xf32>
  %hb = nn.add %h, %b1 : tensor<8x128xf32>, tensor<128xf32> -> tensor<8x128xf32>
  %a = nn.gelu %hb : tensor<8x128xf32> -> tensor<8x128xf32>
  %y = nn.matmul %a, %w2 : tensor<8x128xf32>, tensor<128x64xf32> -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}
}
"""


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An MLP whose weights the IR names (bound at build time, stored in the artifact)."""
    folder = tmp_path_factory.mktemp("model")
    rng = np.random.default_rng(1)
    np.savez(folder / "mlp.params.npz",
             w1=rng.standard_normal((64, 128), dtype=np.float32) / 8,
             b1=rng.standard_normal(128, dtype=np.float32),
             w2=rng.standard_normal((128, 64), dtype=np.float32) / 11)
    (folder / "mlp.mlir").write_text(WEIGHTED)
    np.savez(folder / "in.npz", x=rng.standard_normal((8, 64), dtype=np.float32))
    return folder


@pytest.fixture(scope="module")
def built(model: Path) -> Path:
    out = model / "mlp.fusec"
    assert fusec_build.main([str(model / "mlp.mlir"), "-o", str(out), "--device", "cpu",
                             "--fusion-stats-json", str(model / "stats.json")]) == 0
    return out


def run_fresh(script: str, *args: str, cache: Path | None = None
              ) -> subprocess.CompletedProcess[str]:
    """`script` in a fresh Python, with `cache` as its ``XDG_CACHE_HOME`` if given."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)} if cache is not None else None
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=300, env=env)


LOAD_AND_RUN = """
    import sys
    import numpy as np
    import fusec
    exe = fusec.load(sys.argv[1])
    with np.load(sys.argv[2]) as given:
        outputs = exe(**{n: given[n] for n in exe.input_names})
    np.savez(sys.argv[3], **dict(zip(exe.output_names, outputs)))
    heavy = sorted(m for m in sys.modules if m == "xdsl" or m.startswith((
        "xdsl.", "fusec.compiler", "fusec.passes", "fusec.lowering", "fusec.dialects",
        "fusec.frontends", "fusec.reference", "fusec.placement")))
    print(exe.input_names, [list(s) for s in exe.input_shapes],
          [str(d) for d in exe.input_dtypes], exe.output_names, heavy)
"""


def test_loads_in_a_fresh_process_without_the_compiler(model: Path, built: Path) -> None:
    """Loaded and called in a fresh process: no xDSL, no compiler module imported; the
    signature is the call's (the weights are bound); the outputs are fusec-run's on the IR."""
    result = run_fresh(LOAD_AND_RUN, str(built), str(model / "in.npz"), str(model / "a.npz"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['x'] [[8, 64]] ['float32'] ['result0'] []"
    assert result.stderr == ""  # the device it was built for: no rebuild note
    assert fusec_run.main([str(model / "mlp.mlir"), "--device", "cpu", "--inputs",
                           str(model / "in.npz"), "-o", str(model / "b.npz")]) == 0
    with np.load(model / "a.npz") as a, np.load(model / "b.npz") as b:
        np.testing.assert_array_equal(a["result0"], b["result0"])


def test_the_included_binary_is_used(model: Path, built: Path, tmp_path: Path) -> None:
    """On the device it was built for, the program is the artifact's binary: nothing is
    compiled, so an empty program cache gets only the device probe's entry (a build from
    source would add the program's)."""
    result = run_fresh(LOAD_AND_RUN, str(built), str(model / "in.npz"), str(tmp_path / "a.npz"),
                       cache=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(list((tmp_path / "fusec" / "opencl").iterdir())) == 1


def test_device_arrays_in_device_arrays_out(model: Path, built: Path) -> None:
    """A loaded executable takes device arrays as fusec.compile's does (the weights bound in
    place from the file's memory), and loading twice in a process gives the same numbers."""
    import fusec

    exe = fusec.load(built)
    with np.load(model / "in.npz") as given:
        x = given["x"]
    (host,) = exe(x)
    (on_device,) = exe(exe.to_device(x))
    assert type(on_device).__name__ == "DeviceArray"
    np.testing.assert_array_equal(on_device.get(), host)
    np.testing.assert_array_equal(fusec.load(built)(x=x)[0], host)


def test_fusec_run_runs_an_artifact(model: Path, built: Path) -> None:
    assert fusec_run.main([str(built), "--inputs", str(model / "in.npz"), "-o",
                           str(model / "c.npz")]) == 0
    assert fusec_run.main([str(model / "mlp.mlir"), "--device", "cpu", "--inputs",
                           str(model / "in.npz"), "-o", str(model / "d.npz")]) == 0
    with np.load(model / "c.npz") as c, np.load(model / "d.npz") as d:
        np.testing.assert_array_equal(c["result0"], d["result0"])


def test_same_input_same_bytes(model: Path, built: Path) -> None:
    again = model / "again.fusec"
    assert fusec_build.main([str(model / "mlp.mlir"), "-o", str(again), "--device",
                             "cpu"]) == 0
    assert again.read_bytes() == built.read_bytes()


def test_fusion_stats_json(model: Path, built: Path) -> None:
    stats = json.loads((model / "stats.json").read_text())
    assert stats["total"]["before"]["kernels"] == 4
    assert stats["total"]["after"]["kernels"] < 4


def test_onnx_model(tmp_path: Path) -> None:
    """An ONNX model's artifact takes the model's names and int64 mask, as fusec-run does."""
    pytest.importorskip("onnx")
    import onnx

    from fusec.bench.export_models import bert_layer

    path = tmp_path / "layer.onnx"
    onnx.save(bert_layer(seq=8, width=32, heads=2, ffn=64), str(path))  # type: ignore[arg-type]
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "in.npz", hidden_states=rng.standard_normal((1, 8, 32), np.float32),
             attention_mask=np.array([[1, 1, 1, 1, 1, 1, 0, 0]], np.int64))
    assert fusec_build.main([str(path), "-o", str(tmp_path / "layer.fusec"), "--device",
                             "cpu"]) == 0
    result = run_fresh(LOAD_AND_RUN, str(tmp_path / "layer.fusec"), str(tmp_path / "in.npz"),
                       str(tmp_path / "a.npz"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("['hidden_states', 'attention_mask'] [[1, 8, 32], [1, 8]] "
                                     "['float32', 'int64'] ['last_hidden_state'] []")
    assert fusec_run.main([str(path), "--device", "cpu", "--inputs", str(tmp_path / "in.npz"),
                           "-o", str(tmp_path / "b.npz")]) == 0
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        np.testing.assert_array_equal(a["last_hidden_state"], b["last_hidden_state"])


def rebuilt(model: Path, name: str) -> Path:
    """An artifact built with what `monkeypatch` changed in `fusec.runtime.artifact_program`."""
    out = model / name
    assert fusec_build.main([str(model / "mlp.mlir"), "-o", str(out), "--device", "cpu"]) == 0
    return out


def test_another_device_rebuilds_from_source(model: Path, built: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Built for another device or driver: the kernels are built from the included source,
    with one note on stderr, and the numbers are the same."""
    monkeypatch.setattr(artifact_program, "device_identity",
                        lambda device: ("Other platform", "OpenCL 3.0", "Other device",
                                        "OpenCL 3.0", "0.0"))
    other = rebuilt(model, "other.fusec")
    cache = model / "other-cache"
    result = run_fresh(LOAD_AND_RUN, str(other), str(model / "in.npz"), str(model / "e.npz"),
                       cache=cache)
    assert result.returncode == 0, result.stderr
    assert len(list((cache / "fusec" / "opencl").iterdir())) == 2  # the probe, the program
    assert one_line(result.stderr).startswith(f"{other}: note: built for ")
    assert "building its kernels from source for" in result.stderr
    run_fresh(LOAD_AND_RUN, str(built), str(model / "in.npz"), str(model / "a.npz"))
    with np.load(model / "a.npz") as a, np.load(model / "e.npz") as e:
        np.testing.assert_array_equal(a["result0"], e["result0"])


def test_incompatible_fusec_names_both_versions(model: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(artifact_program, "__version__", "0.0.7")
    old = rebuilt(model, "old.fusec")
    monkeypatch.undo()
    capsys.readouterr()
    assert fusec_run.main([str(old), "--inputs", str(model / "in.npz")]) == 1
    from fusec import __version__

    assert one_line(capsys.readouterr().err) == (
        f"{old}: error: built by fusec 0.0.7, this is fusec {__version__}; rebuild it with "
        "this fusec's fusec-build")


def test_another_plan_layout_is_refused(model: Path, built: Path) -> None:
    """A plan with a field this fusec's plan classes lack (an artifact of another fusec of the
    same version number) is refused, naming the field."""
    art = artifact_format.read(str(built))
    manifest = {k: v for k, v in art.manifest.items() if k not in ("blobs", "arrays")}
    manifest["plan"] = {**manifest["plan"], "future_field": 1}
    data = artifact_format.encode(manifest, {"binary": bytes(art.blob("binary"))},
                                  {name: art.array(name) for name in art.manifest["arrays"]})
    path = model / "future.fusec"
    path.write_bytes(data)
    with pytest.raises(artifact_format.ArtifactError,
                       match="another program plan layout .*unknown future_field"):
        artifact_module.load(path)


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "magic", "directory"])
def test_damaged_artifact_is_one_line(model: Path, built: Path, damage: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = built.read_bytes()
    path = model / f"{damage}.fusec"
    if damage == "directory":
        path.mkdir(exist_ok=True)
    else:
        path.write_bytes({"truncated": data[:len(data) // 2],
                          "flipped": data[:-100] + bytes([data[-100] ^ 1]) + data[-99:],
                          "empty": b"", "magic": b"\x89FUSEX" + data[6:]}[damage])
    capsys.readouterr()
    assert fusec_run.main([str(path), "--inputs", str(model / "in.npz")]) == 1
    assert one_line(capsys.readouterr().err).startswith(f"{path}: error: ")


READ_BEFORE_IMPORTS = """
    import sys
    from fusec.runtime import artifact
    heavy = ("numpy", "pyopencl", "fusec.runtime.artifact_program")
    print(sorted(m for m in heavy if m in sys.modules))
    checks = artifact.artifact_format.read(sys.argv[1]).checks
    print(sorted(m for m in heavy if m in sys.modules), len(checks) > 0)
    try:
        artifact.load(sys.argv[2])
    except artifact.ArtifactError as e:
        print(sorted(m for m in heavy if m in sys.modules), str(e).split(": error: ")[1])
"""


def test_the_file_is_read_before_the_runtime_is_imported(model: Path, built: Path) -> None:
    """`fusec.runtime.artifact` imports neither numpy nor PyOpenCL: `load` reads the file and
    starts its checks first (they overlap those imports), and a damaged file is refused before
    them. Caught the mutation: numpy imported at the top of `artifact_format`."""
    damaged = model / "damaged-early.fusec"
    damaged.write_bytes(b"\x89FUSEC\r\n\x1a\n" + bytes(10))
    result = run_fresh(READ_BEFORE_IMPORTS, str(built), str(damaged))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "[]", "[] True", "[] truncated fusec artifact (20 bytes)"]


def test_command_line_errors(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = str(model / "mlp.mlir")
    assert fusec_build.main([source]) == 2  # no -o
    assert "Missing option '-o'" in one_line(capsys.readouterr().err)
    assert fusec_build.main([source, "-o", str(model / "x.fusec"), "--shape", "x=1x2"]) == 2
    assert one_line(capsys.readouterr().err) == (
        "fusec-build: error: --shape applies to ONNX models only (see 'fusec-build --help')")
    assert fusec_build.main([source, "-o", source]) == 1
    assert "the output is an input of this run" in one_line(capsys.readouterr().err)
    bad = model / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %y = nn.bogus %x\n}\n")
    assert fusec_build.main([str(bad), "-o", str(model / "bad.fusec")]) == 1
    assert one_line(capsys.readouterr().err).startswith(f"{bad}:2:")
    assert not (model / "bad.fusec").exists()
    built = model / "mlp.fusec"
    assert fusec_run.main([str(built)]) == 2
    assert "an artifact runs on --inputs IN.npz" in one_line(capsys.readouterr().err)
    assert fusec_run.main([str(built), "--check", "--inputs", str(model / "in.npz")]) == 2
    assert "--check: not for an artifact" in one_line(capsys.readouterr().err)
