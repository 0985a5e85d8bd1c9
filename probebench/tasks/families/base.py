"""The one interface every task format implements.

A format is made of: the files it reads (``roles``, ``read``; ``test_roles`` hold the
test items), how one item is scored from its prompts' scores (``score_item``), what
that item accuracy is called and means (``accuracy_name``, ``accuracy_definition``),
whether its items compare prompts against each other (``minimal_pairs``: then the
model's own surprisal is a baseline), which slices the leaderboard draws
(``charted_slices``), how a holdout test set replaces the registered one
(``read_holdout``), what ``probebench tasks add`` fills in when not told
(``default_labels``, ``default_slices``), whether a task is multi-class
(``multiclass``), how ``probebench score-lm`` scores a model by itself on it
(``lm_scoring``), what pages call its family (``display_name``) and which of its tasks
have a generator of fresh holdout items (``fresh_generators``). Nothing elsewhere
branches on a format's name: adding a format is one new class and one
``register_format`` call.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.datapaths import data_file
from probebench.tasks.hygiene import hash_order, hashed_split
from probebench.tasks.spec import CarveSpec, HoldoutSpec, TaskSpec


@dataclass
class TaskData:
    """A loaded task: items per split (``train``, ``val``, ``test``)."""

    spec: TaskSpec
    splits: dict[str, list[Item]]

    @property
    def test(self) -> list[Item]:
        return self.splits.get("test", [])

    @property
    def format(self) -> TaskFormat:
        return get_format(self.spec.format)


@dataclass(frozen=True)
class SliceChart:
    """A slice the leaderboard draws as bars of per-value accuracy."""

    slice: str
    title: str
    #: values left out of the chart (e.g. "none" for items that have no category)
    skip_values: tuple[str, ...] = ()


@dataclass(frozen=True)
class LMScoring:
    """How ``probebench score-lm`` scores a language model by itself on a format's tasks,
    as the data set's authors score a model."""

    #: ``sentence_log_prob``: every prompt scored by its log P after the model's BOS (EOS
    #: when it has none), the prompts of an item compared by ``score_item`` with no
    #: threshold; ``model_item_scores``: the format's own protocol
    #: (``TaskFormat.model_item_scores``)
    protocol: Literal["sentence_log_prob", "model_item_scores"]
    #: one sentence for ``--help`` and results: when an item counts as correct
    definition: str
    #: whether score-lm scores the format's tasks when no task is named
    by_default: bool = False
    #: what results call the protocol (``protocol`` when empty)
    name: str = ""

    @property
    def result_name(self) -> str:
        """The protocol's name in score-lm's results."""
        return self.name or self.protocol


#: (spec, the task's data folder, a seeded generator, how many items, the id prefix) ->
#: the items; every item id starts with the prefix
Make = Callable[[TaskSpec, Path, np.random.Generator, int, str], list[Item]]


@dataclass(frozen=True)
class FreshGenerator:
    """How fresh items of one registered task are made: items that exist in no public
    release, written by this project following the task's own templates and rules
    (``probebench.tasks.fresh_items`` seeds it from the holdout key and checks the
    result against every packaged file)."""

    task_id: str
    #: the default number of items of a generation (sized so that a 10-point AUROC drop
    #: is detectable; see ``probebench.evaluation.power``)
    n_items: int
    #: one line on what the generator varies and which rules it keeps
    description: str
    make: Make


class TaskFormat(ABC):
    """Reads one kind of file into items and says how an item is scored."""

    #: the ``format`` value in tasks.yaml
    name: ClassVar[str]
    #: file roles a task of this format must declare in ``files``
    roles: ClassVar[tuple[str, ...]]
    #: the roles whose files hold test items (what review scans for personal data)
    test_roles: ClassVar[tuple[str, ...]]
    #: what the mean item correctness is called in results (e.g. ``pair_accuracy``)
    accuracy_name: ClassVar[str] = "accuracy"
    #: one sentence: when an item counts as correct
    accuracy_definition: ClassVar[str]
    #: items hold prompts that compete (a grammatical and an ungrammatical variant), so
    #: the model's own surprisal is a baseline for them
    minimal_pairs: ClassVar[bool] = False
    #: items are single prompts with a label (statements): the model's own surprisal of
    #: the prompt is a baseline for them too, scored against the label
    single_prompt_surprisal: ClassVar[bool] = False
    #: what the model's own baseline is, when ``model_item_scores`` gives it
    model_baseline_note: ClassVar[str] = ""
    #: the version of ``model_item_scores``'s protocol: part of the on-disk cache key of
    #: its numbers (``submit`` reuses them), so bump it whenever they change
    model_scores_version: ClassVar[int] = 1
    #: slices the leaderboard draws on an entry's page
    charted_slices: ClassVar[tuple[SliceChart, ...]] = ()
    #: the slice tags ``probebench tasks add`` registers when none are given
    default_slices: ClassVar[tuple[str, ...]] = ()
    #: how ``probebench score-lm`` scores a model by itself on this format's tasks; None
    #: when it does not
    lm_scoring: ClassVar[LMScoring | None] = None
    #: what pages call the family of this format's tasks; empty: the format's name
    display_name: ClassVar[str] = ""

    def fresh_generators(self) -> tuple[FreshGenerator, ...]:
        """The fresh-item generators of this format's registered tasks, one a task
        (``probebench holdout seal --fresh``); none by default."""
        return ()

    def load(self, spec: TaskSpec, root: Path) -> TaskData:
        missing = [r for r in self.roles if r not in spec.files]
        if missing:
            raise InputError(f"task {spec.id}: format {self.name} needs files: "
                             f"{', '.join(missing)}")
        data = self.read(spec, {role: data_file(root, rel) for role, rel in spec.files.items()})
        carved = {item.id for h in spec.holdouts if h.carve is not None
                  for item in carve(data, h.carve)}
        if carved:  # held out for re-evaluation: no probe may ever train on them
            data.splits["train"] = [i for i in data.splits.get("train", [])
                                    if i.id not in carved]
        return data

    @abstractmethod
    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        """Items per split, from the task's files (``role -> path``); errors name file
        and line."""

    def read_control(self, spec: TaskSpec, path: Path) -> list[Prompt]:
        """The prompts of the task's control set (``spec.control``, the file at ``path``):
        ordinary, unflagged prompts on which a probe's threshold at 1% false positives is
        set. A format that reads no control sets says so."""
        raise InputError(f"task {spec.id}: format {self.name} reads no control set "
                         "(a 'control' block needs a format that declares read_control)")

    def read_holdout(self, spec: TaskSpec, holdout: HoldoutSpec, root: Path) -> TaskData:
        """The holdout's test set: carved from the train split (``carve``), or by default
        the task read with the holdout's files in place of the registered ones."""
        if holdout.carve is not None:
            data = self.read(spec, {role: data_file(root, rel) for role, rel in spec.files.items()})
            return TaskData(spec, {"test": carve(data, holdout.carve)})
        replaced = spec.model_copy(update={"files": {**spec.files, **holdout.files}})
        return self.load(replaced, root)

    @abstractmethod
    def score_item(self, item: Item, scores: np.ndarray,
                   threshold: float | None) -> float | None:
        """Correctness of ``item`` in [0, 1] from its prompts' scores (higher = more
        likely label 1), or None when the item cannot be scored. ``threshold`` is the
        decision threshold for formats that classify single prompts (None when the
        scores are not probabilities, e.g. minus surprisal)."""

    def default_labels(self, options: Mapping[str, Any]) -> dict[int, str]:
        """What labels 1 and 0 mean when ``probebench tasks add`` is not told (from the
        task's ``options``); empty when they are read from the data (the classes of a
        multi-class task)."""
        return {1: "positive", 0: "negative"}

    def multiclass(self, spec: TaskSpec) -> bool:
        """Whether a task of this format is multi-class (known from its spec alone)."""
        return False

    def classes(self, data: TaskData) -> tuple[str, ...] | None:
        """The class labels of a multi-class task, sorted (a probe's outputs follow this
        order); None for a binary task (prompt labels 1, 0 or None): the default."""
        return None

    def prompt_class(self, prompt: Prompt) -> str | None:
        """A prompt's class in a multi-class task (None when it has none)."""
        return None

    def model_item_scores(self, lm: Any, items: Sequence[Item], *, progress: bool = False
                          ) -> list[float | None] | None:
        """The model's own correctness per item under the protocol the format's authors
        publish, when that is not "minus total surprisal of each prompt, every token
        scored after BOS" (the minimal-pair default, BLiMP's protocol): None here."""
        return None

    def item_scores(self, items: Sequence[Item], prompt_scores: np.ndarray,
                    item_of: np.ndarray, threshold: float | None = 0.5
                    ) -> list[float | None]:
        """Correctness (0..1 or None) of each item, from the scores of its prompts."""
        return [self.score_item(item, prompt_scores[item_of == index], threshold)
                for index, item in enumerate(items)]

    @staticmethod
    def split_by_hash(spec: TaskSpec, items: list[Item]) -> dict[str, list[Item]]:
        if spec.split is None:
            raise InputError(f"task {spec.id}: format needs a 'split' (method: hash)")
        train, test = hashed_split(items, spec.split.salt, spec.split.test_fraction)
        return {"train": train, "test": test}


def threshold_accuracy(item: Item, scores: np.ndarray, threshold: float | None
                       ) -> float | None:
    """``TaskFormat.score_item`` of a format that classifies single prompts: the share of
    the item's prompts whose score at ``threshold`` agrees with its label (None without a
    threshold or with an unlabelled prompt)."""
    labels = [p.label for p in item.prompts]
    if threshold is None or any(label is None for label in labels):
        return None
    return float(np.mean([(s >= threshold) == bool(label)
                          for s, label in zip(scores, labels, strict=True)]))


def carve(data: TaskData, spec: CarveSpec) -> list[Item]:
    """The train items a carved holdout takes: the ``fraction`` of them (rounded) first
    in the order of their salted id hash (an exact share, so a small suite is not left
    with no train items by chance), minus any whose prompt texts occur in another item
    of any split (so the holdout is disjoint from the test set and from what remains for
    training, text for text)."""
    train = data.splits.get("train", [])
    ranked = sorted(train, key=lambda i: hash_order(spec.salt, i.id))
    chosen = ranked[: round(spec.fraction * len(train))]
    ids = {i.id for i in chosen}
    elsewhere = {p.text for items in data.splits.values() for i in items if i.id not in ids
                 for p in i.prompts}
    return [i for i in chosen if not any(p.text in elsewhere for p in i.prompts)]


_FORMATS: dict[str, TaskFormat] = {}


def register_format(fmt: TaskFormat, *, replace: bool = False) -> TaskFormat:
    """Make ``fmt`` readable as ``format: <fmt.name>`` in tasks.yaml; returns it."""
    if not isinstance(fmt, TaskFormat):
        raise TypeError(f"expected a TaskFormat instance, found {type(fmt).__name__}")
    if fmt.name in _FORMATS and not replace and type(_FORMATS[fmt.name]) is not type(fmt):
        raise ValueError(f"task format {fmt.name!r} is already registered "
                         f"({type(_FORMATS[fmt.name]).__name__}); pass replace=True")
    _FORMATS[fmt.name] = fmt
    return fmt


def unregister_format(name: str) -> None:
    _FORMATS.pop(name, None)


def get_format(name: str) -> TaskFormat:
    """The registered format called ``name``; the error lists the known ones."""
    try:
        return _FORMATS[name]
    except KeyError:
        raise InputError(f"task format {name!r} is not registered; known formats: "
                         f"{', '.join(sorted(_FORMATS))}") from None


def format_names() -> list[str]:
    """Registered format names, in registration order (built-ins first)."""
    return list(_FORMATS)


class _DisplayNames(Mapping[str, str]):
    """format name -> ``display_name``, for the registered formats that declare one, in
    registration order; read from the registry on each use, so a format registered
    later (a plugin's) is named too."""

    def __getitem__(self, name: str) -> str:
        fmt = _FORMATS.get(name)
        if fmt is None or not fmt.display_name:
            raise KeyError(name)
        return fmt.display_name

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, fmt in _FORMATS.items() if fmt.display_name])

    def __len__(self) -> int:
        return len(list(iter(self)))


#: benchmark families (a family is the format of its tasks) by their display names, in
#: the order pages show them; a format without a display name is a family named after
#: the format
FAMILY_NAMES: Mapping[str, str] = _DisplayNames()


def group_by_slice(items: Sequence[Item], scores: Sequence[float | None],
                   names: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    """Scored items' correctness grouped by each slice's values (unscored items left out)."""
    out: dict[str, dict[str, list[float]]] = {}
    for name in names:
        groups: dict[str, list[float]] = {}
        for item, score in zip(items, scores, strict=True):
            if score is not None:
                groups.setdefault(str(item.slices.get(name, "-")), []).append(score)
        if groups:
            out[name] = dict(sorted(groups.items()))
    return out
