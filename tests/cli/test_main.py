from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import load_file

from probebench.cli import main
from probebench.models import Site, extract
from probebench.prompts import read_prompts_jsonl

#: the registry's entries (live and deprecated), each checked by `registry check`
N_ENTRIES = len(list((Path(__file__).resolve().parents[2] / "registry" / "probes")
                     .rglob("*.yaml")))

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "sentences.jsonl"


def test_extract_writes_activations_equal_to_the_library(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], minilm: Any) -> None:
    out = tmp_path / "acts.safetensors"
    code = main(["extract", "--model", "minilm-l6", "--site", "3:last_token",
                 "--site", "6:token_avg", "--input", str(EXAMPLES), "--out", str(out),
                 "--quiet", "--device", "cpu"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "3:last_token" in printed and f"wrote {out}" in printed
    tensors = load_file(str(out))
    assert set(tensors) == {"layer3.last_token", "layer6.token_avg"}
    prompts = read_prompts_jsonl(EXAMPLES)
    direct = extract(minilm, prompts, [Site(3, "last_token")], cache=False, progress=False)
    np.testing.assert_allclose(tensors["layer3.last_token"], direct[Site(3, "last_token")],
                               atol=1e-4, rtol=1e-5)
    from safetensors import safe_open
    with safe_open(str(out), "np") as handle:
        meta = handle.metadata()
    assert json.loads(meta["prompt_ids"]) == [p.id for p in prompts]
    assert json.loads(meta["model"])["name"] == "minilm-l6"
    # the second run is served by the cache and says so
    assert main(["extract", "--model", "minilm-l6", "--site", "3:last_token", "--input",
                 str(EXAMPLES), "--out", str(out), "--quiet", "--device", "cpu"]) == 0
    assert "cache" in capsys.readouterr().out


def test_extract_reports_bad_input_with_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"text": 5}\n')
    out = tmp_path / "acts.safetensors"
    code = main(["extract", "--site", "1:last_token", "--input", str(bad), "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: field 'text'" in err
    assert not out.exists()


def test_failed_extract_leaves_no_output(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "acts.safetensors"
    code = main(["extract", "--model", "minilm-l6", "--site", "9:last_token", "--input",
                 str(EXAMPLES), "--out", str(out), "--quiet"])
    assert code == 2
    assert "layer 9 is out of range" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_help_teaches_without_importing_torch() -> None:
    proc = subprocess.run([sys.executable, "-m", "probebench", "extract", "--help"],
                          capture_output=True, text=True, check=True)
    assert "LAYER:POSITION" in proc.stdout and "end_question" in proc.stdout
    assert "example:" in proc.stdout
    # --help must not import torch (~2 s here): the CLI module imports it lazily
    proc = subprocess.run([sys.executable, "-c", "import probebench.cli, sys; "
                           "print('torch' in sys.modules)"], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == "False"


def test_models_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m" in out and "minilm-l6" in out and "576" in out


@pytest.mark.parametrize("limit", [
    pytest.param(None, marks=pytest.mark.slow),  # the whole job: a cold full submit
    5])  # the same commands, the submit bounded by --limit (every split, every stage)
def test_readme_main_job_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch, limit: int | None) -> None:
    """Every probebench command of the `make demo` recipe, read from the Makefile, runs
    from the repository root with its outputs moved under tmp_path."""
    import json
    import shlex

    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    reference = makefile.split("\nREFERENCE ?= ", 1)[1].split("\n", 1)[0].strip()
    lines = [line.strip() for line in recipe.replace("\\\n", " ").splitlines()[1:]]
    argvs = [shlex.split(line.replace("$(REFERENCE)", reference).split("probebench", 1)[1])
             for line in lines if "probebench" in line]
    assert [a[0] for a in argvs] == ["models", "validate", "submit", "leaderboard"]
    monkeypatch.chdir(REPO)
    moved = {"demo/submission.json": tmp_path / "submission.json",
             "demo/REPORT.md": tmp_path / "REPORT.md", "leaderboard": tmp_path / "leaderboard"}
    for argv in argvs:
        argv = [str(moved.get(a, a)) if i and argv[i - 1] in ("--out", "--report") else a
                for i, a in enumerate(argv)]
        if argv[0] == "submit" and limit is not None:
            argv += ["--limit", str(limit), "--latency-prompts", "2"]
        assert main(argv) == 0, argv
    out = capsys.readouterr().out
    assert "valid" in out and "verb_grammar" in out
    assert f"open {(tmp_path / 'leaderboard' / 'index.html').resolve()}" in out
    assert "ProbeScore" in out and out.count("probebench/") >= 5  # the top-5 table
    submission = json.loads((tmp_path / "submission.json").read_text())
    assert submission["tasks"][0]["id"] == "verb_grammar_v2"
    assert not submission["tasks"][0]["evalaware_auroc"]["imputed"]  # the registered guard
    assert (submission.get("limit") is None) == (limit is None)


def test_every_command_teaches_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    from probebench.cli import build_parser

    parser = build_parser()
    commands = [["models", "list"], ["models", "prepare"], ["extract"], ["validate"],
                ["hash"], ["export"], ["tasks", "list"], ["tasks", "show"], ["tasks", "verify"],
                ["tasks", "hash"], ["tasks", "check-verbs"], ["tasks", "generate-verbs"],
                ["train"], ["sweep"], ["submit"], ["registry", "check"],
                ["registry", "confine"], ["registry", "evaluate"], ["review"], ["reeval"],
                ["leaderboard", "build"]]
    for argv in commands:
        with pytest.raises(SystemExit) as done:
            parser.parse_args([*argv, "--help"])
        assert done.value.code == 0, argv
    text = capsys.readouterr().out
    assert "%(default)s" not in text and "%%" not in text
    assert text.count("--repo REPO") >= 15  # shared options, declared once, on each command


def test_shared_options_work_before_or_after_the_action(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = str(REPO / "registry")
    assert main(["registry", "--registry", registry, "check"]) == 0
    before = capsys.readouterr().out
    assert main(["registry", "check", "--registry", registry]) == 0
    assert capsys.readouterr().out == before
    assert f"{N_ENTRIES} of {N_ENTRIES} entries pass" in before
    assert main(["tasks", "--repo", str(tmp_path), "list"]) == 0
    assert main(["tasks", "list", "--repo", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert err.count(f"repo {tmp_path.resolve()}; tasks: the packaged tasks (44)") == 2


def test_a_mistyped_registry_is_an_error_not_an_empty_site(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["leaderboard", "build", "--registry", str(tmp_path / "nowhere"), "--out",
                 str(tmp_path / "site")])
    assert code == 2
    assert "nowhere: not a registry (no probes/ folder)" in capsys.readouterr().err
    assert not (tmp_path / "site").exists()
