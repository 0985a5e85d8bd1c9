"""Families on the leaderboard come from the tasks (``TaskSpec.family_key``), and a
family with several tasks shows its generalisation matrix, which nothing ranked reads.

A registry written here, on the tasks file of ``tests/evaluation/test_generalisation.py``
(toy_cities and toy_neg_cities in family ``truth``, toy_plain a statements task of no
declared family): entries with stored results (made-up predictions, as the site tests'
synthetic registry has them) and stored sibling evaluations, both written through the
store as ``registry evaluate`` writes them.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from probebench.evaluation.results import GeneralisationOut, SiblingOut, Submission
from probebench.leaderboard.build import build_leaderboard, family_page, generalisation_matrix
from probebench.leaderboard.probescore import DEFAULT_SPEC
from probebench.leaderboard.ranks import FAMILY_NAMES, family_name, family_sort_key
from probebench.registry.baselines import store_baselines
from probebench.registry.entry import entry_path
from probebench.registry.store import (
    generalisation_path,
    latest_results,
    store_generalisation,
    store_submission,
)
from probebench.tasks.catalog import TaskCatalog
from tests.evaluation.test_generalisation import (
    CITIES_TASK,
    FAMILY,
    NEGATED_TASK,
    PLAIN_TASK,
    toy_catalog,
)
from tests.registry_fixture import synthetic_record, synthetic_result

RESAMPLES = 30


def E(short: str) -> str:  # noqa: N802 - reads as the entry it names
    """The id of the entry called ``short``."""
    return f"org/{short}-smollm2-135m-l8-v1"

#: entry -> (its task, its AUROC strength, what its sibling record holds)
#: "sibling": a current record; "stale": measured on another test set; "other-bundle": a
#: record of another artifact; None: no record
ENTRIES: dict[str, tuple[str, float, str | None]] = {
    E("cities-a"): (CITIES_TASK, 0.6, "sibling"),
    E("cities-b"): (CITIES_TASK, 0.4, "sibling"),
    E("cities-c"): (CITIES_TASK, 0.5, None),
    E("negated-a"): (NEGATED_TASK, 0.5, "stale"),
    E("negated-b"): (NEGATED_TASK, 0.45, "other-bundle"),
    E("plain-a"): (PLAIN_TASK, 0.5, None),
}


def _sibling_auroc(entry_id: str) -> float:
    """A made-up sibling AUROC per entry, distinct from every own AUROC shown."""
    return round(0.5 + 0.01 * (sorted(ENTRIES).index(entry_id) + 1), 6)


def _short(entry_id: str) -> str:
    """cities-a of org/cities-a-smollm2-135m-l8-v1."""
    return entry_id.split("/")[1].removesuffix("-smollm2-135m-l8-v1")


def _entry(entry_id: str, task: str, bundle: str) -> dict[str, Any]:
    return {
        "id": entry_id, "name": f"Probe {entry_id}", "short_name": _short(entry_id),
        "author": "Synthetic Author", "org": "org", "category": "truth",
        "probe_type": "linear", "model": "smollm2-135m", "layer": 8,
        "position": "last_token", "paper": None, "paper_title": None,
        "artifact_url": f"artifacts/{_short(entry_id)}", "artifact_sha256": bundle,
        "reproducer_notebook": "train.ipynb", "colab_url": None, "license": "MIT",
        "release": "2026-11-01", "param_count": 577, "size_mb": 0.01,
        "tagline": "A synthetic truth probe", "description": "A synthetic entry.",
        "status": "live", "tasks": [task], "transfer_targets": []}


def write_registry(root: Path, catalog: TaskCatalog) -> Path:
    """The entries of ``ENTRIES``, their results and sibling records, and the tasks'
    majority baselines (so the entries that beat them are ranked)."""
    rng = np.random.default_rng(0)
    registry = root / "registry"
    baselines_done: set[str] = set()
    for k, (entry_id, (task, strength, kind)) in enumerate(sorted(ENTRIES.items())):
        bundle = f"{k + 1:064x}"
        path = entry_path(registry, entry_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(_entry(entry_id, task, bundle), sort_keys=False))
        spec = catalog.spec(task)
        result = synthetic_result("blimp_passive_1", strength, rng).model_copy(update={
            "id": task, "format": "statements", "test_sha256": spec.test_sha256,
            "accuracy_name": "accuracy"})
        record = synthetic_record(result, bundle_sha256=bundle)
        block = None
        if kind is not None:
            sibling = NEGATED_TASK if task == CITIES_TASK else CITIES_TASK
            sha = catalog.spec(sibling).test_sha256 if kind != "stale" else "ef" * 32
            block = GeneralisationOut(family=FAMILY, trained_on=[task], siblings={
                sibling: SiblingOut(version=1, test_sha256=sha,
                                    auroc=_sibling_auroc(entry_id),
                                    ci=(_sibling_auroc(entry_id) - 0.1,
                                        _sibling_auroc(entry_id) + 0.1), n=17)})
        probe = record.probe.model_copy(update={"id": _short(entry_id), "layer": 8})
        submission = Submission(
            spec_version=DEFAULT_SPEC, probebench_version="0.1.0", probe=probe,
            model=record.model, device=record.device, seed=record.seed,
            bootstrap_resamples=record.bootstrap_resamples, versions=record.versions,
            definitions={}, tasks=[record.result], run=record.run, generalisation=block)
        assert store_submission(registry, entry_id, submission)
        if kind == "other-bundle":  # the record of an earlier artifact of the entry
            submission = submission.model_copy(update={"probe": probe.model_copy(
                update={"bundle_sha256": "9" * 64})})
        assert store_generalisation(registry, entry_id, submission) == (
            [] if block is None else [generalisation_path(registry, entry_id)])
        if task not in baselines_done:
            baselines_done.add(task)
            assert store_baselines(registry, submission)
    return registry


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("matrix")
    catalog = toy_catalog(root / "tasks")
    registry = write_registry(root, catalog)
    with_records = build_leaderboard(registry, root / "site", catalog=catalog,
                                     n_resamples=RESAMPLES)
    # the same registry without any sibling record
    bare = root / "bare"
    shutil.copytree(registry, bare)
    for path in sorted(bare.rglob("_generalisation.json")):
        path.unlink()
    without = build_leaderboard(bare, root / "bare-site", catalog=catalog,
                                n_resamples=RESAMPLES)
    return {"root": root, "catalog": catalog, "registry": registry, "site": root / "site",
            "bare_site": root / "bare-site", "summary": with_records, "bare": without}


def _board(site: Path) -> dict[str, Any]:
    return dict(json.loads((site / "leaderboard.json").read_text("utf-8")))


def test_declared_families_have_display_names_and_come_after_the_formats() -> None:
    assert family_name("truth") == "Truth"
    assert family_name("honesty") == "Honesty and deception"
    assert family_name("refusal") == "Refusal"
    assert family_name("blimp") == "BLiMP" and family_name("statements") == "Statements"
    order = list(FAMILY_NAMES)
    assert order.index("statements") < order.index("truth") < order.index("honesty") \
        < order.index("refusal")
    assert family_sort_key("refusal") < family_sort_key("unnamed") < \
        family_sort_key("cross-family")


def test_a_declared_family_is_a_section_of_its_own(world: dict[str, Any]) -> None:
    """toy_plain and the truth tasks share a format but not a family: two sections, two
    family pages, and every ranking and result row names the task's family."""
    board = _board(world["site"])
    families = {r["family"] for r in board["rankings"]}
    assert families == {FAMILY, "statements"}
    assert {(r["task"], r["family"]) for r in board["results"]} == {
        (CITIES_TASK, FAMILY), (NEGATED_TASK, FAMILY), (PLAIN_TASK, "statements")}
    assert board["schema_version"] == "4"
    for ranking in board["rankings"]:
        expected = FAMILY if ranking["tasks"][0] != PLAIN_TASK else "statements"
        assert ranking["family"] == expected
    index = (world["site"] / "index.html").read_text("utf-8")
    assert index.index(">Statements<") < index.index(">Truth<")
    truth = (world["site"] / family_page(FAMILY)).read_text("utf-8")
    plain = (world["site"] / family_page("statements")).read_text("utf-8")
    assert "<h1>Truth</h1>" in truth and "<h1>Statements</h1>" in plain
    # (the filters above the tables list every task; the pages' tasks and entries differ)
    assert f"tasks/{PLAIN_TASK}.html" not in truth and f"tasks/{CITIES_TASK}.html" in truth
    assert f"tasks/{CITIES_TASK}.html" not in plain and f"tasks/{PLAIN_TASK}.html" in plain
    assert "cities-a" in truth and "plain-a" not in truth and "cities-a" not in plain
    assert [r.tasks for r in world["summary"].ranking] == [
        (PLAIN_TASK,), (CITIES_TASK,), (NEGATED_TASK,)]


def _text(html: str) -> str:
    """A cell's text: line-break hints dropped, other tags as spaces, spaces collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", html.replace("<wbr>", "")).split())


def _matrix_rows(page: str) -> list[list[str]]:
    """The generalisation table's body rows, each cell's text."""
    table = page[page.index('<table class="generalisation"'):]
    body = table[table.index("<tbody>"):table.index("</tbody>")]
    return [[_text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body)]


def test_the_family_page_shows_the_matrix(world: dict[str, Any]) -> None:
    catalog = world["catalog"]
    results = {e: latest_results(world["registry"], e)[t] for e, (t, _, _) in ENTRIES.items()}

    def own(short: str) -> str:
        a = results[E(short)].result.auroc
        return f"{a.value:.3f} [{a.ci_low:.3f}, {a.ci_high:.3f}]"

    def sibling(short: str) -> str:
        v = _sibling_auroc(E(short))
        return f"{v:.3f} [{v - 0.1:.3f}, {v + 0.1:.3f}] 17 items"

    truth = (world["site"] / family_page(FAMILY)).read_text("utf-8")
    assert "Generalisation across the family" in truth
    head = truth[truth.index('<table class="generalisation"'):]
    head = head[:head.index("</thead>")]
    assert head.index(CITIES_TASK) < head.index(NEGATED_TASK)
    n_items = results[E("cities-a")].result.n_items
    rows = _matrix_rows(truth)
    # grouped by the task trained on (column order), then by entry id; the first row of
    # a group carries the group's heading
    assert rows == [
        ["toy_cities", "cities-a 8:last_token", f"{own('cities-a')} {n_items} items",
         sibling("cities-a")],
        ["cities-b 8:last_token", f"{own('cities-b')} {n_items} items",
         sibling("cities-b")],
        ["cities-c 8:last_token", f"{own('cities-c')} {n_items} items", "—"],
        ["toy_neg_cities", "negated-a 8:last_token",
         f"n/a measured on test set efefefefefef, not the registered "
         f"{catalog.spec(CITIES_TASK).test_sha256[:12]}: evaluate the entry again",
         f"{own('negated-a')} {n_items} items"],
        ["negated-b 8:last_token", "—", f"{own('negated-b')} {n_items} items"]]
    # the diagonal is bold; the statements family (one task) has no matrix
    assert truth.count('class="num own"') == 5
    plain = (world["site"] / family_page("statements")).read_text("utf-8")
    assert "generalisation" not in plain


def test_leaderboard_json_carries_each_familys_matrix(world: dict[str, Any]) -> None:
    (matrix,) = _board(world["site"])["generalisation"]
    assert (matrix["family"], matrix["tasks"]) == (FAMILY, [CITIES_TASK, NEGATED_TASK])
    rows = {r["entry_id"]: r for r in matrix["rows"]}
    assert [r["entry_id"] for r in matrix["rows"]] == [
        E("cities-a"), E("cities-b"), E("cities-c"), E("negated-a"), E("negated-b")]
    a = rows[E("cities-a")]
    assert a["trained_on"] == [CITIES_TASK] and a["cells"][CITIES_TASK]["own"] is True
    sib = a["cells"][NEGATED_TASK]
    assert (sib["own"], sib["auroc"], sib["n_items"], sib["note"]) == (
        False, _sibling_auroc(E("cities-a")), 17, None)
    assert list(rows[E("cities-c")]["cells"]) == [CITIES_TASK]
    assert list(rows[E("negated-b")]["cells"]) == [NEGATED_TASK]
    stale = rows[E("negated-a")]["cells"][CITIES_TASK]
    assert stale["auroc"] is None and "not the registered" in stale["note"]
    # the bare registry's matrix: the diagonal only (a declared family keeps its matrix)
    (bare,) = _board(world["bare_site"])["generalisation"]
    assert all(list(r["cells"]) == r["trained_on"] for r in bare["rows"])


def test_sibling_records_change_no_ranking_and_no_probescore(world: dict[str, Any]) -> None:
    with_records, without = _board(world["site"]), _board(world["bare_site"])
    assert any(r["cells"].get(NEGATED_TASK, {}).get("own") is False
               for m in with_records["generalisation"] for r in m["rows"])
    for key in ("results", "rankings", "probescores"):
        assert with_records[key] == without[key]
    assert world["summary"].ranking == world["bare"].ranking
    assert any(e.rank is not None for t in world["summary"].ranking for e in t.entries)
    assert (world["site"] / "leaderboard.csv").read_bytes() == \
        (world["bare_site"] / "leaderboard.csv").read_bytes()


def test_a_format_family_without_declared_siblings_has_no_matrix(
        world: dict[str, Any], tmp_path: Path) -> None:
    """The same tasks with no ``family:`` are one statements family of three tasks, but
    a format groups phenomena, not datasets of one property: no matrix, unless stored
    sibling evaluations exist."""
    folder = tmp_path / "tasks"
    shutil.copytree(world["catalog"].path.parent, folder)
    text = (folder / "tasks.yaml").read_text("utf-8")
    (folder / "tasks.yaml").write_text(text.replace(f"  family: {FAMILY}\n", ""), "utf-8")
    catalog = TaskCatalog.from_file(folder / "tasks.yaml")
    assert {s.family_key for s in catalog.specs.values()} == {"statements"}
    from probebench.leaderboard.build import select_entries

    bare = world["root"] / "bare"
    assert generalisation_matrix("statements", catalog, select_entries(bare, catalog)) is None
    matrix = generalisation_matrix("statements", catalog,
                                   select_entries(world["registry"], catalog))
    assert matrix is not None and matrix.tasks == [CITIES_TASK, NEGATED_TASK, PLAIN_TASK]
