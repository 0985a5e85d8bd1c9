"""The task catalog: every pinned hash verified, drift refused, errors that teach."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.tasks.catalog import TaskCatalog, TaskDriftError
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.scaffold import spec_yaml
from probebench.tasks.spec import read_tasks_file
from tests.catalogs import PACKAGED_TASKS, copy_catalog


@pytest.fixture
def checkout(tmp_path: Path) -> TaskCatalog:
    """A copy of the packaged tasks.yaml and data/, to edit freely."""
    return copy_catalog(tmp_path)


def test_verify_passes_on_the_packaged_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    results = TaskCatalog.default().verify()
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]
    assert main(["tasks", "--tasks-file", str(PACKAGED_TASKS), "verify"]) == 0
    assert "match their registered hashes" in capsys.readouterr().out


def test_the_packaged_sealed_holdouts_are_listed_beside_tasks_yaml(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """tasks.yaml (hand-written) lists no sealed holdout; holdouts.yaml beside it is the
    machine-written dump of them, and every file it names is there, as listed."""
    from probebench.tasks.holdout_listing import LISTING_FILE, listing_text, read_listing
    from probebench.tasks.sealed import KEY_ENV, verify_holdouts

    monkeypatch.delenv(KEY_ENV, raising=False)
    assert "sealed_holdouts" not in yaml.safe_load(PACKAGED_TASKS.read_text("utf-8"))
    listing = read_listing(PACKAGED_TASKS)
    assert len(listing.sealed_holdouts) >= 8
    text = (PACKAGED_TASKS.parent / LISTING_FILE).read_text("utf-8")
    assert text == listing_text(listing)
    checks = verify_holdouts(TaskCatalog.default())
    assert len(checks) == sum(len(h.generations) for h in listing.sealed_holdouts.values())
    assert all(c.ok and c.level in ("form", "revealed") for c in checks), \
        [c for c in checks if not c.ok]


def _test_files() -> list[str]:
    specs = read_tasks_file(PACKAGED_TASKS).tasks
    files = {rel for t in specs for rel in t.files.values()}
    files |= {rel for t in specs for h in t.holdouts for rel in h.files.values()}
    return sorted(files)


def _drift_cases() -> list[object]:
    """Every test file; the default run edits the first of each data folder (one per
    format, holdouts included), ``-m slow`` all of them."""
    seen: set[str] = set()
    cases: list[object] = []
    for rel in _test_files():
        folder = rel.rsplit("/", 1)[0]
        marks = () if folder not in seen else (pytest.mark.slow,)
        seen.add(folder)
        cases.append(pytest.param(rel, marks=marks, id=rel))
    return cases


@pytest.mark.parametrize("rel", _drift_cases())
def test_one_byte_edit_to_any_test_file_is_drift(checkout: TaskCatalog, rel: str) -> None:
    path = checkout.root / rel
    data = bytearray(path.read_bytes())
    # flip one byte inside the last sentence-ish text: a letter becomes another letter
    index = max(i for i, b in enumerate(data) if chr(b).isalpha())
    data[index] = ord("x") if data[index] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    results = {r.task: r for r in checkout.verify()}
    drifted = [t for t, r in results.items() if not r.ok]
    assert drifted, f"editing {rel} went unnoticed"
    assert all(rel in results[t].message for t in drifted)
    spec = checkout.spec(drifted[0])
    fresh = TaskCatalog.from_file(checkout.path)  # nothing remembered from verify()
    with pytest.raises(TaskDriftError, match="refused"):
        if any(rel in h.files.values() for h in spec.holdouts):
            fresh.reeval_set(spec.id)  # a holdout file: refused when re-evaluating
        else:
            fresh.load(spec.id)


def test_formatting_only_edit_is_caught_by_file_hash(checkout: TaskCatalog) -> None:
    path = checkout.root / "data/syntaxgym/number_src.json"
    path.write_bytes(path.read_bytes() + b"\n")  # same JSON, different bytes
    with pytest.raises(TaskDriftError, match="files changed"):
        checkout.load("syntaxgym_number_src")
    # the canonical test set itself is unchanged: without the file check it loads
    data = checkout.load("syntaxgym_number_src", verify=False)
    assert canonical_test_sha256(data.test) == checkout.spec("syntaxgym_number_src").test_sha256


def test_verify_cli_exits_1_on_drift(checkout: TaskCatalog,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    (checkout.root / "data/blimp/transitive.jsonl").write_text("")
    assert main(["tasks", "--tasks-file", str(checkout.path), "verify"]) == 1
    out = capsys.readouterr().out
    assert "DRIFT  blimp_transitive" in out


def test_tasks_yaml_schema_errors(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    text = PACKAGED_TASKS.read_text()
    path.write_text(text.replace("format: blimp", "format: Blimp!", 1))
    with pytest.raises(InputError, match=r"field 'tasks\.\d+\.format'"):
        read_tasks_file(path)
    first = text.index("- id: ")
    second = text.index("- id: ", first + 1)
    path.write_text(text + text[first:second])
    with pytest.raises(InputError, match="registered twice"):
        read_tasks_file(path)


def test_an_unregistered_format_is_refused_when_loading(tmp_path: Path) -> None:
    catalog = copy_catalog(tmp_path)
    # a task spelled out in full (a blimp task renamed would lose blimp's format_defaults)
    catalog.path.write_text(catalog.path.read_text().replace("format: senteval",
                                                             "format: blimpish", 1))
    catalog = TaskCatalog.from_file(catalog.path)
    task = next(t.id for t in catalog.specs.values() if t.format == "blimpish")
    with pytest.raises(InputError, match="format 'blimpish' is not registered; known formats: "
                                         "blimp, senteval, statements, syntaxgym, verbs"):
        catalog.load(task)


def test_unknown_task_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="did you mean blimp_passive_1"):
        TaskCatalog.default().load("blimp_pasive_1")
    assert main(["tasks", "show", "blimp_passive_1"]) == 0
    out = capsys.readouterr().out
    assert "test      498 items" in out and "(verified)" in out


def test_tasks_hash_prints_current_hashes(checkout: TaskCatalog,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    spec = TaskCatalog.default().spec("blimp_passive_1")
    assert main(["tasks", "--tasks-file", str(checkout.path), "hash",
                 "blimp_passive_1"]) == 0
    assert f"test_sha256: {spec.test_sha256}" in capsys.readouterr().out


def test_repo_with_its_own_tasks_yaml_is_used_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The catalog comes from --repo (or the enclosing checkout), never from the cwd."""
    repo = tmp_path / "repo"
    copy_catalog(repo)
    text = (repo / "tasks.yaml").read_text()
    (repo / "tasks.yaml").write_text(text.replace("title: 'BLiMP: passive_1'",
                                                  "title: 'My own passive'", 1))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["tasks", "list"]) == 0
    captured = capsys.readouterr()
    assert "My own passive" not in captured.out
    assert "tasks: the packaged tasks (44)" in captured.err
    assert main(["tasks", "list", "--repo", str(repo)]) == 0
    captured = capsys.readouterr()
    assert "My own passive" in captured.out
    assert f"tasks: {repo / 'tasks.yaml'}" in captured.err
    (repo / ".git").mkdir()  # inside a checkout, its root is the default --repo
    monkeypatch.chdir(repo / "data")
    assert main(["tasks", "list"]) == 0
    assert "My own passive" in capsys.readouterr().out


def test_the_packaged_catalog_is_found_beside_a_folder_named_probebench(
        tmp_path: Path) -> None:
    """A folder named ``probebench`` in the working directory (a clone beside a script)
    makes ``import probebench`` a namespace package spanning both folders; the packaged
    tasks must still be found (``importlib.resources`` on Python 3.11 gave a
    ``MultiplexedPath`` whose ``joinpath`` took one child only, a TypeError)."""
    (tmp_path / "probebench").mkdir()
    code = ("from probebench.tasks.catalog import TaskCatalog; "
            "catalog = TaskCatalog.default(); print(catalog.path, len(catalog.ids))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    path, count = done.stdout.split()
    assert Path(path).resolve() == PACKAGED_TASKS.resolve()
    assert int(count) == len(TaskCatalog.default().ids)


def test_every_packaged_task_reads_the_same_spelled_out_in_full(tmp_path: Path) -> None:
    """format_defaults only save repetition: the packaged file, and the same tasks written
    one by one in full (as `tasks add` writes them), parse to equal specs."""
    packaged = read_tasks_file(PACKAGED_TASKS)
    assert set(packaged.format_defaults) == {"blimp", "syntaxgym"}
    raw = yaml.safe_load(PACKAGED_TASKS.read_text())
    blimp = next(t for t in raw["tasks"] if t["format"] == "blimp")
    assert "labels" not in blimp and "split" not in blimp  # taken from the defaults
    path = tmp_path / "tasks.yaml"
    path.write_text("version: 1\ntasks:\n" + "".join(spec_yaml(t) for t in packaged.tasks))
    assert read_tasks_file(path).tasks == packaged.tasks
    assert "format_defaults" not in path.read_text()


def test_a_task_s_own_field_replaces_its_format_s_default_whole(tmp_path: Path) -> None:
    catalog = copy_catalog(tmp_path)
    spec = catalog.spec("blimp_passive_1")
    text = catalog.path.read_text().replace(
        "- id: blimp_passive_1\n",
        "- id: blimp_passive_1\n  slices: [UID]\n  split: null\n  description: mine\n", 1)
    catalog.path.write_text(text)
    mine = TaskCatalog.from_file(catalog.path)
    changed = mine.spec("blimp_passive_1")
    assert changed.slices == ["UID"] and changed.split is None  # not merged into the default
    assert changed.description == "mine"
    assert changed.labels == spec.labels and changed.license == spec.license
    assert changed.model_copy(update={"slices": spec.slices, "split": spec.split,
                                      "description": ""}) == spec
    assert mine.spec("blimp_transitive") == catalog.spec("blimp_transitive")
    with pytest.raises(InputError, match="needs a 'split'"):  # null left no split at all
        mine.load("blimp_passive_1")


@pytest.mark.parametrize(("block", "message"), [
    ("  verbs:\n    test_sha256: " + "0" * 64 + "\n",
     r"field 'format_defaults\.verbs\.test_sha256': Extra inputs"),
    ("  verbs:\n    id: shared\n", r"field 'format_defaults\.verbs\.id': Extra inputs"),
    ("  Verbs!:\n    license: MIT\n", r"field 'format_defaults\.Verbs!\.\[key\]'"),
    ("  verbs:\n    split: half\n", r"field 'format_defaults\.verbs\.split'"),
])
def test_format_defaults_are_checked_where_they_are_written(tmp_path: Path, block: str,
                                                            message: str) -> None:
    path = tmp_path / "tasks.yaml"
    path.write_text(PACKAGED_TASKS.read_text().replace("format_defaults:\n",
                                                       "format_defaults:\n" + block, 1))
    with pytest.raises(InputError, match=message):
        read_tasks_file(path)


def test_tasks_add_to_a_file_with_format_defaults_writes_what_differs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An appended task reads back as it was made: a field equal to its format's default
    is left out, one that differs is written, even when empty."""
    catalog = copy_catalog(tmp_path)
    lines = (catalog.root / "data/blimp/passive_1.jsonl").read_text().splitlines()
    (catalog.root / "data" / "mine.jsonl").write_text("\n".join(lines[:40]) + "\n")
    before = catalog.path.read_text()
    assert main(["tasks", "add", str(catalog.root / "data" / "mine.jsonl"), "--to",
                 str(catalog.path), "--id", "my_passive", "--format", "blimp",
                 "--license", "CC-BY-4.0", "--source", "the first 40 passive_1 pairs",
                 "--test-fraction", "0.5", "--salt", "probebench-blimp-v1",
                 "--label", "1=grammatical (sentence_good)",
                 "--label", "0=ungrammatical (sentence_bad)"]) == 0
    assert "added task my_passive" in capsys.readouterr().out
    after = catalog.path.read_text()
    assert after.startswith(before)
    added = after[len(before):]
    assert "slices: []" in added  # blimp's default slices would have filled it
    for same in ("license:", "labels:", "split:"):
        assert same not in added
    spec = TaskCatalog.from_file(catalog.path).spec("my_passive")
    assert spec.slices == [] and spec.source == "the first 40 passive_1 pairs"
    assert spec.labels == catalog.spec("blimp_passive_1").labels
    assert spec.split == catalog.spec("blimp_passive_1").split
