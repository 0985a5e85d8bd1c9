"""Eval-awareness guards: one registered probe per model that scores how
evaluation-like a prompt is. ``registry/guards.yaml`` maps a model to the entry id of
its guard::

    smollm2-135m: probebench/eval-awareness-guard-smollm2-135m-l15-v2

``submit`` uses the model's guard for the eval-awareness-corrected AUROC of every
probe on that model. A guard must be a **live** entry of the task ``eval_awareness`` on
that model, and from a registry mirror it must also be the one the (signed) index
declares for the model (``RegistryIndex.guards``); its artifact must validate and match
its entry's ``artifact_sha256``. A guard that is anything else is an error, never
silently skipped or used.
"""

from __future__ import annotations

from pathlib import Path

from probebench.artifact.checks import validate
from probebench.errors import InputError
from probebench.evaluation.guards import Guard
from probebench.registry.entry import entry_path, read_entry
from probebench.sources.resolve import resolve_artifact
from probebench.tasks.catalog import TaskCatalog
from probebench.yamlsafe import load_yaml

GUARDS_FILE = "guards.yaml"


def guard_ids(registry: Path) -> dict[str, str]:
    """model -> guard entry id, from ``registry/guards.yaml`` (empty when absent)."""
    path = registry / GUARDS_FILE
    if not path.is_file():
        return {}
    data = load_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError(f"{path}: expected a mapping of model name to guard entry id")
    return dict(data)


GUARD_TASK = "eval_awareness"


class GuardRefusedError(InputError):
    """A guard that is not a live ``eval_awareness`` entry of its model declared by the
    registry."""


def guard_for(model: str, registry: Path, repo: Path, *,
              catalog: TaskCatalog | None = None,
              declared: dict[str, str] | None = None) -> Guard | None:
    """The registered guard of ``model`` (None when the model has none), validated
    against its entry's hash. ``declared`` is a mirror index's model -> guard mapping:
    ``guards.yaml`` must name the same entry."""
    entry_id = guard_ids(registry).get(model)
    if declared is not None and declared.get(model) != entry_id:
        raise GuardRefusedError(f"{registry / GUARDS_FILE}: names {entry_id!r} as the guard of "
                           f"{model}, the registry index declares {declared.get(model)!r}; "
                           "refused")
    if entry_id is None:
        return None
    path = entry_path(registry, entry_id)
    if not path.is_file():
        raise InputError(f"{registry / GUARDS_FILE}: guard {entry_id} of {model} has no entry "
                         f"({path} is missing)")
    entry = read_entry(path)
    if entry.model != model:
        raise GuardRefusedError(f"guard {entry_id} reads {entry.model!r}, registered for "
                           f"{model!r}; refused")
    if entry.status != "live" or GUARD_TASK not in entry.tasks:
        raise GuardRefusedError(f"guard {entry_id} of {model}: a guard is a live entry of the task "
                           f"{GUARD_TASK}; this one is {entry.status} on "
                           f"{', '.join(entry.tasks)}; refused")
    folder, _ = resolve_artifact(entry.artifact_url, repo)
    report = validate(folder, catalog=catalog, expected_sha256=entry.artifact_sha256)
    if not report.valid:
        failed = "; ".join(f"{c.name}: {c.message}" for c in report.failed())
        raise InputError(f"guard {entry_id} of {model} does not validate ({failed})")
    assert report.bundle_sha256 is not None
    return Guard(folder, entry_id, report.bundle_sha256)


class RegistryGuards:
    """A guard lookup for ``SubmitOptions.guards``: each model's guard as
    ``registry/guards.yaml`` names it."""

    def __init__(self, registry: Path, repo: Path, *,
                 catalog: TaskCatalog | None = None,
                 declared: dict[str, str] | None = None) -> None:
        self.registry, self.repo, self.catalog = Path(registry), Path(repo), catalog
        self.declared = declared

    def __call__(self, model: str) -> Guard | None:
        return guard_for(model, self.registry, self.repo, catalog=self.catalog,
                         declared=self.declared)

    def missing(self, model: str) -> str:
        # the words stored results have always carried for this case; no path, so the
        # note is the same on every machine
        return f"no eval-awareness guard for {model}"


__all__ = ["GUARDS_FILE", "GUARD_TASK", "GuardRefusedError", "RegistryGuards", "guard_for",
           "guard_ids"]
