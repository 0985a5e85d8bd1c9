"""The probe on the sibling tasks of its family (``probebench.evaluation.generalisation``):
which tasks are siblings, the block ``submit`` writes (the same from Python and the
command line, bounded by ``--limit``), its REPORT.md section, its AUROC against sklearn
on the probe's own scores, and the registry record kept beside the results.

A tasks file of its own declares a family of two small statements tasks written here
(cities, and the same cities negated: Marks & Tegmark's famous pair), plus a third
statements task that declares no family; a real probe is trained on the embedded
SmolLM2 from the first task's train split.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

import probebench
from probebench.artifact.checks import validate
from probebench.artifact.weights import sklearn_to_weights
from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.generalisation import (
    GENERALISATION,
    declared_families,
    evaluate_siblings,
    sibling_tasks,
)
from probebench.evaluation.report import render_report
from probebench.evaluation.results import (
    GeneralisationOut,
    LimitOut,
    StageTiming,
    Submission,
    Timing,
)
from probebench.evaluation.session import Session, SubmitOptions, limit_note
from probebench.models import Site, extract
from probebench.registry.store import (
    GENERALISATION_FILE,
    generalisation_path,
    latest_generalisation,
    latest_results,
    read_generalisation,
    result_path,
    store_generalisation,
    store_submission,
)
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.scaffold import add_task, new_spec
from tests.artifacts import META, write_docs
from tests.registry_fixture import synthetic_record, synthetic_result

pytestmark = pytest.mark.usefixtures("share_module_cache")

FAMILY = "truth"
CITIES_TASK, NEGATED_TASK, PLAIN_TASK = "toy_cities", "toy_neg_cities", "toy_plain"
SITE = Site(8, "last_token")
#: items of each split a limited submit reads
LIMIT = 12
CITIES = [("Paris", "France"), ("Tokyo", "Japan"), ("Berlin", "Germany"),
          ("Madrid", "Spain"), ("Rome", "Italy"), ("Cairo", "Egypt"), ("Lima", "Peru"),
          ("Oslo", "Norway"), ("Ottawa", "Canada"), ("Canberra", "Australia"),
          ("Nairobi", "Kenya"), ("Lisbon", "Portugal"), ("Athens", "Greece"),
          ("Dublin", "Ireland"), ("Vienna", "Austria"), ("Warsaw", "Poland"),
          ("Prague", "Czechia"), ("Seoul", "South Korea"), ("Hanoi", "Vietnam"),
          ("Bangkok", "Thailand"), ("Moscow", "Russia"), ("Beijing", "China"),
          ("Delhi", "India"), ("Havana", "Cuba"), ("Santiago", "Chile"),
          ("Bogota", "Colombia"), ("Caracas", "Venezuela"), ("Helsinki", "Finland"),
          ("Stockholm", "Sweden"), ("Budapest", "Hungary"), ("Ankara", "Turkey"),
          ("Manila", "the Philippines"), ("Jakarta", "Indonesia"), ("Dakar", "Senegal"),
          ("Accra", "Ghana"), ("Quito", "Ecuador"), ("Kyiv", "Ukraine"),
          ("Bern", "Switzerland")]


def _csv(rows: list[tuple[str, int]]) -> str:
    return "text,label\n" + "".join(f"{text},{label}\n" for text, label in rows)


def toy_catalog(folder: Path) -> TaskCatalog:
    """``folder/tasks.yaml``: toy_cities and toy_neg_cities in family ``truth``, and
    toy_plain (statements, no family), each with its own CSV, split half and half."""
    folder.mkdir(parents=True, exist_ok=True)
    wrong = CITIES[7:] + CITIES[:7]  # another city's country: false
    cities = [r for (c, k), (_, w) in zip(CITIES, wrong, strict=True)
              for r in ((f"The city of {c} is in {k}.", 1), (f"The city of {c} is in {w}.", 0))]
    negated = [r for (c, k), (_, w) in zip(CITIES, wrong, strict=True)
               for r in ((f"The city of {c} is not in {k}.", 0),
                         (f"The city of {c} is not in {w}.", 1))]
    plain = [(f"{n} plus {n} makes {2 * n + (k % 2)}.", 1 - k % 2)
             for k, n in enumerate(range(3, 43))]
    tasks_file = folder / "tasks.yaml"
    for task_id, rows, family in ((CITIES_TASK, cities, FAMILY),
                                  (NEGATED_TASK, negated, FAMILY), (PLAIN_TASK, plain, None)):
        (folder / f"{task_id}.csv").write_text(_csv(rows), "utf-8")
        spec = new_spec(task_id=task_id, fmt="statements",
                        files={"data": folder / f"{task_id}.csv"}, folder=folder,
                        title=task_id.replace("_", " "), license="CC0-1.0",
                        source="written for the tests", test_fraction=0.5)
        add_task(tasks_file, spec.model_copy(update={"family": family}))
    return TaskCatalog.from_file(tasks_file)


def train_probe(folder: Path, lm: Any, catalog: TaskCatalog, task_id: str
                ) -> tuple[Path, StandardScaler, LogisticRegression]:
    """A logistic-regression probe on ``task_id``'s train split at ``SITE``, native form;
    returns the artifact and the fitted sklearn objects."""
    prompts = [p for item in catalog.load(task_id).splits["train"] for p in item.prompts]
    x = extract(lm, prompts, [SITE], progress=False)[SITE]
    y = np.array([p.label for p in prompts])
    scaler = StandardScaler().fit(x)
    probe = LogisticRegression(max_iter=1000, C=0.1).fit(scaler.transform(x), y)
    write_docs(folder, {**META, "layer": SITE.layer, "position": SITE.position,
                        "training_data": f"{task_id} train ({len(prompts)} prompts)"})
    sklearn_to_weights(probe, scaler).save_native(folder)
    return folder, scaler, probe


@pytest.fixture(scope="module")
def world(smollm: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("generalisation")
    catalog = toy_catalog(root / "tasks")
    probe, scaler, clf = train_probe(root / "probe", smollm, catalog, CITIES_TASK)
    return {"root": root, "catalog": catalog, "probe": probe, "scaler": scaler, "clf": clf}


def _sklearn_auroc(world: dict[str, Any], lm: Any, task_id: str, n: int | None) -> float:
    """roc_auc_score of the sklearn probe's P(true) over the first ``n`` test items of
    ``task_id``, from activations extracted here."""
    items = world["catalog"].load(task_id).test[:n]
    prompts = [p for item in items for p in item.prompts]
    x = extract(lm, prompts, [SITE], cache=False, progress=False)[SITE]
    scores = world["clf"].predict_proba(world["scaler"].transform(x))[:, 1]
    return float(roc_auc_score([p.label for p in prompts], scores))


def test_siblings_are_the_other_tasks_of_a_declared_family(world: dict[str, Any]) -> None:
    catalog: TaskCatalog = world["catalog"]
    assert catalog.spec(PLAIN_TASK).family_key == "statements"
    assert declared_families(catalog) == {FAMILY}
    assert sibling_tasks(catalog, [CITIES_TASK]) == {FAMILY: [NEGATED_TASK]}
    assert sibling_tasks(catalog, [NEGATED_TASK, PLAIN_TASK]) == {FAMILY: [CITIES_TASK]}
    # a family that is only a format has none; nor has a family the tasks cover whole
    assert sibling_tasks(catalog, [PLAIN_TASK]) == {}
    assert sibling_tasks(catalog, [CITIES_TASK, NEGATED_TASK]) == {}
    packaged = TaskCatalog.default()
    blimp = [t for t, s in packaged.specs.items() if s.format == "blimp"]
    assert len(blimp) > 1 and sibling_tasks(packaged, blimp[:1]) == {}


@pytest.fixture(scope="module")
def siblings(world: dict[str, Any], smollm: Any) -> dict[str, Any]:
    """The sibling pass alone, in a session that already holds the model (no disk
    cache: the pass runs the model)."""
    session = Session(world["catalog"], SubmitOptions(bootstrap=200, progress=False,
                                                      cache=False))
    session.loaded["smollm2-135m"] = smollm
    report = validate(world["probe"], catalog=world["catalog"])
    assert report.meta is not None and report.weights is not None
    block = evaluate_siblings(session, [CITIES_TASK], report.meta, report.weights, SITE)
    return {"block": block, "session": session, "meta": report.meta,
            "weights": report.weights}


def test_the_sibling_auroc_is_sklearns_on_the_probes_scores(
        world: dict[str, Any], siblings: dict[str, Any], smollm: Any) -> None:
    """Its AUROC is sklearn's over the probe's own scores on the sibling's test set,
    with the interval around it; its time and pass are the generalisation stage's."""
    block = siblings["block"]
    assert block is not None
    assert (block.family, block.trained_on, list(block.siblings)) == (
        FAMILY, [CITIES_TASK], [NEGATED_TASK])
    sib = block.siblings[NEGATED_TASK]
    spec = world["catalog"].spec(NEGATED_TASK)
    assert (sib.version, sib.test_sha256, sib.note) == (spec.version, spec.test_sha256, None)
    assert sib.n == len(world["catalog"].load(NEGATED_TASK).test)
    assert sib.auroc == pytest.approx(_sklearn_auroc(world, smollm, NEGATED_TASK, None),
                                      abs=2e-6)
    low, high = sib.ci
    assert low is not None and high is not None and low <= sib.auroc <= high
    session = siblings["session"]
    assert session.stage_passes == {GENERALISATION: 1}
    assert session.stage_seconds[GENERALISATION] > 0
    # off: nothing runs
    off = Session(world["catalog"], SubmitOptions(progress=False, generalisation=False))
    assert evaluate_siblings(off, [CITIES_TASK], siblings["meta"], siblings["weights"],
                             SITE) is None
    assert off.stage_passes == {}


def _submission(world: dict[str, Any], siblings: dict[str, Any],
                block: GeneralisationOut | None) -> Submission:
    """A submission on toy_cities as a registry run from committed code hands it to the
    store (whole test sets, a clean commit): its task result made up (the store's and
    the report's rules are the point here, not its numbers), its generalisation block
    ``block``; the model's identity that of the sibling pass."""
    result = synthetic_result("blimp_passive_1", 0.5, np.random.default_rng(0)).model_copy(
        update={"id": CITIES_TASK, "format": "statements", "accuracy_name": "accuracy",
                "test_sha256": world["catalog"].spec(CITIES_TASK).test_sha256})
    record = synthetic_record(result)
    return Submission(
        spec_version="0.0.1", probebench_version="0.1.0", probe=record.probe,
        model=siblings["session"].model("smollm2-135m").identity.to_dict(), device="cpu",
        seed=0, bootstrap_resamples=200,
        versions=record.versions, definitions={}, tasks=[result], run=record.run,
        timing=Timing(latency_ms={}, latency_prompts=2, wall_seconds=9.0,
                      stages={GENERALISATION: StageTiming(seconds=1.25, passes=1,
                                                          tokens=300)}),
        generalisation=block)


def test_the_report_shows_the_matrix_row_before_its_timing(
        world: dict[str, Any], siblings: dict[str, Any]) -> None:
    submission = _submission(world, siblings, siblings["block"])
    report = render_report(submission)
    section = report.index("## Generalisation to sibling tasks")
    assert report.index("## Summary") < section < report.index("## Timing")
    own, sib = submission.tasks[0], siblings["block"].siblings[NEGATED_TASK]
    n = own.n_items
    assert (f"| toy\\_cities | trained on (its own test set) | {n} | "
            f"{own.auroc.value:.3f} [{own.auroc.ci_low:.3f}, {own.auroc.ci_high:.3f}] |"
            ) in report
    assert (f"| toy\\_neg\\_cities | sibling | {sib.n} | {sib.auroc:.3f} "
            f"[{sib.ci[0]:.3f}, {sib.ci[1]:.3f}] | reported, not ranked |") in report
    assert "took 1.2 s (1 forward pass; `timing.stages.generalisation`)" in report
    assert "Generalisation" not in render_report(_submission(world, siblings, None))


def _submit_cli(world: dict[str, Any], out: Path, *extra: str) -> dict[str, Any]:
    assert main(["submit", str(world["probe"]), "--tasks", CITIES_TASK, "--tasks-file",
                 str(world["catalog"].path), "--limit", str(LIMIT), "--bootstrap", "200",
                 "--latency-prompts", "2", "--no-guard", "--quiet", "--out",
                 str(out / "submission.json"), "--report", str(out / "REPORT.md"),
                 *extra]) == 0
    return dict(json.loads((out / "submission.json").read_text("utf-8")))


def test_submit_writes_the_block_and_the_report_section(world: dict[str, Any], smollm: Any,
                                                        tmp_path: Path) -> None:
    """``submit --limit`` on the first task: the generalisation block holds the sibling,
    limited like every split, with sklearn's AUROC; REPORT.md shows the row before its
    timing; the time is a stage of its own; the sibling is never a result."""
    doc = _submit_cli(world, tmp_path)
    assert [t["id"] for t in doc["tasks"]] == [CITIES_TASK]
    block = doc["generalisation"]
    assert (block["family"], block["trained_on"], list(block["siblings"])) == (
        FAMILY, [CITIES_TASK], [NEGATED_TASK])
    sib = block["siblings"][NEGATED_TASK]
    assert sib["n"] == LIMIT and sib["note"] is None
    assert sib["auroc"] == pytest.approx(_sklearn_auroc(world, smollm, NEGATED_TASK, LIMIT),
                                         abs=2e-6)
    assert sib["ci"][0] <= sib["auroc"] <= sib["ci"][1]
    stage = doc["timing"]["stages"][GENERALISATION]  # apart from the tasks' stages
    assert stage["passes"] <= 1 and stage["seconds"] > 0
    report = (tmp_path / "REPORT.md").read_text("utf-8")
    section = report.index("## Generalisation to sibling tasks")
    assert section < report.index("## Timing")
    own = doc["tasks"][0]["auroc"]
    assert (f"| {CITIES_TASK.replace('_', chr(92) + '_')} | trained on (its own test set) | "
            f"{LIMIT} | {own['value']:.3f} [{own['ci_low']:.3f}, {own['ci_high']:.3f}] |"
            ) in report
    assert (f"| {NEGATED_TASK.replace('_', chr(92) + '_')} | sibling | {LIMIT} | "
            f"{sib['auroc']:.3f} [{sib['ci'][0]:.3f}, {sib['ci'][1]:.3f}] |") in report

    # --no-generalisation and Python's SubmitOptions(generalisation=False) agree: no
    # block, no section, and the task's result unchanged (the siblings are no part of it)
    off = _submit_cli(world, tmp_path / "off", "--no-generalisation")
    assert off["generalisation"] is None
    assert "Generalisation to sibling tasks" not in (tmp_path / "off" / "REPORT.md").read_text()
    assert GENERALISATION not in off["timing"]["stages"]
    python = probebench.submit(world["probe"], [CITIES_TASK], SubmitOptions(
        bootstrap=200, progress=False, latency_prompts=2, limit=LIMIT, generalisation=False),
        catalog=world["catalog"], guard=None)
    assert python.generalisation is None
    assert off["tasks"] == doc["tasks"] == python.to_dict()["tasks"]


def test_the_store_keeps_the_record_beside_the_results(
        world: dict[str, Any], siblings: dict[str, Any], tmp_path: Path) -> None:
    whole = _submission(world, siblings, siblings["block"])
    registry, entry = tmp_path / "registry", "org/toy-cities-smollm2-135m-l8-v1"
    limited = whole.model_copy(update={"limit": LimitOut(items=LIMIT,
                                                         note=limit_note(LIMIT))})
    with pytest.raises(InputError, match="limited to 12 items per task"):
        store_generalisation(registry, entry, limited)
    stored = store_submission(registry, entry, whole) + store_generalisation(registry, entry,
                                                                             whole)
    path = generalisation_path(registry, entry)
    assert stored == [result_path(registry, entry, CITIES_TASK), path]
    assert path.name == GENERALISATION_FILE and path.parent == stored[0].parent
    # the results store never reads it as a task, and the record reads back
    assert list(latest_results(registry, entry)) == [CITIES_TASK]
    record = latest_generalisation(registry, entry)
    assert record is not None and record.generalisation == whole.generalisation
    assert record.probe.bundle_sha256 == whole.probe.bundle_sha256
    assert (record.run, record.seconds) == (whole.run, 1.25)
    # the same numbers again: nothing appended; another number: a new record
    assert store_generalisation(registry, entry, whole) == []
    block = whole.generalisation
    assert block is not None
    sib = block.siblings[NEGATED_TASK]
    moved = block.model_copy(update={"siblings": {NEGATED_TASK: sib.model_copy(
        update={"auroc": round(1 - (sib.auroc or 0.0), 6)})}})
    assert store_generalisation(registry, entry, whole.model_copy(
        update={"generalisation": moved})) == [path]
    assert len(read_generalisation(path)) == 2
    latest = latest_generalisation(registry, entry)
    assert latest is not None and latest.generalisation == moved
    # a reduced-precision run while a float32 record exists: the float32 record stands
    half = whole.model_copy(update={"model": {**whole.model, "dtype": "bfloat16"}})
    assert store_generalisation(registry, entry, half) == []
    # uncommitted code is refused as for results
    assert whole.run is not None
    dirty = whole.model_copy(update={"run": whole.run.model_copy(
        update={"probebench_commit": "ab" * 20 + "+dirty"})})
    with pytest.raises(InputError, match="uncommitted changes"):
        store_generalisation(registry, entry, dirty)
    # no block, nothing stored
    assert store_generalisation(tmp_path / "other", entry, whole.model_copy(
        update={"generalisation": None})) == []
    assert json.loads(path.read_text())["entry"] == entry
