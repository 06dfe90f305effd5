"""`fusec.knobs`: each knob declared once; a compile's setting over the environment over the
default; bad names and values refused in one line; `fusec.compile(knobs=...)` sets them for the
compile and only for it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fusec import knobs

ROOT = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("dialects", "frontends", "passes", "lowering", "codegen", "runtime",
                  "placement", "reference", "compiler", "tools", "bench", "fuzz")


def test_precedence_compile_then_environment_then_default(monkeypatch) -> None:
    monkeypatch.delenv("FUSEC_KNOB_ATTENTION_MMA", raising=False)
    assert knobs.value("attention_mma") is True
    monkeypatch.setenv("FUSEC_KNOB_ATTENTION_MMA", "off")
    assert knobs.value("attention_mma") is False
    with knobs.overridden(attention_mma=True):
        assert knobs.value("attention_mma") is True
        with knobs.overridden({"attention_mma": "0"}):
            assert knobs.value("attention_mma") is False
        assert knobs.value("attention_mma") is True
    assert knobs.value("attention_mma") is False


@pytest.mark.parametrize(("call", "message"), [
    (lambda: knobs.value("nope"), "unknown knob 'nope' (known: attention_cpu_vectors, attention_mma, "),
    (lambda: knobs.parse("attention_mma", "maybe"),
     "takes true or false (1/0, on/off), not 'maybe'"),
    (lambda: knobs.parse_assignments(["attention_mma"]), "--knob takes NAME=VALUE"),
    (lambda: knobs.overridden(attention_mma=2).__enter__(), "takes true or false, not 2"),
])
def test_bad_names_and_values_are_one_line(call, message) -> None:
    with pytest.raises(knobs.KnobError) as e:
        call()
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_bad_environment_value_names_its_variable(monkeypatch) -> None:
    monkeypatch.setenv("FUSEC_KNOB_GRAM_SPLIT_ON_GPU", "2")
    with pytest.raises(knobs.KnobError, match="^FUSEC_KNOB_GRAM_SPLIT_ON_GPU: knob"):
        knobs.values()


def test_compile_sets_knobs_for_the_compile_only(monkeypatch) -> None:
    """`fusec.compile(knobs=...)` is in force while the program is lowered and planned."""
    import fusec
    from fusec.compiler import driver

    seen = []
    lower = driver.lower

    def spy(*args, **kwargs):
        seen.append(knobs.values())
        return lower(*args, **kwargs)

    monkeypatch.setattr(driver, "lower", spy)
    text = ("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %y = nn.relu %x : tensor<4xf32> -> tensor<4xf32>\n"
            "  func.return %y : tensor<4xf32>\n}\n")
    fusec.compile(text, device="cpu", knobs={"gram_split_on_gpu": False, "attention_mma": "off"})
    assert seen[-1]["gram_split_on_gpu"] is False and seen[-1]["attention_mma"] is False
    assert knobs.value("gram_split_on_gpu") is knobs.KNOBS["gram_split_on_gpu"].default
    with pytest.raises(knobs.KnobError, match="unknown knob 'bogus'"):
        fusec.compile(text, device="cpu", knobs={"bogus": True})


def test_no_stage_keeps_a_module_level_switch() -> None:
    """A boolean assigned at module level in a source folder is a switch outside the registry:
    declare it in `fusec.knobs` instead (`NAME = True` / `NAME: bool = False`)."""
    pattern = re.compile(r"^([A-Z][A-Z0-9_]*)\s*(?::\s*bool\s*)?=\s*(True|False)\s*$", re.M)
    found = [f"{path.relative_to(ROOT)}: {m.group(1)}"
             for folder in SOURCE_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             for m in pattern.finditer(path.read_text())]
    assert not found, found


def test_every_knob_is_read_where_it_says() -> None:
    for k in knobs.KNOBS.values():
        module = ROOT / Path(*k.where.split(".")[1:]).with_suffix(".py")
        assert f'knobs.value("{k.name}")' in module.read_text(), (k.name, module)


RELU = ("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %y = nn.relu %x : tensor<4xf32> -> tensor<4xf32>\n"
        "  func.return %y : tensor<4xf32>\n}\n")


def knobs_at_lowering(monkeypatch, module) -> list[dict[str, bool]]:
    """The knob values in force at each call of `module.lower` from now on."""
    seen: list[dict[str, bool]] = []
    lower = module.lower

    def spy(*args, **kwargs):
        seen.append(knobs.values())
        return lower(*args, **kwargs)

    monkeypatch.setattr(module, "lower", spy)
    return seen


@pytest.mark.parametrize("tool", ["fusec-run", "fusec-build"])
def test_the_tools_set_knobs_for_their_compile(tool, monkeypatch, tmp_path, capsys) -> None:
    """``--knob`` of `fusec-run` and `fusec-build` is in force while the program is lowered
    (`fusec-opt`'s: lit_tests/tools/knobs.mlir); a bad one is one line, exit 2, nothing
    written."""
    from fusec.compiler import artifact_build, driver
    from fusec.tools import fusec_build, fusec_run

    monkeypatch.delenv("FUSEC_KNOB_GRAM_SPLIT_ON_GPU", raising=False)
    source = tmp_path / "f.mlir"
    source.write_text(RELU)
    main, module, args = {
        "fusec-run": (fusec_run.main, driver, ["--random", "0"]),
        "fusec-build": (fusec_build.main, artifact_build, ["-o", str(tmp_path / "f.fusec")]),
    }[tool]
    seen = knobs_at_lowering(monkeypatch, module)
    command = [str(source), "--device", "cpu", *args]
    assert main([*command, "--knob", "gram_split_on_gpu=false", "--knob", "attention_mma=on"]) == 0
    assert [(s["gram_split_on_gpu"], s["attention_mma"]) for s in seen] == [(False, True)]
    assert knobs.value("gram_split_on_gpu") is True
    assert main(command) == 0
    assert seen[-1]["gram_split_on_gpu"] is True
    capsys.readouterr()
    (tmp_path / "f.fusec").unlink(missing_ok=True)
    assert main([*command, "--knob", "gram_split_on_gpu=maybe"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{tool}: error: knob 'gram_split_on_gpu' takes true or false")
    assert "\n" not in err and not (tmp_path / "f.fusec").exists() and len(seen) == 2
