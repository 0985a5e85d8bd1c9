"""What every truth-statement generator shares: a statement row, its CSV bytes, a task's
build recipe, and fresh rows as the items the statements format reads.

A shipped file is CSV with the columns ``id,statement,label`` and then the task's slices,
in that order, UTF-8 without a byte-order mark, ``\\n`` line ends, quoted only where the
``csv`` module must quote: the same rows always give the same bytes.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.spec import TaskSpec

#: the columns every shipped file opens with; the task's slices follow
COLUMNS = ("id", "statement", "label")
#: where the packaged files live, relative to the catalog's tasks.yaml
DATA_FOLDER = "data/truth"


@dataclass(frozen=True)
class Row:
    """One labelled statement: label 1 when the statement is true, 0 when false."""

    id: str
    statement: str
    label: int
    slices: Mapping[str, str]


def csv_bytes(rows: Sequence[Row], slices: Sequence[str]) -> bytes:
    """``rows`` as a statements CSV file (the header, then a row each, in order)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, *slices])
    for row in rows:
        if row.label not in (0, 1):
            raise ValueError(f"{row.id}: label {row.label!r} is neither 1 nor 0")
        missing = [s for s in slices if s not in row.slices]
        if missing or set(row.slices) - set(slices):
            raise ValueError(f"{row.id}: slices {sorted(row.slices)}, expected {list(slices)}")
        writer.writerow([row.id, row.statement, str(row.label), *(row.slices[s] for s in slices)])
    return out.getvalue().encode("utf-8")


@dataclass(frozen=True)
class TruthTask:
    """How one registered task's files are made.

    ``build()`` returns every file the task's generator writes, by name inside
    ``data/truth/``: the task's own statements file (``file``) and, for the cities, the
    spare-city pool its fresh items are drawn from.
    """

    task_id: str
    #: the statements file's name inside data/truth/
    file: str
    slices: tuple[str, ...]
    build: Callable[[], dict[str, bytes]]

    @property
    def rel(self) -> str:
        """The statements file's path relative to the catalog's tasks.yaml."""
        return f"{DATA_FOLDER}/{self.file}"


def read_rows(spec: TaskSpec, rows: Sequence[Row]) -> list[Item]:
    """``rows`` as the items the task ``spec`` would read from its own CSV file: one item
    a statement, of one prompt with the row's id, label and slices (the statements
    format's ``_statement``; the tests read the same rows through the format and compare).
    Built here, not read through the format, because the format reaches this package for
    its fresh-item generators: an import back would close a loop."""
    out = []
    for row in rows:
        if tuple(sorted(row.slices)) != tuple(sorted(spec.slices)):
            raise ValueError(f"{row.id}: slices {sorted(row.slices)}, but task {spec.id} "
                             f"declares {sorted(spec.slices)}")
        slices = {name: row.slices[name] for name in spec.slices}
        prompt = Prompt(row.statement, id=row.id, label=row.label, slices=slices)
        out.append(Item(id=row.id, prompts=(prompt,), slices=slices))
    return out


def band(value: int, bands: Sequence[tuple[int, int | None, str]]) -> str:
    """The name of the ``(low, high, name)`` band holding ``value`` (low <= value, and
    value < high unless high is None).

    >>> band(7, [(1, 5, "1-4"), (5, None, "5+")])
    '5+'
    """
    for low, high, name in bands:
        if value >= low and (high is None or value < high):
            return name
    raise ValueError(f"{value} is in none of the bands {[b[2] for b in bands]}")


def halves(n_items: int, pool: int, what: str) -> int:
    """How many subjects (cities, number pairs, words) a fresh set of ``n_items`` takes:
    each gives a true and a false statement, so half of them, rounded up; an error when
    the spare pool holds fewer."""
    if n_items < 1:
        raise InputError(f"n_items {n_items}: expected at least 1")
    need = (n_items + 1) // 2
    if need > pool:
        raise InputError(f"{n_items} fresh items need {need} spare {what}, but the spare pool "
                         f"holds {pool}")
    return need
