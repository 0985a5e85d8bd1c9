"""The tasks' baselines, stored once per (task, model, site):
``registry/baselines/<task>/<model>__<layer>-<position>.json``.

A baseline depends on the task, the model and the site (``probebench.evaluation.
baselines``), never on an entry's architecture or weights, so task pages read it from
here and do not change when entries come and go. Each file keeps a history like the
results store: a new record is appended only
when the numbers change beyond the reproducibility contract, or the test set or model
changed.

Each baseline keeps its score of every labelled test prompt (``BaselineOut.scores``; a
multi-class task's class probabilities, ``class_scores``), in the order of a result's
predictions, so the leaderboard can resample a probe's gap to the best baseline on the
probe's items (``probebench.evaluation.baselines.baseline_gap``) even for a result stored
without one. Records stored before the scores were kept still load (the fields are None);
the first evaluation that has them appends a record, as the numbers then differ.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probebench.errors import InputError, field_problem
from probebench.evaluation.published import PublishedBaselines
from probebench.evaluation.reproducibility import differences
from probebench.evaluation.results import BaselineOut, RunInfo, Submission
from probebench.hashing import atomic_write_bytes

FOLDER = "baselines"


class BaselineRecord(BaseModel):
    """A task's baselines on one model, as one evaluation computed them."""

    model_config = ConfigDict(extra="forbid")

    task: str
    test_sha256: str
    site: str = Field(description="layer:position the random-feature baseline reads.")
    model: dict[str, Any] = Field(description="The model identity (name, hashes, dtype).")
    seed: int
    bootstrap_resamples: int
    baselines: dict[str, BaselineOut]
    inputs_sha256: str | None = Field(
        default=None, description="The SHA-256 of every input the baselines were computed "
        "from (Submission.baselines_sha256): a submit on the same inputs reads this record "
        "instead of computing them (None on records stored before it was kept).")
    run: RunInfo | None = None

    def deterministic(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"run"})


class BaselineHistory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str
    model: str
    site: str
    history: list[BaselineRecord]

    @property
    def label(self) -> str:
        return f"{self.model} at {self.site}"


def _file_name(model: str, site: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{model}__{site.replace(':', '-')}") + ".json"


def baseline_path(root: Path, task: str, model: str, site: str) -> Path:
    return root / FOLDER / task / _file_name(model, site)


def _read(path: Path) -> BaselineHistory | None:
    if not path.is_file():
        return None
    try:
        return BaselineHistory.model_validate(json.loads(path.read_text("utf-8")))
    except ValueError as exc:
        detail = field_problem(exc) if isinstance(exc, ValidationError) else str(exc)
        raise InputError(f"{path}: not a baselines file of this probebench version "
                         f"({detail})") from None


def store_baselines(root: Path, submission: Submission) -> list[Path]:
    """Record each task's baselines of ``submission``; returns the files that changed.
    A limited submission (``submit --limit``) is refused: it scores part of a test set;
    so is one that skipped stages (``--quick``, ``--skip``): its baselines are partial."""
    problem = submission.registry_problem()
    if problem is not None:
        raise InputError(f"this submission is {problem}; the registry stores only baselines "
                         "of every stage on whole test sets (run it again without --limit, "
                         "--quick, --skip or --stages)")
    changed = []
    name = str(submission.model.get("name", submission.probe.model))
    site = f"{submission.probe.layer}:{submission.probe.position}"
    for task in submission.tasks:
        record = BaselineRecord(task=task.id, test_sha256=task.test_sha256, site=site,
                                model=submission.model, seed=submission.seed,
                                bootstrap_resamples=submission.bootstrap_resamples,
                                baselines=task.baselines,
                                inputs_sha256=submission.baselines_sha256.get(task.id),
                                run=submission.run)
        path = baseline_path(root, task.id, name, site)
        doc = _read(path) or BaselineHistory(task=task.id, model=name, site=site, history=[])
        if doc.history and not differences(doc.history[-1].deterministic(),
                                           record.deterministic()):
            continue
        doc.history.append(record)
        text = json.dumps(doc.model_dump(mode="json"), indent=1, sort_keys=True,
                          allow_nan=False) + "\n"
        atomic_write_bytes(path, text.encode("utf-8"))
        changed.append(path)
    return changed


class RegistryBaselines:
    """The lookup ``submit`` reads published baselines through
    (``evaluation.published.BaselineLookup``): the latest record of the (task, model,
    site) file under ``registry``, when it was stored for exactly the run's inputs
    (``inputs_sha256``). ``ensure`` makes a mirror's file present and checked first
    (``RegistrySource.ensure_files``); a folder needs none. A file that is absent, or
    whose latest record has other inputs, gives None: the run computes them."""

    def __init__(self, registry: Path, repo: Path,
                 ensure: Callable[[list[str]], None] | None = None,
                 origin: str | None = None) -> None:
        self.registry, self.repo, self.ensure = registry, repo, ensure
        #: the registry named in ``where`` (a mirror's URL and index digest)
        self.origin = origin

    def __call__(self, task: str, model: str, site: str, inputs_sha256: str
                 ) -> PublishedBaselines | None:
        path = baseline_path(self.registry, task, model, site)
        try:
            where = path.relative_to(self.repo).as_posix()
        except ValueError:
            where = str(path)
        if self.ensure is not None:
            self.ensure([where])
        doc = _read(path)
        if doc is None or not doc.history:
            return None
        latest = doc.history[-1]
        if latest.inputs_sha256 != inputs_sha256:
            return None
        when = f" (evaluated {latest.run.evaluated_at})" if latest.run else ""
        origin = f"{self.origin}: " if self.origin else ""
        return PublishedBaselines(baselines=dict(latest.baselines),
                                  where=f"{origin}{where}, record {len(doc.history)}{when}")


def task_baselines(root: Path, task: str) -> dict[str, BaselineRecord]:
    """"<model> at <layer:position>" -> the latest baselines of ``task`` there (empty
    when none are stored), in file-name order."""
    out = {}
    for path in sorted((root / FOLDER / task).glob("*.json")):
        doc = _read(path)
        if doc is not None and doc.history:
            out[doc.label] = doc.history[-1]
    return out


__all__ = ["BaselineHistory", "BaselineRecord", "RegistryBaselines", "baseline_path",
           "store_baselines", "task_baselines"]
