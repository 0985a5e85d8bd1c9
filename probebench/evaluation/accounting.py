"""What a submission accounts for beside its results: which prompts its latency times,
what each stage took, and the bundle hashes ``submit_many`` requires.

Kept apart from ``submit`` (orchestration only) and ``task`` (one task's evaluation), which
both read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.evaluation.deployment import Latency, measure_latency
from probebench.evaluation.results import StageTiming
from probebench.evaluation.session import Session, SubmitError, SubmitOptions
from probebench.prompts import Prompt
from probebench.sites import Site


def latency_sample(session: Session, prompts: Sequence[Prompt]) -> list[Prompt]:
    """The prompts the latency may time: with ``--limit N`` at most the first N (the
    measurement times its first ``options.latency_prompts`` of them)."""
    limit = session.options.limit
    return list(prompts if limit is None else prompts[:limit])


def task_latency(session: Session, meta: ProbeMeta, weights: ProbeWeights,
                 prompts: Sequence[Prompt], site: Site) -> Latency | None:
    """The task's latency (``deployment.measure_latency``) over ``latency_sample``; None
    when the latency stage is skipped (``Submission.stages_skipped`` says so)."""
    if not session.options.runs("latency"):
        return None
    return measure_latency(session, meta, weights, latency_sample(session, prompts), site)


def latency_prompts(options: SubmitOptions) -> int:
    """The most prompts a task's latency times: ``options.latency_prompts``, and with
    ``--limit N`` at most N (``task.latency_sample``); 0 when the latency is skipped."""
    if not options.runs("latency"):
        return 0
    if options.limit is None:
        return options.latency_prompts
    return min(options.latency_prompts, options.limit)


def stage_counts(session: Session) -> dict[str, tuple[float, int, int, float]]:
    return {name: (session.stage_seconds.get(name, 0.0), session.stage_passes.get(name, 0),
                   session.stage_tokens.get(name, 0),
                   session.stage_cpu_seconds.get(name, 0.0))
            for name in session.stage_seconds}


def stage_timings(session: Session, before: dict[str, tuple[float, int, int, float]]
                   ) -> dict[str, StageTiming]:
    """What each stage took in this submission (a shared session's earlier ones left
    out)."""
    out = {}
    for name, (seconds, passes, tokens, cpu) in stage_counts(session).items():
        s0, p0, t0, c0 = before.get(name, (0.0, 0, 0, 0.0))
        out[name] = StageTiming(seconds=round(seconds - s0, 3), passes=passes - p0,
                                tokens=tokens - t0, cpu_seconds=round(cpu - c0, 3))
    return out


#: ``submit_many``'s required bundle hashes: one per artifact (None: not checked), or
#: artifact path -> hash
HashesGiven = Sequence[str | None] | Mapping[Path, str] | Mapping[str, str]


def expected_hashes(artifacts: Sequence[Path],
                    expected: HashesGiven | None
                    ) -> list[str | None]:
    """One required bundle hash (or None) per artifact, from ``submit_many``'s
    ``expected_sha256``; a sequence of another length, or a mapping naming an artifact
    that is not given, is refused (``SubmitError``)."""
    if expected is None:
        return [None] * len(artifacts)
    if isinstance(expected, Mapping):
        by_path = {Path(k).resolve(): v for k, v in expected.items()}
        resolved = [Path(a).resolve() for a in artifacts]
        stray = sorted(str(k) for k in by_path if k not in resolved)
        if stray:
            raise SubmitError(f"expected_sha256 names {', '.join(stray)}, which is not "
                              "among the artifacts given")
        return [by_path.get(r) for r in resolved]
    if isinstance(expected, str):
        raise SubmitError("expected_sha256: give one hash per artifact (a sequence or a "
                          "mapping), not one string")
    hashes = list(expected)
    if len(hashes) != len(artifacts):
        raise SubmitError(f"expected_sha256 has {len(hashes)} hashes for {len(artifacts)} "
                          "artifacts: give one per artifact (None where none is required)")
    return hashes


__all__ = ["HashesGiven", "expected_hashes", "latency_prompts", "latency_sample",
           "stage_counts", "stage_timings", "task_latency"]
