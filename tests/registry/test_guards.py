"""The eval-awareness guard: registered in guards.yaml, found and used by submit."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from probebench.errors import InputError
from probebench.evaluation.session import SubmitOptions
from probebench.evaluation.submit import submit
from probebench.registry.guards import RegistryGuards, guard_for, guard_ids
from tests.guard_world import GUARD_ID, TASK, guard_world

pytestmark = pytest.mark.usefixtures("share_module_cache")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, module_cache: Path) -> dict[str, Any]:
    """A registry with a guard entry, and a second probe on the same model."""
    return guard_world(tmp_path_factory.mktemp("guard-world"), module_cache)


#: items of each split a submit here reads: the guard's lookup and correction are the point
LIMIT = 30


def _options(world: dict[str, Any], **kw: Any) -> SubmitOptions:
    return SubmitOptions(bootstrap=100, progress=False, latency_prompts=3, limit=LIMIT,
                         guards=RegistryGuards(world["registry"], world["root"]), **kw)


def test_guard_lookup(world: dict[str, Any]) -> None:
    assert guard_ids(world["registry"]) == {"smollm2-135m": GUARD_ID}
    found = guard_for("smollm2-135m", world["registry"], world["root"])
    assert found is not None and found.name == GUARD_ID
    assert found.folder == world["guard"]
    assert guard_for("minilm-l6", world["registry"], world["root"]) is None


def test_submit_uses_the_registered_guard(world: dict[str, Any]) -> None:
    task = submit(world["probe"], [TASK], _options(world)).tasks[0]
    assert not task.evalaware_auroc.imputed
    assert GUARD_ID in task.evalaware_auroc.note
    assert task.evalaware_auroc.value is not None
    # without a registry the same probe gets the flagged imputation
    plain = submit(world["probe"], [TASK], SubmitOptions(bootstrap=100, progress=False,
                                                         latency_prompts=3,
                                                         limit=LIMIT)).tasks[0]
    assert plain.evalaware_auroc.imputed and plain.auroc.value is not None
    assert plain.evalaware_auroc.value == pytest.approx(0.85 * plain.auroc.value)


def test_the_guard_does_not_correct_itself(world: dict[str, Any]) -> None:
    task = submit(world["guard"], [TASK], _options(world)).tasks[0]
    assert task.evalaware_auroc.imputed and "does not correct itself" in task.evalaware_auroc.note


def test_a_tampered_guard_is_an_error(world: dict[str, Any], tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    shutil.copytree(world["registry"], registry)
    meta = registry / "artifacts" / "guard" / "meta.yaml"
    text = meta.read_text()
    tampered = re.sub(r"(?m)^author: .*$", "author: Someone Else", text, count=1)
    assert tampered != text
    meta.write_text(tampered)
    with pytest.raises(InputError, match="does not validate"):
        guard_for("smollm2-135m", registry, tmp_path)


def test_malformed_guards_yaml_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "guards.yaml").write_text("- just\n- a list\n")
    with pytest.raises(InputError, match="mapping of model name"):
        guard_ids(tmp_path)
    (tmp_path / "guards.yaml").write_text("smollm2-135m: nobody/missing-smollm2-135m-l1-v1\n")
    with pytest.raises(InputError, match="has no entry"):
        guard_for("smollm2-135m", tmp_path, tmp_path)


def test_cli_guard_flags(world: dict[str, Any], tmp_path: Path) -> None:
    from probebench.cli import main

    assert main(["submit", str(world["probe"]), "--tasks", TASK, "--guard",
                 str(world["guard"]), "--no-guard"]) == 2
    out = tmp_path / "s.json"
    assert main(["submit", str(world["probe"]), "--tasks", TASK, "--registry",
                 str(world["registry"]), "--repo", str(world["root"]), "--bootstrap", "50",
                 "--latency-prompts", "2",
                 "--limit", str(LIMIT), "--out", str(out), "--report",
                 str(tmp_path / "r.md"), "--quiet"]) == 0
    import json

    corrected = json.loads(out.read_text())["tasks"][0]["evalaware_auroc"]
    assert not corrected["imputed"] and GUARD_ID in corrected["note"]


def test_the_guard_does_not_depend_on_the_working_folder(
        world: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Inside a checkout the registry is found from its root, wherever the command runs;
    outside one (and offline, as tests are, so the published registry is not read), the
    missing registry is said, not silently skipped."""
    import json

    from probebench.cli import main

    root = tmp_path / "checkout"
    shutil.copytree(world["root"] / "registry", root / "registry")
    (root / ".git").mkdir()
    (root / "deep" / "folder").mkdir(parents=True)
    monkeypatch.chdir(root / "deep" / "folder")
    out = tmp_path / "s.json"
    args = ["submit", str(world["probe"]), "--tasks", TASK, "--bootstrap", "50",
            "--latency-prompts", "2", "--limit",
            str(LIMIT), "--out", str(out), "--report", str(tmp_path / "r.md")]
    assert main(args) == 0
    corrected = json.loads(out.read_text())["tasks"][0]["evalaware_auroc"]
    assert not corrected["imputed"] and GUARD_ID in corrected["note"]
    assert f"registry {root / 'registry'}" in capsys.readouterr().err
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)
    assert main(args) == 0
    corrected = json.loads(out.read_text())["tasks"][0]["evalaware_auroc"]
    assert corrected["imputed"]
    assert "no registry to take the eval-awareness guard from" in capsys.readouterr().err


def test_the_eval_aware_split_is_stratified_by_class() -> None:
    """The least evaluation-like quarter of each class, not of all items: with the
    positives rated least evaluation-like, an unstratified quarter would keep only
    positives."""
    import numpy as np

    from probebench.evaluation.evalaware import stratified_least

    items = np.arange(16)
    rating = np.array([0.1 * i for i in range(8)] + [5.0 + i for i in range(8)])
    classes = {i: ((1,) if i < 8 else (0,)) for i in range(16)}
    assert stratified_least(items, rating, classes) == {0, 1, 8, 9}
    pairs = {i: (0, 1) for i in range(16)}  # minimal pairs: one class
    assert stratified_least(items, rating, pairs) == {0, 1, 2, 3}
    tiny = {0: (1,), 1: (0,), 2: (0,)}
    assert stratified_least(np.arange(3), np.array([3.0, 2.0, 1.0]), tiny) == {0, 2}
