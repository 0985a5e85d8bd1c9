"""``probebench.submit`` (``probebench.runs.submit``) applies the command line's policy:
the same registry, guard and published baselines, the same files written, and an
imputed correction that says why no guard was used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import probebench
from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.session import SubmitOptions
from probebench.runs.submit import Outputs, submit_many

pytestmark = pytest.mark.usefixtures("share_module_cache")

REPO = Path(__file__).resolve().parents[2]
GUARD_ID = "probebench/eval-awareness-guard-smollm2-135m-l15-v2"
PROBE = REPO / "registry" / "artifacts" / "blimp-det-noun-smollm2-135m-l15-v1"
#: the probe reads the guard's site: one extraction pass serves both
TASK = "blimp_determiner_noun_agreement_1"
#: items of each split a submit here reads: the policy is the point, not the numbers
LIMIT = 12


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A registry holding only the reference guard of smollm2-135m (its entry, artifact
    and guards.yaml), and the reference BLiMP probe outside it."""
    root = tmp_path_factory.mktemp("policy-world")
    registry = root / "registry"
    for rel in (f"probes/{GUARD_ID}.yaml", "guards.yaml",
                f"artifacts/{GUARD_ID.split('/')[1]}"):
        source, target = REPO / "registry" / rel, registry / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
    return {"root": root, "registry": registry, "probe": PROBE,
            "guard": registry / "artifacts" / GUARD_ID.split("/")[1]}


def _options() -> SubmitOptions:
    return SubmitOptions(bootstrap=50, progress=False, latency_prompts=2, limit=LIMIT)


def _outside_timing(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_bytes())
    doc.pop("timing"), doc.pop("run")
    return dict(doc)


def test_python_and_the_command_line_write_the_same_submission(
        world: dict[str, Any], tmp_path: Path) -> None:
    result = probebench.submit(world["probe"], [TASK], _options(),
                               registry=world["registry"], outputs=tmp_path / "python")
    cli = tmp_path / "cli"
    assert main(["submit", str(world["probe"]), "--tasks", TASK, "--registry",
                 str(world["registry"]), "--bootstrap", "50", "--latency-prompts", "2",
                 "--limit", str(LIMIT), "--out", str(cli / "submission.json"),
                 "--report", str(cli / "REPORT.md"), "--quiet"]) == 0
    python_doc = _outside_timing(tmp_path / "python" / "submission.json")
    cli_doc = _outside_timing(cli / "submission.json")
    assert json.dumps(python_doc, sort_keys=True) == json.dumps(cli_doc, sort_keys=True)
    corrected = python_doc["tasks"][0]["evalaware_auroc"]
    assert not corrected["imputed"] and GUARD_ID in corrected["note"]
    assert result.tasks[0].evalaware_auroc.note == corrected["note"]
    assert probebench.read_submission(str(tmp_path / "python" / "submission.json")) == result
    # REPORT.md too: the same text but for the timing section
    python_report = (tmp_path / "python" / "REPORT.md").read_text("utf-8")
    cli_report = (cli / "REPORT.md").read_text("utf-8")
    assert "## Timing" in python_report
    assert python_report.split("## Timing")[0] == cli_report.split("## Timing")[0]


def test_each_reason_for_no_guard_has_its_own_words(
        world: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def note(**kw: Any) -> str:
        task = probebench.submit(world["probe"], [TASK], _options(), **kw).tasks[0]
        assert task.evalaware_auroc.imputed
        return task.evalaware_auroc.note or ""

    # the registry is read, and names no guard for the model
    bare = tmp_path / "bare"
    shutil.copytree(world["registry"], bare)
    (bare / "guards.yaml").write_text("{}\n")
    assert note(registry=bare) == "no eval-awareness guard for smollm2-135m: 0.85 x AUROC"
    # no guard asked for
    assert note(registry=world["registry"], guard=None).startswith(
        "no guard asked for (--no-guard): ")
    # the registry the environment names cannot be read (a given one would be an error)
    monkeypatch.setenv("PROBEBENCH_REGISTRY", str(tmp_path / "nowhere\x1b[2J\u202e"))
    unreachable = note()
    assert unreachable.startswith("registry unreachable (") and "nowhere" in unreachable
    # the path's text reaches the note escaped, never raw
    assert "\x1b" not in unreachable and "\u202e" not in unreachable
    assert "nowhere\\x1b[2J\\u202e" in unreachable
    with pytest.raises(InputError, match="not a registry"):
        probebench.submit(world["probe"], [TASK], _options(), registry=tmp_path / "nowhere")


def test_the_environment_names_the_registry_as_on_the_command_line(
        world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBEBENCH_REGISTRY", str(world["registry"]))
    task = probebench.submit(world["probe"], [TASK], _options()).tasks[0]
    assert not task.evalaware_auroc.imputed and GUARD_ID in task.evalaware_auroc.note


def test_a_given_guard_folder_is_used_for_every_model(world: dict[str, Any],
                                                      tmp_path: Path) -> None:
    task = probebench.submit(world["probe"], [TASK], _options(), guard=world["guard"],
                             registry=tmp_path / "none", compute_baselines=True).tasks[0]
    # registry= is not read at all: neither the guard nor the baselines need it
    assert not task.evalaware_auroc.imputed and "guard" in task.evalaware_auroc.note


def test_outputs_are_refused_before_model_work(world: dict[str, Any],
                                               tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    outputs = Outputs(tmp_path / "s.json", tmp_path / "r.md", blocker / "samples.jsonl")
    with pytest.raises(InputError, match="is not a folder"):
        probebench.submit(tmp_path / "no-artifact-here", [TASK], _options(),
                          outputs=outputs)
    assert not (tmp_path / "s.json").exists()
    with pytest.raises(InputError, match="one output per artifact"):
        submit_many([world["probe"]], [TASK], _options(), outputs=[])
