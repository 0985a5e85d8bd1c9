"""Control tasks (Hewitt and Liang, 2019): on minimal pairs the control is a function of
the word types where an item's prompts differ, a degenerate control reports no
selectivity, and the re-trained numbers hold across thread counts and float rounding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.evaluation.protocol import train_val_items
from probebench.evaluation.reproducibility import RETRAINED_TOLERANCE, differences
from probebench.evaluation.selectivity import (
    DIFFERING_TYPES,
    MIN_CONTROL_TYPES,
    SENTENCE_VOTE,
    ControlData,
    control_kind,
    control_task,
    control_types,
    controls_markdown,
    decision_types,
    minimal_pair_controls,
    pairs_split,
    selectivity,
    summarise_control,
    vote,
)
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog

REPO = Path(__file__).resolve().parents[2]


def pair(item_id: str, good: str, bad: str) -> Item:
    return Item(id=item_id, prompts=(Prompt(good, id=f"{item_id}-good", label=1),
                                     Prompt(bad, id=f"{item_id}-bad", label=0)))


def word_of_vote(sign: float, skip: int = 0) -> str:
    """A word type whose control vote is ``sign``."""
    found = [w for w in (f"w{i}" for i in range(200)) if vote(w) == sign]
    return found[skip]


def test_differing_types_are_where_the_prompts_of_an_item_differ() -> None:
    item = pair("a", "No author that the senators liked has had any success",
                "The author that the senators liked has had any success")
    # "the" occurs in both sentences, "no" only in the good one
    assert decision_types(item) == [frozenset({"no"}), frozenset()]
    four = Item(id="b", prompts=(
        Prompt("No author that the senators liked", label=1),
        Prompt("No author that no senators liked", label=1),
        Prompt("The author that the senators liked", label=0),
        Prompt("The author that no senators liked", label=0),
        Prompt("An unlabelled condition", label=None)))
    # against every other labelled condition; the unlabelled one takes no part
    assert decision_types(four) == [frozenset({"no", "the"}), frozenset({"no"}),
                                    frozenset({"the"}), frozenset({"the", "no"})]
    # an answer span says where the task decides (verb grammar: the verb form)
    text = "Sentence: Yesterday my grandmother walked to the bakery.\nJudgement:\n"
    start = text.index("walked")
    verb = Item(id="v", prompts=(Prompt(text, spans={"answer": (start, start + 6)},
                                        label=1),))
    assert decision_types(verb) == [frozenset({"walked"})]


def test_on_minimal_pairs_the_control_label_is_a_function_of_the_differing_types() -> None:
    up, down = word_of_vote(1.0), word_of_vote(-1.0)
    contexts = ["the author near the senators", "every farmer who met my clerks",
                "a customer across from athletes", "some doctor beside the guards",
                "our uncle behind two sailors", "this pilot under those bridges"]
    # each item differs in one word: UP in the good sentence, DOWN in the bad one
    items = [pair(f"i{k}", f"{c} {up} today", f"{c} {down} today")
             for k, c in enumerate(contexts)]
    swapped = [pair(f"i{k}", f"{c} {up} today", f"{c} {down} today")
               for k, c in enumerate(reversed(contexts))]
    train, val, test = items[:4], items[4:5], items[5:]
    control = control_task(DIFFERING_TYPES, train, val, test)
    # the shared context never moves a label: every good sentence gets one label, every
    # bad one the other, and swapping the contexts between items changes nothing
    assert control.train.tolist() == [1, 0] * 4
    assert control.test.tolist() == [1, 0] and control.pairs_split == 1.0
    again = control_task(DIFFERING_TYPES, swapped[:4], swapped[4:5], swapped[5:])
    assert again.train.tolist() == control.train.tolist()
    assert again.test.tolist() == control.test.tolist()
    # the sentence vote depends on the context: the same swap moves its labels, and
    # most pairs get one label for both sentences
    old = control_task(SENTENCE_VOTE, train, val, items)
    old_swapped = control_task(SENTENCE_VOTE, swapped[:4], swapped[4:5], swapped)
    assert old.test.tolist() != old_swapped.test.tolist()


@pytest.mark.parametrize("task", ["blimp_determiner_noun_agreement_1",
                                  "syntaxgym_number_prep", "verb_grammar"])
def test_registered_tasks_label_prompts_by_their_differing_types_alone(task: str) -> None:
    data = TaskCatalog.default().load(task)
    assert control_kind(data.format) == DIFFERING_TYPES
    train, val, _ = train_val_items(data)
    control = control_task(DIFFERING_TYPES, train, val, data.test)
    label_of: dict[frozenset[str], int] = {}
    for items, labels in ((train, control.train), (val, control.val),
                          (data.test, control.test)):
        for types, label in zip(control_types(items, DIFFERING_TYPES), labels, strict=True):
            assert label_of.setdefault(types, int(label)) == int(label), types
    assert len(label_of) > 20 and not control.degenerate
    assert abs(float(control.train.mean()) - float(np.mean(
        [p.label for i in train for p in i.prompts if p.label is not None]))) < 0.1


def test_npi_orc_pairs_are_split_by_the_new_control_and_it_is_degenerate() -> None:
    data = TaskCatalog.default().load("syntaxgym_npi_orc_any")
    train, val, _ = train_val_items(data)
    old = control_task(SENTENCE_VOTE, train, val, data.test)
    new = control_task(DIFFERING_TYPES, train, val, data.test)
    # the sentence vote gave both sentences of 52 of the 56 test pairs one label
    assert old.pairs_split == pytest.approx(1 / 14)
    assert new.pairs_split == pytest.approx(0.5)
    # every pair differs in "no" against "the": two word types, a lookup
    assert new.n_types == 2 < MIN_CONTROL_TYPES
    assert any(r.startswith("2 word types") for r in new.degenerate)
    summary = summarise_control("syntaxgym_npi_orc_any", TaskCatalog.default())
    assert summary.degenerate and summary.kind == DIFFERING_TYPES


def test_a_degenerate_control_reports_no_selectivity() -> None:
    data = TaskCatalog.default().load("syntaxgym_npi_orc_any")
    train, val, _ = train_val_items(data)
    rng = np.random.default_rng(0)

    def acts(items: list[Item]) -> np.ndarray:
        labels = [p.label for i in items for p in i.prompts if p.label is not None]
        return rng.normal(size=(len(labels), 6)) + np.outer(labels, np.ones(6))

    out = selectivity(ControlData(train, acts(train), val, acts(val), data.test,
                                  acts(data.test), kind=DIFFERING_TYPES),
                      probe_type="linear", hidden=8, seed=0, n_resamples=50,
                      parts=("npi",))
    assert out.degenerate and out.control == DIFFERING_TYPES and out.control_types == 2
    assert out.selectivity.value is None and out.control_accuracy.value is None
    assert out.accuracy.value is not None and out.accuracy.value > 0.7
    assert out.degenerate_reason and "2 word types" in out.degenerate_reason
    assert "no control accuracy or selectivity" in out.note
    assert out.pairs_split == pytest.approx(0.5)


def test_pairs_split_counts_good_bad_pairs_within_items() -> None:
    items = [Item(id="x", prompts=(Prompt("a", label=1), Prompt("b", label=1),
                                   Prompt("c", label=0), Prompt("d", label=None))),
             pair("y", "e", "f")]
    # item x: good labels (1, 0) against bad (0): one pair in two split; item y: split
    assert pairs_split(items, np.array([1, 0, 0, 1, 0])) == pytest.approx(2 / 3)
    assert pairs_split([Item(id="z", prompts=(Prompt("a", label=1),))],
                       np.array([1])) is None


def test_the_control_table_of_the_registered_minimal_pair_tasks() -> None:
    rows = {r.task: r for r in minimal_pair_controls()}
    catalog = TaskCatalog.default()
    assert set(rows) == {t for t in catalog.ids
                         if control_kind(catalog.load(t).format) == DIFFERING_TYPES}
    for degenerate in ("syntaxgym_npi_orc_any", "syntaxgym_npi_src_ever",
                       "blimp_only_npi_licensor_present", "syntaxgym_center_embed"):
        assert rows[degenerate].degenerate, degenerate
    for fine in ("blimp_determiner_noun_agreement_1", "verb_grammar",
                 "syntaxgym_number_prep"):
        assert not rows[fine].degenerate, fine
        split, before = rows[fine].pairs_split, rows[fine].sentence_vote_split
        assert split is not None and before is not None and split > before
    table = controls_markdown(list(rows.values()))
    assert table.count("\n") == 2 + len(rows) and "`syntaxgym_npi_orc_any` | 50% | 9% |" \
        in table


# --- re-trained numbers across thread counts and float rounding ---------------------

RUN = r"""
import json, sys
import numpy as np
from probebench.evaluation import protocol
from probebench.evaluation.protocol import train_val_items
from probebench.evaluation.selectivity import ControlData, selectivity, words, _hash
from probebench.tasks.catalog import TaskCatalog

probe_type, rel, threads = sys.argv[1], float(sys.argv[2]), sys.argv[3]
if threads != "fit":  # the environment's BLAS threads, not the protocol's one thread
    protocol.FIT_THREADS = None
data = TaskCatalog.default().load("blimp_determiner_noun_agreement_1")
train, val, _ = train_val_items(data)
dim = 32

def vector(key):
    return np.random.default_rng(int.from_bytes(_hash(key)[:8], "big")).normal(size=dim)

def acts(items):
    # a bag of word vectors (the control's lexical signal), a label direction (the
    # task's) and per-prompt noise: float32, as a model's activations are
    rows = []
    for item in items:
        for p in item.prompts:
            if p.label is None:
                continue
            bag = np.mean([vector(w) for w in words(p.text)], axis=0)
            rows.append(bag + 0.4 * p.label * vector("label") + 0.3 * vector(p.text))
    x = np.asarray(rows, dtype=np.float32)
    if rel:  # another machine: every activation moved by float rounding
        noise = np.random.default_rng(7).normal(size=x.shape)
        x = (x * (1 + rel * noise)).astype(np.float32)
    return x

out = selectivity(ControlData(train, acts(train), val, acts(val), data.test,
                              acts(data.test), kind="differing-types"),
                  probe_type=probe_type, hidden=16, seed=0, n_resamples=100,
                  parts=("repro",))
print(json.dumps(out.model_dump(mode="json")))
"""


def run_selectivity(probe_type: str, threads: int | None, rel: float = 0.0
                    ) -> dict[str, object]:
    """The protocol in a fresh process: on ``threads`` BLAS and OpenMP threads (None:
    the protocol's own ``FIT_THREADS``), activations moved by relative ``rel``."""
    n = "2" if threads is None else str(threads)
    env = {**os.environ, "OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n,
           "MKL_NUM_THREADS": n}
    done = subprocess.run([sys.executable, "-c", RUN, probe_type, str(rel),
                           "fit" if threads is None else n], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("probe_type", ["linear", "mlp"])
def test_selectivity_is_the_same_under_other_thread_counts(probe_type: str) -> None:
    one = run_selectivity(probe_type, 1)
    two = run_selectivity(probe_type, 2)
    assert one["control"] == "differing-types" and not one["degenerate"]
    assert one["selectivity"]["value"] is not None  # type: ignore[index]
    # the contract: identical across thread counts, and the protocol's own one thread
    assert one == two == run_selectivity(probe_type, None)


def test_linear_selectivity_holds_under_another_machines_rounding() -> None:
    base = run_selectivity("linear", None)
    moved = run_selectivity("linear", None, rel=1e-6)
    # the linear probe's optimum is unique: float rounding moves no decision
    assert differences({"selectivity": base}, {"selectivity": moved},
                       retrained_tolerance=0.0) == []


def test_mlp_selectivity_holds_within_the_retrained_tolerance() -> None:
    base = run_selectivity("mlp", None)
    moved = run_selectivity("mlp", None, rel=1e-6)
    assert differences({"selectivity": base}, {"selectivity": moved}) == []
    assert RETRAINED_TOLERANCE <= 0.1


BUSY = "while True:\n    pass\n"


def test_the_retrained_control_is_identical_under_other_thread_limits_and_load(
        smollm: Any) -> None:
    """Real activations (SmolLM2-135M, layer 8) of a slice of a registered task: the MLP
    control fitted twice, the second time with other torch and BLAS thread limits set by
    the caller and two busy loops competing for the cores, gives the same numbers, bit
    for bit (the fits and their predictions run on ``FIT_THREADS`` in float64 from the
    seed). A control accuracy that moved by one prompt between two evaluations of the
    same activations would fail here."""
    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    from probebench.evaluation.protocol import labelled_prompts
    from probebench.models.activations import run_extraction
    from probebench.sites import Site

    data = TaskCatalog.default().load("blimp_determiner_noun_agreement_1")
    train, val, _ = train_val_items(data)
    train, val, test = train[:60], val[:20], list(data.test)[:40]
    site = Site(8, "last_token")

    def acts(items: list[Item]) -> np.ndarray:
        return run_extraction(smollm, labelled_prompts(items), [site], progress=False)[site]

    control = ControlData(train, acts(train), val, acts(val), test, acts(test),
                          kind=DIFFERING_TYPES)

    def fit() -> dict[str, object]:
        out = selectivity(control, probe_type="mlp", hidden=16, seed=0, n_resamples=100,
                          parts=("determinism",))
        dumped: dict[str, object] = out.model_dump(mode="json")
        return dumped

    first = fit()
    assert not first["degenerate"]
    assert first["control_accuracy"]["value"] is not None  # type: ignore[index]
    threads = torch.get_num_threads()
    blas = max((p["num_threads"] for p in threadpool_info()), default=1)
    burners = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
    try:
        torch.set_num_threads(2 if threads == 1 else 1)
        with threadpool_limits(limits=2 if blas == 1 else 1):
            second = fit()
    finally:
        torch.set_num_threads(threads)
        for b in burners:
            b.kill()
            b.wait()
    assert second == first
