"""Fresh-item generators of ``verb_grammar``, ``verb_grammar_v2`` and ``eval_awareness``
(``probebench/tasks/families/verbs/fresh.py`` and ``families/senteval/fresh.py``): sized,
fresh, deterministic, and read exactly as registered items are."""

from __future__ import annotations

import hashlib
import json
import random
import re
import secrets
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from probebench.errors import InputError
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import FreshGenerator, get_format
from probebench.tasks.families.verbs import fresh as verbs
from probebench.tasks.fresh_items import fresh_seed, overlap, overlap_within, public_items
from probebench.tasks.hygiene import canonical_test_text
from probebench.tasks.verbs.ambiguity import second_answers
from probebench.tasks.verbs.checks import check_line
from probebench.tasks.verbs.leakage import Normaliser
from probebench.tasks.verbs.schema import Line, VerbItem, VerbTables, read_verb_file

GENERATORS: dict[str, FreshGenerator] = {
    g.task_id: g for fmt in ("verbs", "senteval") for g in get_format(fmt).fresh_generators()}
TASKS = sorted(GENERATORS)


@pytest.fixture(scope="module")
def catalog() -> TaskCatalog:
    return TaskCatalog.default()


@pytest.fixture(scope="module")
def public(catalog: TaskCatalog) -> list[Item]:
    return public_items(catalog)


def run(catalog: TaskCatalog, task: str, key: bytes, n_items: int | None = None
        ) -> list[Item]:
    gen = GENERATORS[task]
    rng = np.random.default_rng(fresh_seed(key, task, 1))
    return gen.make(catalog.spec(task), catalog.root_of(task), rng,
                    gen.n_items if n_items is None else n_items, "fresh-g1-")


@pytest.fixture(scope="module")
def fresh(catalog: TaskCatalog) -> dict[str, list[Item]]:
    """One throwaway generation of each task, under a key nobody keeps."""
    return {task: run(catalog, task, secrets.token_bytes(32)) for task in TASKS}


def labels(items: list[Item]) -> Counter[int | None]:
    return Counter(p.label for item in items for p in item.prompts)


def test_one_generator_per_task_each_registered(catalog: TaskCatalog) -> None:
    assert TASKS == ["eval_awareness", "verb_grammar", "verb_grammar_v2"]
    for task, gen in GENERATORS.items():
        assert task in catalog.ids
        assert gen.description.endswith(".") and "\n" not in gen.description
        assert gen.description.count(". ") == 0  # one sentence
    assert GENERATORS["verb_grammar"].n_items >= 100
    assert GENERATORS["verb_grammar_v2"].n_items == GENERATORS["verb_grammar"].n_items
    assert GENERATORS["eval_awareness"].n_items == 240


@pytest.mark.parametrize("task", TASKS)
def test_a_generation_is_sized_prefixed_and_fresh(
        task: str, fresh: dict[str, list[Item]], public: list[Item]) -> None:
    items = fresh[task]
    assert len(items) == GENERATORS[task].n_items
    assert all(i.id.startswith("fresh-g1-") for i in items)
    assert len({i.id for i in items}) == len(items)
    assert all(p.id is not None and p.id.startswith("fresh-g1-")
               for i in items for p in i.prompts)
    counts = labels(items)
    assert counts[1] >= 100 and counts[0] >= 100, counts  # a 10-point AUROC drop shows
    assert overlap(items, public) == []
    assert overlap_within(items) == []


@pytest.mark.parametrize("task", TASKS)
def test_the_same_seed_gives_the_same_items_another_key_others(
        task: str, catalog: TaskCatalog) -> None:
    key = secrets.token_bytes(32)
    first = run(catalog, task, key)
    random.seed(1)  # global random state plays no part
    np.random.seed(2)
    again = run(catalog, task, key)
    assert canonical_test_text(first) == canonical_test_text(again)
    other = run(catalog, task, secrets.token_bytes(32))
    assert canonical_test_text(other) != canonical_test_text(first)
    texts = {p.text for i in first for p in i.prompts}
    assert len(texts & {p.text for i in other for p in i.prompts}) < len(texts) / 2


#: sha256 of the items' records under a fixed key (generation 3): the generators draw the
#: same items from the same key after any refactoring; a change of word lists or rules
#: changes these on purpose
PINNED = {
    "eval_awareness":
        "d1067ed34b1d5d7ea18e8c3021a523fe9b4a28a64ebba71ef4584e0214fdaf32",
    "verb_grammar":
        "825ea89fb539927e29eceb67cf3c020bdc4baa01c9495538b77e6a25ff5b081b",
    "verb_grammar_v2":
        "edec6c482a75e2e1e59606addb72b208910ca4d9cd167bcec819081393854de8",
}


@pytest.mark.parametrize("task", TASKS)
def test_a_fixed_key_gives_the_pinned_items(task: str, catalog: TaskCatalog) -> None:
    gen = GENERATORS[task]
    rng = np.random.default_rng(fresh_seed(bytes(range(32)), task, 3))
    items = gen.make(catalog.spec(task), catalog.root_of(task), rng, gen.n_items, "fresh-g3-")
    records = json.dumps([i.record() for i in items], sort_keys=True).encode()
    assert hashlib.sha256(records).hexdigest() == PINNED[task]


@pytest.mark.parametrize("task", TASKS)
def test_a_fresh_item_has_the_structure_of_a_registered_one(
        task: str, fresh: dict[str, list[Item]], catalog: TaskCatalog) -> None:
    registered = catalog.load(task).test

    def shape(item: Item) -> tuple[object, ...]:
        first = item.prompts[0]
        return (tuple(sorted(item.slices)), tuple(sorted(item.data)), item.slices.get("form"),
                tuple(sorted(first.slices)), tuple(sorted(first.spans)), first.label is None)

    known = {shape(i) for i in registered}
    for item in fresh[task]:
        assert shape(item) in known, (item.id, shape(item))
        assert set(item.slices) == set(catalog.spec(task).slices)


def test_verb_items_render_like_registered_ones(fresh: dict[str, list[Item]],
                                               catalog: TaskCatalog) -> None:
    template = (catalog.root_of("verb_grammar") / "data/eval/probe_prompt.txt").read_text()
    head = template[:template.index("{sentence}")]
    for item in fresh["verb_grammar"]:
        prompts = item.prompts
        assert all(p.text.startswith(head) for p in prompts)
        assert [p.id for p in prompts] == (
            [f"{item.id}:{c}" for c in item.data["candidates"]]
            if item.data["form"] == "multiple_choice" else [item.id])
        for p in prompts:
            start, end = p.spans["answer"]
            assert p.text[start:end] in item.data["candidates"]
        got = [p.label for p in prompts]
        if item.data["label"] == "ambiguous":
            assert set(got) == {None}
        elif item.data["form"] == "multiple_choice":
            assert Counter(got) == Counter({1: 1, 0: len(got) - 1})
            assert 2 <= len(got) <= 4


def test_verb_mix_follows_the_registered_test_set(fresh: dict[str, list[Item]],
                                                  catalog: TaskCatalog) -> None:
    items, registered = fresh["verb_grammar"], catalog.load("verb_grammar").test

    def share(group: list[Item], name: str) -> dict[str, float]:
        counts = Counter(i.slices[name] for i in group)
        return {k: v / len(group) for k, v in counts.items()}

    for name in ("language", "category", "form", "regularity", "tense", "person"):
        mine, theirs = share(items, name), share(registered, name)
        assert set(mine) == set(theirs), name
        assert all(abs(mine[k] - theirs[k]) < 0.12 for k in theirs), (name, mine, theirs)
    codes = Counter(i.slices["reason_code"] for i in items if i.slices["category"] ==
                    "adversarial")
    assert len(codes) == 6 and all(3 <= n <= 5 for n in codes.values()), codes


def _lines(catalog: TaskCatalog, n_items: int, task: str = "verb_grammar"
           ) -> tuple[list[VerbItem], list[VerbItem]]:
    rng = np.random.default_rng(fresh_seed(secrets.token_bytes(32), task, 1))
    frames = verbs.V2 if task == "verb_grammar_v2" else verbs.V1
    return verbs.draw_lines(catalog.spec(task), catalog.root_of(task), rng, n_items,
                            "fresh-g1-", frames=frames)


def test_v2_lines_have_one_right_answer_where_v1_frames_give_two(catalog: TaskCatalog) -> None:
    """verb_grammar_v2's generator keeps only lines whose sentence takes no second
    candidate; verb_grammar's frames (kept for its pinned generations) do make some, e.g.
    "during the long weekend" with a present or future distractor, which is why v2 has
    its own time expressions."""
    tables = VerbTables.read(catalog.root_of("verb_grammar_v2")
                             / catalog.spec("verb_grammar_v2").files["verbs"])
    v2 = [i for part in _lines(catalog, 300, "verb_grammar_v2") for i in part]
    assert len(v2) == 300
    assert [i.id for i in v2 if second_answers(i, tables)] == []
    assert {i.label for i in v2} == {"correct", "incorrect", "ambiguous"}
    v1 = [i for part in _lines(catalog, 300) for i in part]
    flagged = [i for i in v1 if second_answers(i, tables)]
    assert len(flagged) >= 10, len(flagged)
    dropped = {m.rstrip(",").casefold() for key, markers in verbs.MARKERS_V2.items()
               for m in verbs.WORDS[key] if m not in markers}
    # each flagged v1 line has one of the time expressions v2 left out
    for item in flagged:
        assert any(m in item.prompt.casefold() for m in dropped), item.prompt


def test_every_verb_line_passes_the_per_line_rules_and_leaks_nothing(
        catalog: TaskCatalog) -> None:
    root, spec = catalog.root_of("verb_grammar"), catalog.spec("verb_grammar")
    files = {role: root / rel for role, rel in spec.files.items()}
    tables = VerbTables.read(files["verbs"])
    norm = Normaliser(tables, json.loads(files["lexicon"].read_text("utf-8")))
    seen = {k for role in ("train", "val") for ln in read_verb_file(files[role])
            for k in (norm.keys(ln.item).exact, norm.keys(ln.item).strict)}
    core, adversarial = _lines(catalog, GENERATORS["verb_grammar"].n_items)
    assert {i.category for i in core} == {"core"}
    assert {i.category for i in adversarial} == {"adversarial"}
    for item in core + adversarial:
        assert check_line(Line(Path("fresh"), 1, item), tables) == [], item
        keys = norm.keys(item)
        assert keys.exact not in seen and keys.strict not in seen, item.prompt
        assert (item.reason_code is not None) == (item.category == "adversarial")


@pytest.mark.parametrize("n_items", [126, 30])
def test_the_format_refuses_a_broken_line_on_the_same_path(
        catalog: TaskCatalog, n_items: int) -> None:
    """The read-back is the format's own check: a line breaking a rule is refused there
    (126 items: every rule of check-verbs; 30: the per-line path of a generated holdout)."""
    spec, root = catalog.spec("verb_grammar"), catalog.root_of("verb_grammar")
    core, adversarial = _lines(catalog, n_items)
    assert len(verbs.read_lines(spec, root, core, adversarial)) == n_items
    mc = next(k for k, i in enumerate(core) if i.multiple_choice)
    broken = core[mc].model_copy(update={"label": "incorrect"})  # MC lines are never so
    with pytest.raises(InputError, match="multiple-choice lines are 'correct'"):
        verbs.read_lines(spec, root, [*core[:mc], broken, *core[mc + 1:]], adversarial)
    train = read_verb_file(root / spec.files["train"])[0].item  # a train sentence again
    copy = train.model_copy(update={"id": "fresh-g1-copy", "source": "hand"})
    with pytest.raises(InputError, match="train"):
        verbs.read_lines(spec, root, [*core[:-1], copy], adversarial)


def test_eval_awareness_mirrors_the_registered_classes(
        fresh: dict[str, list[Item]], catalog: TaskCatalog) -> None:
    registered = catalog.load("eval_awareness").test
    mine = Counter(i.slices["class"] for i in fresh["eval_awareness"])
    theirs = Counter(i.slices["class"] for i in registered)
    assert set(mine) == set(theirs) == {"eval", "ordinary"}
    assert mine["eval"] >= 100 and mine["ordinary"] >= 100
    share = mine["eval"] / sum(mine.values())
    assert abs(share - theirs["eval"] / sum(theirs.values())) < 0.05


def _ending(text: str) -> str:
    return text[-1] if text[-1] in ":.?" else "other"


def test_no_trivial_cue_gives_the_class_away(fresh: dict[str, list[Item]],
                                            catalog: TaskCatalog) -> None:
    def by_class(items: list[Item]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {"eval": [], "ordinary": []}
        for item in items:
            out[item.slices["class"]].append(item.prompts[0].text)
        return out

    mine = by_class(fresh["eval_awareness"])
    raw = (catalog.root_of("eval_awareness") / "data/evalaware/prompts.tsv").read_text()
    theirs: dict[str, list[str]] = {"eval": [], "ordinary": []}
    for line in raw.splitlines():
        if line.strip():
            theirs[line.split("\t")[1]].append(line.split("\t")[-1])
    evals = mine["eval"]
    assert 0 < sum(t.endswith("Answer:") for t in evals) < 0.6 * len(evals)
    for label, texts in mine.items():
        for cue in (lambda t: t.split()[0], lambda t: t.split()[-1], _ending):
            top, n = Counter(map(cue, texts)).most_common(1)[0]
            limit = 0.75 if cue is _ending else 0.4
            assert n < limit * len(texts), (label, top, n)
        # the endings are distributed as in the registered file (total variation)
        a, b = Counter(map(_ending, texts)), Counter(map(_ending, theirs[label]))
        tv = sum(abs(a[k] / len(texts) - b[k] / len(theirs[label])) for k in a | b) / 2
        assert tv < 0.25, (label, a, b)
    # hard negatives: ordinary messages that talk about tests, quizzes, options, yes/no
    hard = re.compile(r"\b(exam|test|quiz|questions?|options?|yes or no)\b", re.I)
    assert sum(bool(hard.search(t)) for t in mine["ordinary"]) >= 0.1 * len(mine["ordinary"])
    for text in evals + mine["ordinary"]:  # the README's rules for every prompt
        assert 40 <= len(text) <= 300 and "@" not in text and "\t" not in text
        assert not re.search(r"\d{7}", text)


def test_eval_awareness_items_read_like_registered_ones(fresh: dict[str, list[Item]],
                                                        catalog: TaskCatalog) -> None:
    example = catalog.load("eval_awareness").test[0]
    for item in fresh["eval_awareness"]:
        assert len(item.prompts) == 1 and item.prompts[0].id == item.id
        assert dict(item.data) == dict(example.data)
        assert item.prompts[0].label == int(item.slices["class"] == "eval")
        assert re.fullmatch(r"fresh-g1-test-\d+", item.id)


@pytest.mark.parametrize("task", TASKS)
def test_any_size_is_honoured(task: str, catalog: TaskCatalog) -> None:
    for n in (1, 7):
        items = run(catalog, task, secrets.token_bytes(32), n)
        assert len(items) == n and overlap_within(items) == []


def test_quota_shares_by_largest_remainder() -> None:
    """The one share rule both generators use (verb mix, eval-awareness kinds)."""
    import doctest

    from probebench.tasks.families import drawing

    assert drawing.quota(240, [1, 1]) == [120, 120]
    assert drawing.quota(7, [1, 1, 1]) == [3, 2, 2]  # ties: the first takes the spare
    assert sum(drawing.quota(120, [20, 20, 20, 20, 20, 20, 15, 15, 30])) == 120
    assert doctest.testmod(drawing).failed == 0
