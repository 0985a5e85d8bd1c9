"""``tasks.yaml``: the registered tasks, each pinned by file and test-set hashes.

A tasks file may open with ``format_defaults``: per format, the fields its tasks share
(labels, slices, license, source, split, options, description). A task of that format
that leaves a field out takes the default; a field the task gives replaces the default
whole (no merging inside a field). Ids, titles, versions, files and every hash stay with
each task. A file without ``format_defaults`` spells every task out, as
``probebench tasks add`` writes them. The sealed holdouts, which commands rewrite, are
listed apart, in ``holdouts.yaml`` beside the file (``probebench.tasks.holdout_listing``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from probebench.errors import InputError, field_problem
from probebench.tasks.datapaths import check_data_path
from probebench.yamlsafe import load_yaml, loads_yaml

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
#: longest task id accepted (the longest registered one has 47 characters)
MAX_TASK_ID = 64
TaskId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_\-]*$",
                                          max_length=MAX_TASK_ID)]
#: a data file's path relative to its tasks file (probebench.tasks.datapaths)
DataPath = Annotated[str, AfterValidator(check_data_path)]
FormatName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_\-]*$")]


class SplitSpec(BaseModel):
    """How items are split when the data has no split of its own."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["hash"] = Field(description="Hashed split (see probebench.tasks.hygiene).")
    test_fraction: float = Field(gt=0.0, lt=1.0, description="Share of items in test.")
    salt: str = Field(min_length=1, description="Salt of the item-id hash; never change it.")


class CarveSpec(BaseModel):
    """A holdout carved out of the task's train split by a salted hash (the third split
    of a hashed task): its items leave the train split for good."""

    model_config = ConfigDict(extra="forbid")

    salt: str = Field(min_length=1, description="Salt of the item-id hash; never change it.")
    fraction: float = Field(gt=0.0, lt=1.0, description="Share of the train items held "
                            "out (before dropping items whose text occurs elsewhere).")


class HoldoutSpec(BaseModel):
    """A test set kept for quarterly re-evaluation (``probebench reeval``): unseen by
    every probe, drawn from the test set's distribution, disjoint from it."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=2, description="Holdout version; the newest is used.")
    seed: int | None = Field(default=None, description="Generator seed, when generated.")
    files: dict[str, DataPath] = Field(default_factory=dict,
                                       description="Roles replaced for this holdout.")
    carve: CarveSpec | None = Field(default=None, description="Carved from the train split "
                                    "instead of read from files.")
    files_sha256: dict[DataPath, Sha256] = Field(default_factory=dict)
    test_sha256: Sha256

    @model_validator(mode="after")
    def _one_source(self) -> HoldoutSpec:
        if bool(self.files) == (self.carve is not None):
            raise ValueError("a holdout has either files or carve, not both or neither")
        return self


class ControlSpec(BaseModel):
    """A neutral control set of a task whose positive class is a flagged behaviour
    (dishonest, harmful, eval-like): ordinary prompts on which a probe's 99th percentile
    sets the threshold of the recall at 1% false positives (``recall_at_1pct_fpr``). It
    is pinned apart from the test set (``sha256``), so a control set added to a task
    leaves its ``test_sha256`` as it was."""

    model_config = ConfigDict(extra="forbid")

    file: DataPath = Field(description="The control prompts, in the task's own format, "
                           "relative to tasks.yaml.")
    sha256: Sha256 = Field(description="SHA-256 of the control prompts' canonical records "
                           "(as test_sha256 is of the test set).")
    description: str = Field(min_length=1, description="What the control prompts are and "
                             "where they come from (disjoint from the test set).")
    license: str | None = Field(default=None, description="The control data's license (an "
                                "SPDX id or expression), where it differs from the task's; "
                                "the task's effective license is then both, joined by AND "
                                "(probebench.tasks.catalog.effective_license).")


class ReadoutSpec(BaseModel):
    """How the model's own answer on an item is read (``kind: answer``): the item's text,
    then ``suffix``, then the log-probability of ``positive`` against ``negative`` as the
    next tokens (Marks & Tegmark's prompting baseline: "... This statement is" -> " True"
    vs " False"). A causal language model's own score of label 1; encoders have none."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["answer"] = Field(description="The readout's kind.")
    suffix: str = Field(min_length=1, description="Appended to the item's text.")
    positive: str = Field(min_length=1, description="The answer that means label 1.")
    negative: str = Field(min_length=1, description="The answer that means label 0.")


class OpeningsReadout(BaseModel):
    """The model's own behaviour at the first token of its reply (``kind: openings``):
    the log-odds of the summed probability of the first tokens of ``openings`` as the
    next token after the prompt (a chat exchange ending on a user turn is read with the
    generation prompt; Arditi et al.'s refusal score). Above 0 means label 1."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["openings"] = Field(description="The readout's kind.")
    openings: list[Annotated[str, StringConstraints(min_length=1)]] = Field(
        min_length=1, description="Replies that mean label 1 (e.g. \"I'm sorry\"); only "
        "each one's first token is read.")


class CandidatesReadout(BaseModel):
    """The model's own choice at a blank (``kind: candidates``), for items whose prompts
    differ only in ``span`` (one with label 1, the expected candidate): ``log P(expected)
    - mean log P(other)`` of each candidate's text as the continuation of the text before
    the span. Steering touches only the tokens before the blank. Above 0 means the model
    prefers the expected candidate."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["candidates"] = Field(description="The readout's kind.")
    span: Literal["answer"] = Field(default="answer", description="The prompt span that "
                                    "holds each candidate.")


#: a readout of the model's own behaviour that the causal test measures
#: (``probebench.causal``); a task without one uses its ``readout``
SteeringReadout = Annotated[ReadoutSpec | OpeningsReadout | CandidatesReadout,
                            Field(discriminator="kind")]


class TaskSpec(BaseModel):
    """One registered task."""

    model_config = ConfigDict(extra="forbid")

    id: TaskId = Field(description="Unique task id, used in meta.yaml and results.")
    title: str = Field(min_length=1)
    format: FormatName = Field(description="A registered task format (verbs, syntaxgym, "
                               "blimp, senteval, statements, or one added with "
                               "register_format).")
    version: int = Field(ge=1, description="Bumped whenever the test set changes.")
    description: str = ""
    files: dict[str, DataPath] = Field(description="Role (data, suite, test, train, ...) -> "
                                       "path relative to tasks.yaml.")
    files_sha256: dict[DataPath, Sha256] = Field(description="Path -> SHA-256 of the raw "
                                                 "file.")
    labels: dict[int, str] = Field(description="What label 1 and label 0 mean.")
    slices: list[str] = Field(default_factory=list, description="Slice tags of the prompts.")
    license: str
    source: str
    split: SplitSpec | None = None
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="Format-specific settings.")
    test_sha256: Sha256 = Field(description="SHA-256 of the canonical test set.")
    holdouts: list[HoldoutSpec] = Field(default_factory=list,
                                        description="Newer test sets for re-evaluation.")
    family: FormatName | None = Field(
        default=None, description="The family the task is ranked and compared in (a "
        "section of the leaderboard; its siblings form the generalisation matrix); "
        "default: its format.")
    control: ControlSpec | None = Field(
        default=None, description="A neutral control set for the recall at 1% false "
        "positives, where the positive class is the flagged behaviour; none by default.")

    readout: ReadoutSpec | None = Field(
        default=None, description="How the model's own answer is read (its prompting "
        "baseline); none by default.")
    steering_readout: SteeringReadout | None = Field(
        default=None, description="The readout of the model's own behaviour that the "
        "causal (steering) test measures, when it is not ``readout`` (kinds: answer, "
        "openings, candidates; probebench.causal); none by default.")

    @property
    def family_key(self) -> str:
        """The task's family: ``family`` when given, else its format."""
        return self.family or self.format


class FormatDefaults(BaseModel):
    """The fields the tasks of one format share in a tasks file (``format_defaults``):
    a task that leaves one out takes it from here."""

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    labels: dict[int, str] = Field(default_factory=dict,
                                   description="What label 1 and label 0 mean.")
    slices: list[str] = Field(default_factory=list, description="Slice tags of the prompts.")
    license: str = ""
    source: str = ""
    split: SplitSpec | None = None
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="Format-specific settings.")

    def given(self) -> dict[str, Any]:
        """The fields this block sets (what a task that leaves them out takes), as
        tasks.yaml spells them."""
        return self.model_dump(exclude_unset=True)


class TasksFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1]
    format_defaults: dict[FormatName, FormatDefaults] = Field(
        default_factory=dict, description="Format name -> the fields its tasks share; a "
        "task's own field replaces the default whole.")
    tasks: list[TaskSpec]

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        """Each task with its format's defaults under the fields it leaves out. Malformed
        shapes pass through unchanged, for the field validators to name."""
        if not isinstance(data, dict):
            return data
        defaults, tasks = data.get("format_defaults"), data.get("tasks")
        if not isinstance(defaults, dict) or not isinstance(tasks, list):
            return data
        filled = []
        for task in tasks:
            shared = (defaults.get(task.get("format")) if isinstance(task, dict)
                      and isinstance(task.get("format"), str) else None)
            filled.append({**shared, **task} if isinstance(shared, dict) else task)
        return {**data, "tasks": filled}

    def defaults_for(self, fmt: str) -> dict[str, Any]:
        """The fields a task of format ``fmt`` takes when it leaves them out."""
        shared = self.format_defaults.get(fmt)
        return shared.given() if shared is not None else {}


def read_tasks_file(path: Path) -> TasksFile:
    """Parse and validate a ``tasks.yaml`` (its paths are relative to its folder)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such tasks file (give --tasks-file, or --repo with a "
                         "tasks.yaml; without either the packaged tasks are used)")
    return _validated(load_yaml(path), path)


def parse_tasks_text(text: str, path: Path) -> TasksFile:
    """Parse and validate the text a ``tasks.yaml`` at ``path`` would hold, without
    writing it (``path`` names it in errors)."""
    return _validated(loads_yaml(text, str(path)), Path(path))


def _validated(data: Any, path: Path) -> TasksFile:
    try:
        parsed = TasksFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        hint = ""
        if where.startswith("format_defaults.") and first["type"] == "extra_forbidden":
            hint = (f"; format_defaults hold only what a format's tasks share "
                    f"({', '.join(FormatDefaults.model_fields)}): ids, titles, versions, "
                    "files and hashes stay with each task")
        elif where == "sealed_holdouts" and first["type"] == "extra_forbidden":
            hint = ("; sealed holdouts are listed in holdouts.yaml beside the tasks file, "
                    "which only `probebench holdout` writes: move the section's tasks "
                    "there, under the same key (docs/tasks.md, \"Sealed holdouts\")")
        elif "sha256" in where:
            hint = ("; a SHA-256 is 64 lowercase hex digits in quotes (YAML reads an "
                    "unquoted run of digits as a number). Let `probebench tasks add` "
                    "compute and write them, or copy them from `probebench tasks hash`")
        raise InputError(f"{path}: {field_problem(exc, '')}{hint}") from None
    seen: set[str] = set()
    for task in parsed.tasks:
        if task.id in seen:
            raise InputError(f"{path}: task id {task.id!r} is registered twice")
        seen.add(task.id)
    return parsed
