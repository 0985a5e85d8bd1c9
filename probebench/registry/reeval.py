"""``probebench reeval``: quarterly re-evaluation of live entries on the newest holdouts.

Each live entry is scored (AUROC with its item-bootstrap CI) on the newest holdout of
each of its tasks (``tasks.yaml``: a hand-written set or a hashed share carved out of the
train split, unseen by every probe and disjoint from the test set; the registered test
set only for a task without one) and compared with its latest stored AUROC on that
task. Per entry and task a diff file is written. A drop of more than 5 AUROC points is
listed in the public ``DIFF.md``; more than 10 points, with the stored AUROC above the
holdout's whole 95% CI (so a small holdout's noise never deprecates), sets the entry's
status to ``deprecated`` with a notice, as a change to its YAML for a maintainer to
review. Shards split the (model, task) pairs so a CI matrix
can spread the work: shard I of N takes the pairs at positions I-1, I-1+N, ...
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from probebench.artifact.checks import validate
from probebench.errors import InputError, ProbebenchError
from probebench.evaluation.headline import Flat, task_auroc
from probebench.evaluation.metrics import N_RESAMPLES
from probebench.evaluation.submit import Session, SubmitOptions
from probebench.hashing import atomic_write_bytes
from probebench.registry.check import entries_with_status
from probebench.registry.resolve import resolve_artifact
from probebench.registry.store import latest_results
from probebench.sites import Site
from probebench.tasks.catalog import ReevalSet, TaskCatalog

LIST_DROP = 5.0
DEPRECATE_DROP = 10.0


@dataclass
class Change:
    entry: str
    task: str
    version: int
    test_sha256: str
    old_auroc: float | None
    new_auroc: float
    ci_low: float
    ci_high: float

    @property
    def drop_points(self) -> float:
        return 0.0 if self.old_auroc is None else 100.0 * (self.old_auroc - self.new_auroc)

    @property
    def beyond_ci(self) -> bool:
        """The stored AUROC lies above the holdout's whole 95% CI."""
        return self.old_auroc is not None and self.old_auroc > self.ci_high

    @property
    def action(self) -> str:
        if self.drop_points > DEPRECATE_DROP and self.beyond_ci:
            return "deprecate"
        if self.drop_points > LIST_DROP:
            return "list"
        return "none"


def parse_shard(text: str) -> tuple[int, int]:
    try:
        index, total = (int(x) for x in text.split("/"))
    except ValueError:
        raise InputError(f"--shard {text!r}: expected I/N, e.g. 1/4") from None
    if not 1 <= index <= total:
        raise InputError(f"--shard {text!r}: I must be between 1 and N")
    return index, total


class ReevalChanges(list[Change]):
    """The changes of a re-evaluation, and the entries it could not re-evaluate."""

    def __init__(self) -> None:
        super().__init__()
        #: entry id -> why it was skipped (its artifact no longer resolves or validates)
        self.failures: dict[str, str] = {}


def reeval(registry: Path, repo: Path, out: Path, *, catalog: TaskCatalog,
           shard: tuple[int, int] = (1, 1), seed: int = 0, bootstrap: int = N_RESAMPLES,
           progress: bool = False) -> ReevalChanges:
    """Score every live entry on the newest holdout of each of its tasks and write the
    diffs. The AUROC and its CI come from the same code and seeds as ``submit``'s, so a
    task without a holdout reproduces the stored interval exactly. An entry whose
    artifact no longer resolves or validates is reported (``failures`` and DIFF.md) and
    skipped: one bad entry never stops the shard."""
    live = entries_with_status(registry, "live")
    pairs = sorted({(e.model, t) for _, e in live for t in e.tasks if t in catalog.specs})
    index, total = shard
    mine = set(pairs[index - 1::total])
    session = Session(catalog, SubmitOptions(seed=seed, bootstrap=bootstrap,
                                             progress=progress))
    sets: dict[str, ReevalSet] = {}
    changes = ReevalChanges()
    for path, entry in live:
        tasks = [t for t in entry.tasks if (entry.model, t) in mine]
        if not tasks:
            continue
        # validate once per entry, not once per task
        try:
            folder, _ = resolve_artifact(entry.artifact_url, repo)
        except ProbebenchError as exc:
            changes.failures[entry.id] = str(exc)
            continue
        report = validate(folder, catalog=catalog, expected_sha256=entry.artifact_sha256)
        if not report.valid or report.weights is None or report.meta is None:
            changes.failures[entry.id] = "the artifact no longer validates: " + "; ".join(
                f"{c.name}: {c.message}" for c in report.failed())
            continue
        site = Site(report.meta.layer, report.meta.position)
        for task in tasks:
            if task not in sets:
                sets[task] = catalog.reeval_set(task)
            held = sets[task]
            flat = Flat.of(held.data.test)
            acts = session.activations(entry.model, f"{task}/reeval-v{held.version}",
                                       flat.prompts, site)
            probs = report.weights.predict_proba(acts)[:, 1]
            iv = task_auroc(task, held.data.test, probs, seed=seed, n_resamples=bootstrap)
            assert iv.value is not None and iv.ci_low is not None and iv.ci_high is not None
            stored = latest_results(registry, entry.id).get(task)
            old = stored.result.auroc.value if stored else None
            change = Change(entry.id, task, held.version, held.test_sha256, old, iv.value,
                            iv.ci_low, iv.ci_high)
            changes.append(change)
            _write_diff(out, change)
            if change.action == "deprecate":
                _deprecate(path, change)
    _write_public(out, changes, shard)
    return changes


def _write_diff(out: Path, change: Change) -> None:
    doc = {"entry": change.entry, "task": change.task, "holdout_version": change.version,
           "test_sha256": change.test_sha256, "old_auroc": change.old_auroc,
           "new_auroc": change.new_auroc, "new_ci": [change.ci_low, change.ci_high],
           "drop_points": round(change.drop_points, 4), "action": change.action}
    path = out / change.entry / f"{change.task}.json"
    atomic_write_bytes(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())


def _deprecate(path: Path, change: Change) -> None:
    data = yaml.safe_load(path.read_text("utf-8"))
    data["status"] = "deprecated"
    data["notice"] = (f"Deprecated by re-evaluation: AUROC on {change.task} holdout "
                      f"v{change.version} fell {change.drop_points:.1f} points "
                      f"({change.old_auroc:.3f} -> {change.new_auroc:.3f}).")
    atomic_write_bytes(path, yaml.safe_dump(data, sort_keys=False,
                                            allow_unicode=True).encode("utf-8"))


def _write_public(out: Path, changes: ReevalChanges, shard: tuple[int, int]) -> None:
    flagged = [c for c in changes if c.action != "none"]
    lines = [f"# Re-evaluation diff (shard {shard[0]}/{shard[1]})", "",
             f"{len(changes)} (entry, task) pairs re-evaluated; drops over {LIST_DROP:.0f} "
             f"AUROC points are listed, over {DEPRECATE_DROP:.0f} deprecate the entry.", ""]
    if flagged:
        lines += ["| entry | task | holdout | old AUROC | new AUROC [95% CI] | drop (points) "
                  "| action |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for c in sorted(flagged, key=lambda c: -c.drop_points):
            lines.append(f"| {c.entry} | {c.task} | v{c.version} | {c.old_auroc:.3f} | "
                         f"{c.new_auroc:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}] | "
                         f"{c.drop_points:.1f} | {c.action} |")
    else:
        lines.append("No entry dropped by more than the listing threshold.")
    if changes.failures:
        lines += ["", "## Entries not re-evaluated", ""]
        lines += [f"- {entry}: {why}" for entry, why in sorted(changes.failures.items())]
    atomic_write_bytes(out / "DIFF.md", ("\n".join(lines) + "\n").encode("utf-8"))
    summary = [{"entry": c.entry, "task": c.task, "drop_points": round(c.drop_points, 4),
                "action": c.action} for c in changes]
    atomic_write_bytes(out / "diff.json", (json.dumps(summary, indent=1) + "\n").encode())
