"""After merge: evaluate newly merged entries, store their results, and make them live.

A pull request may not touch ``registry/results`` (confinement), so a merged entry
arrives as ``status: pending_review`` with no stored results. The trusted workflow on
``push`` to main (``.github/workflows/publish.yml``) runs ``probebench registry
publish``: every pending entry is evaluated on its tasks with the base branch's code,
its results are appended to ``registry/results``, and its status becomes ``live``. The
workflow then opens a pull request from a bot branch with exactly those changes.
Pending and deprecated entries are never ranked (``leaderboard build``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from probebench.errors import InputError, ProbebenchError
from probebench.evaluation.session import Session
from probebench.hashing import atomic_write_bytes
from probebench.registry.entry import Entry, entries_with_status, read_entry
from probebench.runs.evaluate import evaluate_entry

_STATUS_LINE = re.compile(r"^status:[ \t]*[A-Za-z_\"']+[ \t]*$", re.MULTILINE)


def set_status(path: Path, status: str) -> Entry:
    """Change an entry file's ``status:`` line in place (comments and layout kept) and
    return the entry read back."""
    text = path.read_text("utf-8")
    if len(_STATUS_LINE.findall(text)) != 1:
        raise InputError(f"{path}: expected one top-level 'status:' line to change")
    atomic_write_bytes(path, _STATUS_LINE.sub(f"status: {status}", text).encode("utf-8"))
    entry = read_entry(path)
    if entry.status != status:
        raise InputError(f"{path}: status reads {entry.status!r} after the change")
    return entry


@dataclass
class PublishReport:
    published: list[str] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def publish_pending(registry: Path, repo: Path, session: Session, *,
                    allow_dirty: bool = False,
                    holdout_key: bytes | None = None) -> PublishReport:
    """Evaluate each pending entry, store its results and flip it to ``live``. An entry
    whose evaluation fails stays pending, with the reason in the report. Code with
    uncommitted changes (a ``+dirty`` commit) publishes nothing unless ``allow_dirty``:
    every entry is refused before any work.

    With ``holdout_key`` each entry is also scored on its tasks' current sealed holdouts
    (in memory). Without it, an entry on a task with a sealed holdout stays pending,
    since nothing may be stored for that task ("needs the holdout key")."""
    report = PublishReport()
    for path, entry in entries_with_status(registry, "pending_review"):
        try:
            done = evaluate_entry(entry.id, registry, repo, session, allow_dirty=allow_dirty,
                                  holdout_key=holdout_key)
        except ProbebenchError as exc:
            report.failed[entry.id] = str(exc)
            continue
        if done.sealed_unscored:
            report.failed[entry.id] = (
                f"needs the holdout key: {', '.join(done.sealed_unscored)} "
                "has a sealed holdout, and a keyless run stores nothing for it (give --key "
                "FILE or $PROBEBENCH_HOLDOUT_KEY)")
            continue
        set_status(path, "live")
        report.published.append(entry.id)
        report.changed += [*done.changed, path]
    return report


__all__ = ["PublishReport", "publish_pending", "set_status"]
