"""Single labelled statements (truth, honesty and refusal probes): one prompt per item.

Each item is one statement with a binary label and its slice tags; nothing in an item is
compared with anything else (no minimal pairs). The probe reads the statement itself:
``last_token`` its last token, ``token_avg`` the mean over its tokens.

Files, by suffix:

* **CSV** (``.csv``): a header row, then one statement a row. The task's ``options`` name
  the columns: ``text_column`` (default ``text``), ``label_column`` (default ``label``) and
  optionally ``id_column``; without one an item's id is ``<role>-<line>``, the file's role
  in ``files`` and the line its row starts on.
* **JSONL** (``.jsonl``): one object a line with ``id`` (a string), ``text`` and
  ``label``; or, in a task with ``options.chat_template: true``, ``id``, ``messages``
  and ``label``, where ``messages`` is a chat exchange: a list of ``{"role", "content"}``
  objects (an optional ``system`` turn, then ``user`` and ``assistant`` turns
  alternating from a user turn). Each model reads an exchange through its own
  tokenizer's chat template (``probebench.models.chat``); the test-set hash covers the
  turns, not any rendering. The probe reads the last assistant turn (``end_answer``:
  its last token) or, when the exchange ends on a user turn, the post-instruction
  tokens (``last_token``: the end of the template's assistant header). Without a
  template (an encoder) a model reads the plain rendering (``User: ...`` paragraphs).

Labels are ``1`` and ``0`` (a CSV cell as written, a JSON integer), or, with
``options.label_map``, the words a file uses (``{"true": 1, "false": 0}``; a label is
matched as written, a JSON number or boolean in its JSON spelling). Every other column
or field is a slice tag of the item (a string; a JSON number or boolean in its JSON
spelling); each slice the task declares in ``slices`` must be present on every item,
and with ``options.strict: true`` a column or field that is neither read nor declared is
an error.

Splits: the task's files ``data`` (the test items) with ``train`` and optionally ``val``,
or ``data`` alone with ``split: method: hash``, where a statement is in test when the
salted hash of its text (case-folded, whitespace collapsed) falls below
``test_fraction`` (``probebench.tasks.hygiene.in_test_split``). Hashing the text rather
than the id keeps a statement that a file repeats in one split, so the same text is
never in train and test; the training protocol draws validation from train as for any
hashed task. Separate files may not share a statement either (the error names both
lines). Errors name the file, the line, the column or field, what was expected and what
was found.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from probebench.errors import InputError
from probebench.prompts import Prompt, chat_prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families.base import (
    FreshGenerator,
    TaskData,
    TaskFormat,
    threshold_accuracy,
)
from probebench.tasks.hygiene import in_test_split
from probebench.tasks.jsonl import jsonl_objects
from probebench.tasks.spec import TaskSpec

#: the task options the format reads
OPTIONS = ("text_column", "label_column", "id_column", "label_map", "strict", "chat_template")
#: the file roles: ``data`` always (all items under a hashed split, else the test items)
ROLES = ("data", "train", "val")
#: the fields a JSONL line may hold besides its slices
JSONL_FIELDS = ("id", "text", "label")
#: ... in a chat task (``options.chat_template: true``)
CHAT_FIELDS = ("id", "messages", "label")
SUFFIXES = (".csv", ".jsonl")


def label_spelling(value: Any) -> str | None:
    """A label or slice value as text: a string as written, a JSON number or boolean in
    its JSON spelling (``true``, ``1``); None for anything else (null, a list, an object).

    >>> label_spelling(True), label_spelling(1), label_spelling("yes"), label_spelling(None)
    ('true', '1', 'yes', None)
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def folded(text: str) -> str:
    """What two statements must share to be the same one: case-folded, whitespace
    collapsed."""
    return " ".join(text.casefold().split())


@dataclass(frozen=True)
class StatementOptions:
    """A statements task's ``options``, checked, and the slices it declares."""

    text_column: str = "text"
    label_column: str = "label"
    id_column: str | None = None
    #: label as written -> 1 or 0; None: the labels are written 1 and 0
    label_map: Mapping[str, int] | None = None
    strict: bool = False
    #: items are chat exchanges (JSONL ``messages``) read through the model's template
    chat_template: bool = False
    slices: tuple[str, ...] = ()
    #: the options a task set explicitly (JSONL files refuse the column names)
    given: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, spec: TaskSpec) -> StatementOptions:
        opts = spec.options
        where = f"task {spec.id}"
        unknown = sorted(set(opts) - set(OPTIONS))
        if unknown:
            raise InputError(f"{where}: unknown option(s) {', '.join(unknown)} for format "
                             f"statements (known: {', '.join(OPTIONS)})")
        columns: dict[str, Any] = {}
        for name in ("text_column", "label_column", "id_column"):
            value = opts.get(name)
            if value is not None and (not isinstance(value, str) or not value):
                raise InputError(f"{where}: options.{name} must be a column name, found "
                                 f"{value!r}")
            if value is not None:
                columns[name] = value
        for name in ("strict", "chat_template"):
            if name in opts and not isinstance(opts[name], bool):
                raise InputError(f"{where}: options.{name} must be true or false, found "
                                 f"{opts[name]!r}")
        label_map = None
        if "label_map" in opts:
            label_map = cls._label_map(opts["label_map"], where)
        if set(spec.labels) != {0, 1}:
            raise InputError(f"{where}: labels must say what 1 and 0 mean, found "
                             f"{sorted(spec.labels)}")
        made = cls(**columns, label_map=label_map, strict=bool(opts.get("strict", False)),
                   chat_template=bool(opts.get("chat_template", False)),
                   slices=tuple(spec.slices), given=frozenset(opts))
        read = [c for c in (made.text_column, made.label_column, made.id_column) if c]
        if len(set(read)) != len(read):
            raise InputError(f"{where}: options.text_column, label_column and id_column "
                             f"must name different columns, found {', '.join(read)}")
        clash = sorted(set(read) & set(made.slices))
        if clash:
            raise InputError(f"{where}: slices {', '.join(clash)} name a column the task "
                             "reads as its text, label or id")
        return made

    @staticmethod
    def _label_map(raw: Any, where: str) -> dict[str, int]:
        if not isinstance(raw, dict) or not raw:
            raise InputError(f"{where}: options.label_map must map the labels the file "
                             f"writes to 1 or 0, found {raw!r}")
        out: dict[str, int] = {}
        for key, value in raw.items():
            spelled = label_spelling(key)
            if spelled is None or type(value) is not int or value not in (0, 1):
                raise InputError(f"{where}: options.label_map maps a label to 1 or 0, "
                                 f"found {key!r}: {value!r}")
            out[spelled] = value
        if set(out.values()) != {0, 1}:
            raise InputError(f"{where}: options.label_map must give both 1 and 0, found "
                             f"only {sorted(set(out.values()))}")
        return out

    def allowed(self) -> str:
        """The labels a file may write, for errors."""
        if self.label_map is None:
            return "1 or 0"
        return ", ".join(repr(k) for k in self.label_map) + " (options.label_map)"

    def label(self, value: Any, where: str, what: str, *, json_value: bool) -> int:
        """The binary label of a label as written; the error says what was expected."""
        if self.label_map is not None:
            spelled = label_spelling(value)
            if spelled is not None and spelled in self.label_map:
                return self.label_map[spelled]
        elif json_value and type(value) is int and value in (0, 1):
            return value
        elif not json_value and value in ("0", "1"):
            return int(value)
        raise InputError(f"{where}: {what}: label {value!r} is not one of the declared "
                         f"labels {self.allowed()}")


@dataclass(frozen=True)
class Statement:
    """One statement as read, with the place it was read from (``file:line``)."""

    item: Item
    where: str


def read_statements(path: Path, options: StatementOptions, role: str = "data"
                    ) -> list[Statement]:
    """The statements of one file, by its suffix (``.csv`` or ``.jsonl``), in file
    order; ``role`` makes the ids of a CSV file without an id column."""
    if path.suffix not in SUFFIXES:
        raise InputError(f"{path}: a statements file is .csv (a header row) or .jsonl (one "
                         f"object a line), found {path.suffix or 'no suffix'!r}")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.suffix == ".csv" and options.chat_template:
        raise InputError(f"{path}: a chat task (options.chat_template: true) reads JSONL "
                         "files whose lines hold 'messages' (a chat exchange); a CSV file "
                         "holds plain statements")
    rows = (_csv_statements(path, options, role) if path.suffix == ".csv"
            else _jsonl_statements(path, options))
    out: list[Statement] = []
    seen: dict[str, str] = {}
    for row in rows:
        first = seen.setdefault(row.item.id, row.where)
        if first != row.where:
            raise InputError(f"{row.where}: id {row.item.id!r} already used on "
                             f"{_line_of(first, path)}")
        out.append(row)
    if not out:
        raise InputError(f"{path}: no statements")
    return out


def _line_of(where: str, path: Path) -> str:
    """``line N`` for a place in ``path`` itself, else the place."""
    prefix = f"{path}:"
    return f"line {where[len(prefix):]}" if where.startswith(prefix) else where


def _statement(item_id: str, text: str, label: int, slices: dict[str, str],
               where: str) -> Statement:
    prompt = Prompt(text, id=item_id, label=label, slices=slices)
    return Statement(Item(id=item_id, prompts=(prompt,), slices=slices), where)


def _exchange(item_id: str, raw: Any, label: int, slices: dict[str, str],
              where: str) -> Statement:
    """A chat exchange from a JSONL line's ``messages`` field."""
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{where}: field 'messages' must be a non-empty list of "
                         f"{{\"role\", \"content\"}} objects, found {raw!r}")
    turns: list[tuple[str, str]] = []
    for k, turn in enumerate(raw, start=1):
        if not isinstance(turn, dict) or set(turn) != {"role", "content"}:
            found = sorted(turn) if isinstance(turn, dict) else type(turn).__name__
            raise InputError(f"{where}: field 'messages', turn {k}: expected an object with "
                             f"exactly 'role' and 'content', found {found}")
        if not isinstance(turn["role"], str) or not isinstance(turn["content"], str):
            raise InputError(f"{where}: field 'messages', turn {k}: 'role' and 'content' "
                             "must be strings")
        turns.append((turn["role"], turn["content"]))
    prompt = chat_prompt(turns, id=item_id, label=label, slices=slices,
                         where=f"{where}: field 'messages'")
    return Statement(Item(id=item_id, prompts=(prompt,), slices=slices), where)


def _csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(the line a record starts on, its fields) for each record, header included;
    blank lines skipped."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, strict=True)
        start = 1
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise InputError(f"{path}:{start}: not valid CSV ({exc})") from None
            if fields:
                yield start, fields
            start = reader.line_num + 1


def _refuse_unknown(options: StatementOptions, names: list[str], where: str, kind: str,
                    known: str) -> None:
    """Under ``options.strict``, refuse a column (CSV) or field (JSONL) that is neither one
    the format reads (``known``) nor a declared slice."""
    unknown = [n for n in names if n not in options.slices]
    if options.strict and unknown:
        raise InputError(f"{where}: unknown {kind}(s) {', '.join(unknown)} "
                         f"(options.strict: every {kind} is {known} or a declared slice: "
                         f"{', '.join(options.slices) or 'none'})")


def _csv_statements(path: Path, options: StatementOptions, role: str) -> Iterator[Statement]:
    rows = _csv_rows(path)
    header_row = next(rows, None)
    if header_row is None:
        raise InputError(f"{path}: empty file; expected a header row naming the columns")
    header = header_row[1]
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise InputError(f"{path}:1: the header names column(s) {', '.join(repeated)} twice")
    wanted = {"text_column": options.text_column, "label_column": options.label_column}
    if options.id_column is not None:
        wanted["id_column"] = options.id_column
    for option, column in wanted.items():
        if column not in header:
            raise InputError(f"{path}:1: no column {column!r} (options.{option}) in the "
                             f"header; it has {', '.join(header)}")
    for name in options.slices:
        if name not in header:
            raise InputError(f"{path}:1: no column {name!r} (a slice the task declares) in "
                             f"the header; it has {', '.join(header)}")
    read = set(wanted.values())
    others = [c for c in header if c not in read]
    _refuse_unknown(options, others, f"{path}:1", "column", "the text, the label, the id")
    index = {c: header.index(c) for c in header}
    for line, fields in rows:
        where = f"{path}:{line}"
        if len(fields) != len(header):
            raise InputError(f"{where}: {len(fields)} field(s), but the header names "
                             f"{len(header)} columns")
        text = fields[index[options.text_column]]
        if not text.strip():
            raise InputError(f"{where}: column {options.text_column!r} is empty; every item "
                             "needs a statement")
        raw = fields[index[options.label_column]]
        if not raw.strip():
            raise InputError(f"{where}: column {options.label_column!r} is empty; every "
                             f"statement needs a label ({options.allowed()})")
        label = options.label(raw, where, f"column {options.label_column!r}",
                              json_value=False)
        if options.id_column is None:
            item_id = f"{role}-{line}"
        else:
            item_id = fields[index[options.id_column]]
            if not item_id.strip():
                raise InputError(f"{where}: column {options.id_column!r} is empty; every "
                                 "statement needs an id")
        slices = {c: fields[index[c]] for c in others}
        yield _statement(item_id, text, label, slices, where)


def _jsonl_statements(path: Path, options: StatementOptions) -> Iterator[Statement]:
    fields = CHAT_FIELDS if options.chat_template else JSONL_FIELDS
    columns = sorted(options.given & {"text_column", "label_column", "id_column"})
    if columns:
        raise InputError(f"{path}: options {', '.join(columns)} name CSV columns; a JSONL "
                         f"file's fields are {', '.join(fields)}")
    for number, obj in jsonl_objects(path):
        where = f"{path}:{number}"
        if "messages" in obj and not options.chat_template:
            raise InputError(f"{where}: field 'messages' (a chat exchange) needs the task "
                             "option chat_template: true (each model then reads it through "
                             "its own chat template); a plain statement is a 'text' field")
        if "text" in obj and options.chat_template:
            raise InputError(f"{where}: field 'text': a chat task (options.chat_template: "
                             "true) reads 'messages', a list of {\"role\", \"content\"} "
                             "turns, not 'text'")
        for name in fields:
            if obj.get(name) is None:
                raise InputError(f"{where}: field {name!r} is missing")
        item_id, text = obj["id"], obj.get("text")
        if not isinstance(item_id, str) or not item_id.strip():
            raise InputError(f"{where}: field 'id' must be a non-empty string, found "
                             f"{item_id!r}")
        if not options.chat_template:
            if not isinstance(text, str):
                raise InputError(f"{where}: field 'text' must be a string, found "
                                 f"{type(text).__name__} {text!r}")
            if not text.strip():
                raise InputError(f"{where}: field 'text' is empty; every item needs a "
                                 "statement")
        label = options.label(obj["label"], where, "field 'label'", json_value=True)
        missing = [s for s in options.slices if s not in obj]
        if missing:
            raise InputError(f"{where}: field {missing[0]!r} (a slice the task declares) is "
                             "missing")
        others = [k for k in obj if k not in fields]
        _refuse_unknown(options, others, where, "field", ", ".join(fields))
        slices = {}
        for key in others:
            value = label_spelling(obj[key])
            if value is None:
                raise InputError(f"{where}: field {key!r} (a slice) must be a string, number "
                                 f"or boolean, found {type(obj[key]).__name__} {obj[key]!r}")
            slices[key] = value
        if options.chat_template:
            yield _exchange(item_id, obj["messages"], label, slices, where)
        else:
            yield _statement(item_id, str(text), label, slices, where)


def split_statements(spec: TaskSpec, files: Mapping[str, Path],
                     options: StatementOptions) -> dict[str, list[Item]]:
    """The task's items per split (``test``, ``train`` and, from a file, ``val``)."""
    unknown = sorted(set(files) - set(ROLES))
    if unknown:
        raise InputError(f"task {spec.id}: file role(s) {', '.join(unknown)} are not read by "
                         f"format statements (roles: {', '.join(ROLES)})")
    read = {role: read_statements(path, options, role) for role, path in files.items()}
    if "train" in read:
        if spec.split is not None:
            raise InputError(f"task {spec.id}: give either a 'split' (method: hash) over "
                             "the data file or train (and val) files, not both")
        named = {"test": read["data"], "train": read["train"]}
        if "val" in read:
            named["val"] = read["val"]
        _disjoint(named)
    else:
        if "val" in read:
            raise InputError(f"task {spec.id}: a val file needs a train file (files.train)")
        if spec.split is None:
            raise InputError(f"task {spec.id}: format statements needs a 'split' (method: "
                             "hash) or train (and val) files beside the data file")
        named = {"test": [], "train": []}
        for row in read["data"]:
            test = in_test_split(spec.split.salt, folded(row.item.prompts[0].text),
                                 spec.split.test_fraction)
            named["test" if test else "train"].append(row)
    homes: dict[str, str] = {}
    for rows in named.values():
        for row in rows:
            first = homes.setdefault(row.item.id, row.where)
            if first != row.where:
                raise InputError(f"{row.where}: id {row.item.id!r} is also used on {first}")
    labels = {row.item.prompts[0].label for rows in named.values() for row in rows}
    if labels != {0, 1}:
        raise InputError(f"task {spec.id}: every statement is labelled {labels.pop()}; a "
                         "statements task needs both labels")
    if not named["test"]:
        raise InputError(f"task {spec.id}: no statement falls in the test split")
    return {split: [row.item for row in rows] for split, rows in named.items()}


def _disjoint(named: Mapping[str, list[Statement]]) -> None:
    """No statement (case and whitespace folded) in two splits; the error names both."""
    home: dict[str, tuple[str, str]] = {}
    for split, rows in named.items():
        for row in rows:
            first = home.setdefault(folded(row.item.prompts[0].text), (split, row.where))
            if first[0] != split:
                raise InputError(f"{row.where}: this statement is also in the {first[0]} "
                                 f"split ({first[1]}); train, val and test must not share "
                                 "statements")


class StatementsFormat(TaskFormat):
    """Single labelled statements: an item is right when P >= threshold agrees with its
    label."""

    name = "statements"
    roles = ("data",)
    test_roles = ("data",)
    accuracy_name = "accuracy"
    accuracy_definition = "P >= 0.5 agrees with the statement's label"
    display_name = "Statements"
    single_prompt_surprisal = True

    def default_labels(self, options: Mapping[str, Any]) -> dict[int, str]:
        return {1: "the statement is true", 0: "the statement is false"}

    def fresh_generators(self) -> tuple[FreshGenerator, ...]:
        """Fresh statements of the truth tasks (spare cities, number pairs, words)."""
        # imported here: the spare pools load when a holdout is sealed, not with every task
        from probebench.tasks.families.statements.truth import truth_fresh_generators
        return truth_fresh_generators()

    def score_item(self, item: Item, scores: np.ndarray,
                   threshold: float | None) -> float | None:
        return threshold_accuracy(item, scores, threshold)

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        return TaskData(spec, split_statements(spec, files, StatementOptions.of(spec)))

    def read_control(self, spec: TaskSpec, path: Path) -> list[Prompt]:
        """The control set: a statements file, every prompt labelled 0
        (``probebench.tasks.families.statements.control``)."""
        from probebench.tasks.families.statements.control import CONTROL_ROLE, control_prompts

        rows = read_statements(path, StatementOptions.of(spec), CONTROL_ROLE)
        return control_prompts(spec, [(row.where, row.item.prompts[0]) for row in rows])
