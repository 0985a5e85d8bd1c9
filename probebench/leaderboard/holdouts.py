"""What the leaderboard says about a task's holdouts, generation by generation.

Generation 0 is the task's public holdout (``holdouts`` in tasks.yaml: a hand-written set
or a hashed share carved out of the train split). It is disjoint from the test set but
readable by anyone, so it was revealed the day it was registered. Generations 1, 2, ...
are sealed (``probebench.tasks.sealed``): listed in ``holdouts.yaml`` beside the tasks
file with their public commitment and dates, their plaintext published only when retired
and revealed. A task with a live entry has a current sealed generation; the others keep
generation 0 until a probe is registered on them, and their pages say so.

For every generation the page shows its size and its minimum detectable drop
(``probebench.evaluation.power``); for a revealed sealed generation, the stored scores of
the entries made on it and the command that checks it against its commitment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probebench.errors import InputError
from probebench.evaluation.power import TARGET_DROP, items_drop, minimum_detectable_drop
from probebench.registry.store import ResultRecord, read_history, result_path
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.sealed import generations


@dataclass(frozen=True)
class GenerationView:
    """One row of a task page's holdout table."""

    number: int
    status: str
    what: str
    n_items: int | None
    drop: float | None
    commitment: str | None = None
    sealed_at: str | None = None
    retired_at: str | None = None
    revealed_at: str | None = None
    #: (entry id, AUROC, CI low, CI high) of the stored results made on this generation
    scores: list[tuple[str, float | None, float | None, float | None]] = field(
        default_factory=list)
    verify: str | None = None

    @property
    def detects_target(self) -> bool | None:
        return None if self.drop is None else self.drop <= TARGET_DROP


@dataclass(frozen=True)
class TaskHoldouts:
    generations: list[GenerationView]
    #: what the page says about the task's holdout as a whole
    note: str


def _public(catalog: TaskCatalog, task_id: str) -> GenerationView | None:
    spec = catalog.spec(task_id)
    if not spec.holdouts:
        return None
    newest = max(spec.holdouts, key=lambda h: h.version)
    what = (f"public v{newest.version}: {newest.carve.fraction:.0%} of the train split carved "
            f"by a salted hash (salt {newest.carve.salt})" if newest.carve is not None else
            f"public v{newest.version}: the files {', '.join(sorted(newest.files.values()))}")
    try:
        items = catalog.load_holdout(task_id, newest).test
    except (InputError, OSError):
        return GenerationView(0, "revealed (public)", what, None, None)
    return GenerationView(0, "revealed (public)", what, len(items), items_drop(items))


def task_holdouts(catalog: TaskCatalog, task_id: str, registry: Path,
                  entry_ids: Sequence[str]) -> TaskHoldouts:
    """The holdout table of ``task_id``'s page; the scores of revealed generations are
    read from the stored histories of ``entry_ids`` in ``registry``."""
    rows: list[GenerationView] = []
    public = _public(catalog, task_id)
    if public is not None:
        rows.append(public)
    sealed = generations(catalog, task_id)
    for gen in sealed:
        drop = (minimum_detectable_drop(gen.n_label_1, gen.n_label_0)
                if gen.n_label_1 and gen.n_label_0 else None)
        scores = []
        if gen.status == "revealed":
            for entry_id in sorted(entry_ids):
                for record in read_history(result_path(registry, entry_id, task_id)):
                    held = record.holdout
                    if held is not None and held.generation == gen.generation:
                        scores.append((entry_id, held.auroc.value, held.auroc.ci_low,
                                       held.auroc.ci_high))
        rows.append(GenerationView(
            gen.generation, gen.status,
            "sealed: written for probebench, in no public release", gen.n_items, drop,
            commitment=gen.commitment, sealed_at=gen.sealed_at.isoformat(),
            retired_at=gen.retired_at.isoformat() if gen.retired_at else None,
            revealed_at=gen.revealed_at.isoformat() if gen.revealed_at else None,
            scores=scores,
            verify=(f"probebench holdout verify {task_id}" if gen.status == "revealed"
                    else None)))
    current = next((g for g in sealed if g.status == "current"), None)
    if current is not None:
        note = (f"Audits and the Goodhart-resistance axis use sealed generation "
                f"{current.generation} (sealed {current.sealed_at.isoformat()}): items no "
                "submitter can have seen. Its plaintext is published when it is retired, "
                "and anyone can then check it against the commitment listed here since "
                "its sealing.")
    else:
        note = ("No sealed generation yet: no probe is registered on this task, so its "
                "holdout is the public generation 0 until one is. An audit on it catches "
                "regressions of the software, not over-fitting: anyone can read it.")
    return TaskHoldouts(rows, note)


def entry_holdout(catalog: TaskCatalog, task_id: str, record: ResultRecord
                  ) -> dict[str, Any]:
    """An entry page's holdout section for one task: the sealed generation its result
    was scored on (with its commitment, dates and whether it has been revealed), the
    AUROC there, the retention and the Goodhart-resistance value, explained."""
    from probebench.evaluation.holdout import goodhart_value, retention, selectivity_share

    listed = {g.generation: g for g in generations(catalog, task_id)} \
        if task_id in catalog.specs else {}
    current = next((g for g in listed.values() if g.status == "current"), None)
    held = record.holdout
    if held is None:
        why = ("the task has no sealed generation yet (its holdout is the public generation "
               "0)" if current is None else
               f"the result was stored before sealed generation {current.generation} was "
               "scored, or without the holdout key")
        return {"measured": False, "why": why}
    gen = listed.get(held.generation)
    share = selectivity_share(record.result.selectivity)
    test_auroc = record.result.auroc.value
    kept = retention(held.auroc.value, test_auroc) if held.auroc.value is not None and \
        test_auroc is not None else None
    value, how = goodhart_value(kept, share)
    return {
        "measured": True, "generation": held.generation, "commitment": held.commitment,
        "status": gen.status if gen is not None else "not listed in this catalog",
        "sealed_at": gen.sealed_at.isoformat() if gen is not None else None,
        "revealed_at": gen.revealed_at.isoformat() if gen and gen.revealed_at else None,
        "verify": f"probebench holdout verify {task_id}" if gen is not None and
                  gen.status == "revealed" else None,
        "n_items": held.n_items, "auroc": held.auroc,
        "retention": kept, "share": share, "goodhart": value, "how": how,
        "drop": held.minimum_detectable_drop,
        "current": current.generation if current is not None else None}


def holdout_context(view: TaskHoldouts) -> dict[str, Any]:
    """The template's view of a task's holdouts."""
    return {"rows": view.generations, "note": view.note, "target": TARGET_DROP}


__all__ = ["GenerationView", "TaskHoldouts", "entry_holdout", "holdout_context",
           "task_holdouts"]
