"""The verb-grammar task: ``data/eval`` probes (test) and generated train/val sentences.

Loading runs every check of ``probebench tasks check-verbs`` first and refuses the task
while any fails. The test split is the non-deprecated lines of ``probes.jsonl`` and
``adversarial.jsonl``; ``train`` and ``val`` are the generated files.

One option: ``ambiguity_check`` (``warn``, the default, or ``error``): whether a live line
with two right answers (``probebench.tasks.verbs.ambiguity``) only warns, as in the frozen
``verb_grammar``, or refuses the task, as in ``verb_grammar_v2`` and any new verbs task.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probebench.errors import InputError
from probebench.tasks.anatomy import Item
from probebench.tasks.datapaths import data_file
from probebench.tasks.families.base import (
    FreshGenerator,
    LMScoring,
    SliceChart,
    TaskData,
    TaskFormat,
)
from probebench.tasks.spec import HoldoutSpec, TaskSpec
from probebench.tasks.verbs.checks import (
    AMBIGUITY_MODES,
    VerbFiles,
    check_line,
    check_single_answer,
    check_verbs,
)
from probebench.tasks.verbs.render import check_template, render_item
from probebench.tasks.verbs.schema import VerbTables, read_verb_file

ROLES = ("test", "adversarial", "train", "val", "verbs", "lexicon", "template")
#: the format's options and their values
OPTIONS = {"ambiguity_check": AMBIGUITY_MODES}


def ambiguity_mode(spec: TaskSpec) -> str:
    """A verbs task's ``ambiguity_check``: ``error`` or ``warn`` (the default)."""
    unknown = sorted(set(spec.options) - set(OPTIONS))
    if unknown:
        raise InputError(f"task {spec.id}: unknown option(s) {', '.join(unknown)} of the "
                         f"verbs format; it has {', '.join(OPTIONS)}")
    mode = spec.options.get("ambiguity_check", "warn")
    if mode not in AMBIGUITY_MODES:
        raise InputError(f"task {spec.id}: options.ambiguity_check is {mode!r}; expected "
                         f"one of {', '.join(AMBIGUITY_MODES)}")
    return str(mode)


def verb_files(files: dict[str, Path]) -> VerbFiles:
    return VerbFiles(probes=files["test"], adversarial=files["adversarial"],
                     train=files["train"], val=files["val"], verbs=files["verbs"],
                     lexicon=files["lexicon"])


class VerbsFormat(TaskFormat):
    """The bilingual verb-grammar set.

    Multiple-choice items: the candidate with the highest score is the answer; credit
    1/k when the expected candidate ties with k-1 others at the top. Classification
    lines: P >= threshold means "correct" (None when the scores are not probabilities).
    Ambiguous items are not scored (not penalised).

    Holdouts are fresh generated sentences from a new, recorded seed: each line must
    follow the per-line rules of ``check-verbs``, and none may repeat a train or val
    sentence (the coverage minimums apply to the hand-written set only).
    """

    name = "verbs"
    roles = ROLES
    test_roles = ("test", "adversarial")
    accuracy_name = "mc_accuracy"
    accuracy_definition = ("multiple-choice accuracy (highest P(correct) wins; ties share "
                           "credit; ambiguous items not scored; classification lines "
                           "P >= 0.5)")
    minimal_pairs = True
    lm_scoring = LMScoring(
        "sentence_log_prob",
        "multiple choice: the candidate prompt with the highest log P (every token scored "
        "after BOS/EOS) wins, ties share the credit; single-sentence lines are not scored")
    charted_slices = (
        SliceChart("language", "accuracy by language"),
        SliceChart("regularity", "accuracy by regularity"),
        SliceChart("tense", "accuracy by tense"),
        SliceChart("person", "accuracy by person"),
        SliceChart("category", "accuracy by category"),
        SliceChart("reason_code", "adversarial accuracy by category", skip_values=("none",)),
    )
    display_name = "Verb grammar"

    def fresh_generators(self) -> tuple[FreshGenerator, ...]:
        """Fresh test lines of the verb-grammar task, following every per-line rule of
        ``check-verbs``."""
        # imported here: the word lists load when a holdout is sealed, not with every task
        from probebench.tasks.families.verbs.fresh import GENERATORS
        return GENERATORS

    def score_item(self, item: Item, scores: np.ndarray,
                   threshold: float | None) -> float | None:
        labels = [p.label for p in item.prompts]
        if all(lab is None for lab in labels):
            return None
        if item.data.get("form") == "multiple_choice":
            tied = np.flatnonzero(scores == scores.max())
            expected = labels.index(1)
            return 1.0 / len(tied) if expected in tied else 0.0
        if threshold is None:
            return None
        return float((scores[0] >= threshold) == bool(labels[0]))

    def read_holdout(self, spec: TaskSpec, holdout: HoldoutSpec, root: Path) -> TaskData:
        if "adversarial" in holdout.files:
            # a hand-written holdout replaces both test files and passes every rule of
            # the registered test set (check-verbs: coverage and leakage included)
            return super().read_holdout(spec, holdout, root)
        files = {role: data_file(root, rel) for role, rel in spec.files.items()}
        tables = VerbTables.read(files["verbs"])
        lines = read_verb_file(data_file(root, holdout.files["test"]))
        seen = {ln.item.prompt for role in ("train", "val")
                for ln in read_verb_file(files[role])}
        problems = [p for ln in lines for p in check_line(ln, tables)]
        if ambiguity_mode(spec) == "error":
            problems += [p for ln in lines for p in check_single_answer(ln, tables)]
        problems += [f"{ln.where}: repeats a train/val sentence" for ln in lines
                     if ln.item.prompt in seen]
        if problems:
            raise InputError(f"holdout v{holdout.version} of {spec.id} refused: "
                             + "; ".join(problems[:5]))
        template = files["template"].read_text("utf-8")
        test = [render_item(ln.item, template) for ln in lines if not ln.item.deprecated]
        return TaskData(spec, {"test": test})

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        report = check_verbs(verb_files(files), ambiguity=ambiguity_mode(spec))
        if not report.ok:
            shown = "; ".join(report.failures[:5])
            more = f" (and {len(report.failures) - 5} more)" if len(report.failures) > 5 else ""
            raise InputError(f"task {spec.id} refused: check-verbs failed: {shown}{more}")
        template = files["template"].read_text("utf-8")
        check_template(template, str(files["template"]))
        splits = {}
        for split, roles in (("test", ("test", "adversarial")), ("train", ("train",)),
                             ("val", ("val",))):
            lines = [ln for role in roles for ln in read_verb_file(files[role])]
            splits[split] = [render_item(ln.item, template) for ln in lines
                             if not ln.item.deprecated]
        return TaskData(spec, splits)
