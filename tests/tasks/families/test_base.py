"""A task format of its own, written and registered here, works end to end without editing any
module of probebench: read, verify, train, score, submit, store, site.

The format reads tab-separated minimal pairs (``good<TAB>bad``, one pair per line), made
from 160 real BLiMP determiner-noun pairs.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.lm_scores import default_formats, default_tasks, score_lm
from probebench.evaluation.session import SubmitOptions
from probebench.evaluation.submit import submit
from probebench.leaderboard.ranks import family_name, family_sort_key
from probebench.prompts import Prompt
from probebench.registry.entry import entry_path
from probebench.registry.store import latest_results, store_submission
from probebench.sites import Site
from probebench.tasks import Item, TaskCatalog, TaskData, TaskFormat, TaskSpec
from probebench.tasks.families import (
    FreshGenerator,
    LMScoring,
    SliceChart,
    register_format,
    unregister_format,
)
from probebench.tasks.fresh_items import fresh_items, generator_for, generators
from probebench.tasks.scaffold import new_spec
from probebench.train import TrainConfig, train
from probebench.train.artifact import write_artifact
from tests.catalogs import PACKAGED_ROOT

TASK = "toy_pairs"
DETERMINERS = ("this", "that", "these", "those")


class PairsTsvFormat(TaskFormat):
    """``good<TAB>bad`` lines: an item is right when the good sentence scores higher."""

    name = "pairs_tsv"
    roles = ("pairs",)
    test_roles = ("pairs",)
    accuracy_name = "toy_pair_accuracy"
    accuracy_definition = "the good sentence above the bad one (toy)"
    minimal_pairs = True
    charted_slices: ClassVar[tuple[SliceChart, ...]] = (
        SliceChart("determiner", "accuracy by determiner"),)
    default_slices = ("determiner",)
    lm_scoring = LMScoring("sentence_log_prob", "the good sentence more probable (toy)",
                           by_default=True)
    scored: ClassVar[list[str]] = []  # items this format scored, to show it was asked

    def default_labels(self, options: Mapping[str, Any]) -> dict[int, str]:
        return {1: "the good sentence", 0: "the bad sentence"}

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        items = []
        for number, line in enumerate(files["pairs"].read_text("utf-8").splitlines(), 1):
            good, sep, bad = line.partition("\t")
            if not sep or not good or not bad:
                raise InputError(f"{files['pairs']}:{number}: expected good<TAB>bad")
            word = next((w for w in good.lower().split() if w in DETERMINERS), "-")
            slices = {"determiner": word}
            items.append(Item(f"pair-{number}", (
                Prompt(good, id=f"pair-{number}-good", label=1, slices=slices),
                Prompt(bad, id=f"pair-{number}-bad", label=0, slices=slices)), slices=slices))
        return TaskData(spec, self.split_by_hash(spec, items))

    def score_item(self, item: Item, scores: np.ndarray,
                   threshold: float | None) -> float | None:
        type(self).scored.append(item.id)
        good, bad = scores[0], scores[1]
        return 1.0 if good > bad else 0.5 if good == bad else 0.0


@pytest.fixture
def toy_format() -> Iterator[PairsTsvFormat]:
    fmt = register_format(PairsTsvFormat())
    assert isinstance(fmt, PairsTsvFormat)
    PairsTsvFormat.scored.clear()
    yield fmt
    unregister_format(fmt.name)


def _toy_repo(root: Path) -> TaskCatalog:
    """A repository whose tasks.yaml registers one pairs_tsv task, hashes pinned."""
    source = PACKAGED_ROOT / "data/blimp/determiner_noun_agreement_1.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines()[:160]]
    data = root / "data" / "pairs.tsv"
    data.parent.mkdir(parents=True)
    data.write_text("".join(f"{r['sentence_good']}\t{r['sentence_bad']}\n" for r in rows))
    task = {"id": TASK, "title": "Toy determiner pairs", "format": "pairs_tsv", "version": 1,
            "files": {"pairs": "data/pairs.tsv"},
            "files_sha256": {"data/pairs.tsv": "0" * 64},
            "labels": {1: "the grammatical sentence", 0: "the ungrammatical one"},
            "slices": ["determiner"], "license": "CC-BY-4.0",
            "source": "BLiMP determiner_noun_agreement_1, first 160 pairs",
            "split": {"method": "hash", "test_fraction": 0.4, "salt": "toy"},
            "test_sha256": "0" * 64}
    path = root / "tasks.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "tasks": [task]}, sort_keys=False))
    files_sha256, test_sha256 = TaskCatalog.from_file(path).current_hashes(TASK)
    task.update(files_sha256=files_sha256, test_sha256=test_sha256)
    path.write_text(yaml.safe_dump({"version": 1, "tasks": [task]}, sort_keys=False))
    return TaskCatalog.from_file(path)


def test_an_unregistered_format_is_named_in_the_error(tmp_path: Path) -> None:
    catalog = _toy_repo_without_format(tmp_path)
    with pytest.raises(InputError, match="format 'pairs_tsv' is not registered"):
        catalog.load(TASK)


def _toy_repo_without_format(root: Path) -> TaskCatalog:
    fmt = register_format(PairsTsvFormat())
    try:
        return _toy_repo(root)
    finally:
        unregister_format(fmt.name)


def test_a_format_registered_here_runs_end_to_end(
        toy_format: PairsTsvFormat, tmp_path: Path, smollm: object,
        capsys: pytest.CaptureFixture[str]) -> None:
    catalog = _toy_repo(tmp_path)
    # read and verify, through the library and the CLI
    data = catalog.load(TASK)
    assert data.format is toy_format and len(data.test) > 40 and len(data.splits["train"]) > 60
    assert main(["tasks", "--tasks-file", str(catalog.path), "verify"]) == 0
    assert "1 of 1 tasks match" in capsys.readouterr().out

    # train: the format's items feed the protocol, the test split is scored by the format
    trained = train(TrainConfig(task=TASK, site=Site(4, "last_token"), bootstrap=100),
                    catalog=catalog, progress=False)
    # validated against `catalog` (the packaged one lacks the task): `trained` remembers it
    assert trained.catalog is catalog
    artifact = write_artifact(trained, tmp_path / "registry" / "artifacts" / "toy",
                              created_at=dt.date(2026, 11, 1))
    assert trained.headline.accuracy.value is not None

    # submit: the format's scoring, accuracy name, slices and minimal-pair baseline
    PairsTsvFormat.scored.clear()
    result = submit(artifact, [TASK], SubmitOptions(bootstrap=100, latency_prompts=2,
                                                    progress=False), catalog=catalog)
    task = result.tasks[0]
    assert task.format == "pairs_tsv" and task.accuracy_name == "toy_pair_accuracy"
    assert set(PairsTsvFormat.scored) >= {item.id for item in data.test}
    assert "surprisal" in task.baselines  # minimal_pairs = True
    assert set(task.slices["determiner"]) <= set(DETERMINERS)
    assert "pairs_tsv = the good sentence above the bad one (toy)" in \
        result.definitions["accuracy"]
    # the accuracy is the format's own rule applied to the stored probabilities
    pred = task.predictions
    probs = dict(zip(pred.prompt_ids, pred.probs, strict=True))
    by_hand = [1.0 if probs[f"{i.id}-good"] > probs[f"{i.id}-bad"] else 0.0
               for i in data.test]
    # stored to the reproducibility contract's decimals
    assert task.accuracy.value == round(float(np.mean(by_hand)), 6)
    assert task.accuracy.value == pytest.approx(trained.headline.accuracy.value, abs=1e-6)

    # store and build the site: a task page, an entry page with the format's chart
    registry = tmp_path / "registry"
    entry_id = "testorg/toy-smollm2-135m-l4-v1"
    entry = {"id": entry_id, "name": "Toy probe", "short_name": "toy", "author": "T",
             "org": "testorg", "category": "grammar", "probe_type": "linear",
             "model": "smollm2-135m", "layer": 4, "position": "last_token",
             "artifact_url": "registry/artifacts/toy",
             "artifact_sha256": result.probe.bundle_sha256,
             "reproducer_notebook": "train.ipynb", "license": "Apache-2.0",
             "release": "2026-11-01", "param_count": 577, "size_mb": 0.1, "tagline": "toy",
             "description": "A probe on a format registered by a test.", "status": "live",
             "tasks": [TASK]}
    path = entry_path(registry, entry_id)
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(entry))
    store_submission(registry, entry_id, result, allow_dirty=True)  # a test tree
    assert latest_results(registry, entry_id)[TASK].result.accuracy_name == "toy_pair_accuracy"
    site = tmp_path / "site"
    assert main(["leaderboard", "build", "--repo", str(tmp_path), "--out", str(site),
                 "--resamples", "20"]) == 0
    task_page = (site / "tasks" / f"{TASK}.html").read_text()
    assert "Toy determiner pairs" in task_page and "toy_pair_accuracy" in task_page
    entry_page = next((site / "entries").glob("*.html")).read_text()
    assert "accuracy by determiner" in entry_page


def test_what_a_format_declares_drives_tasks_add_and_score_lm(
        toy_format: PairsTsvFormat, tmp_path: Path, smollm: Any) -> None:
    """Defaults of `tasks add` and what `score-lm` scores come from the format's class,
    not from its name."""
    catalog = _toy_repo(tmp_path)
    spec = new_spec(task_id="toy_again", fmt="pairs_tsv",
                    files={"pairs": tmp_path / "data" / "pairs.tsv"}, folder=tmp_path,
                    title="again", license="CC-BY-4.0", source="the same pairs",
                    test_fraction=0.4)
    assert spec.slices == ["determiner"]
    assert spec.labels == {1: "the good sentence", 0: "the bad sentence"}
    assert "pairs_tsv" in default_formats()
    assert default_tasks(catalog) == [TASK]
    packaged = TaskCatalog.default()
    assert default_tasks(packaged) == [t.id for t in packaged.specs.values()
                                       if t.format in ("blimp", "syntaxgym")]
    result = score_lm(smollm, catalog=catalog, seed=0, n_resamples=100, progress=False)
    (task,) = result.tasks
    assert task.task == TASK and task.protocol == "sentence_log_prob"
    assert task.n_items == len(catalog.load(TASK).test)
    assert result.start_token == "<|endoftext|>"  # the document start, not <|im_start|>
    assert result.to_json()["protocols"] == {
        "pairs_tsv": "the good sentence more probable (toy)"}
    unregister_format("pairs_tsv")
    assert "pairs_tsv" not in default_formats()


NOUNS = ("zebra", "walrus", "lemur", "heron", "otter", "bison", "gecko", "llama")


def _toy_fresh(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
               id_prefix: str) -> list[Item]:
    """Pairs of a noun and its verb's number, nouns drawn in the seeded order."""
    items = []
    for noun in [NOUNS[int(i)] for i in rng.permutation(len(NOUNS))[:n_items]]:
        item_id = f"{id_prefix}{noun}"
        items.append(Item(item_id, (Prompt(f"The {noun} sleeps.", id=f"{item_id}-good", label=1),
                                    Prompt(f"The {noun} sleep.", id=f"{item_id}-bad", label=0))))
    return items


class FreshPairsFormat(PairsTsvFormat):
    """The toy format with a display name and a fresh-item generator of its own."""

    display_name = "Toy pairs"

    def fresh_generators(self) -> tuple[FreshGenerator, ...]:
        return (FreshGenerator(TASK, 6, "Toy pairs of a noun and its verb's number.",
                               _toy_fresh),)


def test_a_formats_generator_and_display_name_are_found_through_the_format(
        tmp_path: Path) -> None:
    """Registering a format is all it takes for its fresh items to be sealable and its
    family to be named on the pages: no second registry."""
    fmt = register_format(FreshPairsFormat(), replace=True)
    try:
        catalog = _toy_repo(tmp_path)
        assert generator_for(TASK).description == fmt.fresh_generators()[0].description
        assert TASK in generators() and "verb_grammar" in generators()
        key = bytes(range(32))
        items = fresh_items(catalog, TASK, key, 2)
        assert len(items) == 6 and all(i.id.startswith("fresh-g2-") for i in items)
        assert [i.record() for i in fresh_items(catalog, TASK, key, 2)] == \
            [i.record() for i in items]  # the key and generation fix the items
        assert [i.prompts[0].text for i in fresh_items(catalog, TASK, key, 3)] != \
            [i.prompts[0].text for i in items]  # another generation, another seed
        assert family_name("pairs_tsv") == "Toy pairs"
        assert family_sort_key("senteval") < family_sort_key("pairs_tsv") < \
            family_sort_key("cross-family")
    finally:
        unregister_format("pairs_tsv")
    assert family_name("pairs_tsv") == "pairs_tsv"  # unregistered: named after the format
    with pytest.raises(InputError, match="no fresh-item generator for task 'toy_pairs'"):
        generator_for(TASK)
