"""The task baselines the registry has published, as a submission reads them.

A task's baselines depend on the task, the model and the site, never on the entry
(``probebench.evaluation.baselines``), and the registry stores them once per (task,
model, site) (``registry/baselines/``), each record with the SHA-256 of every input they
were computed from (``Submission.baselines_sha256``). A submit on the same inputs reads
that record instead of running the random-init control and the surprisal pass again:
the numbers it reports are then the ones the leaderboard ranks against.

Where the records come from (a checkout's ``registry/``, a mirror, none) is decided by
the caller; ``submit`` only receives a lookup (``SubmitOptions.published_baselines``).
The registry's own evaluation never looks up (``runs.evaluate``): what it stores is
computed in its run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from probebench.evaluation.results import BaselineOut


@dataclass(frozen=True)
class PublishedBaselines:
    """A task's baselines as the registry stores them, and where they were read."""

    baselines: dict[str, BaselineOut]
    #: the file and record, e.g. "registry/baselines/verb_grammar/smollm2-135m__20-token_avg
    #: .json, record 3 (evaluated 2026-11-24T08:07:34Z)"
    where: str


#: (task id, model name, site "layer:position", inputs SHA-256) -> the registry's
#: baselines for exactly those inputs, or None when it has none
BaselineLookup = Callable[[str, str, str, str], "PublishedBaselines | None"]


def no_published_baselines(task: str, model: str, site: str, inputs_sha256: str
                           ) -> PublishedBaselines | None:
    """A lookup that finds nothing: every baseline is computed in the run."""
    return None


__all__ = ["BaselineLookup", "PublishedBaselines", "no_published_baselines"]
