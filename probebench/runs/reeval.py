"""``probebench reeval``: quarterly re-evaluation of live entries on the newest holdouts.

Each live entry is scored (AUROC with its item-bootstrap CI) on the newest holdout of
each of its tasks and compared with its latest stored AUROC on that task. With the
holdout key (``--key`` or ``$PROBEBENCH_HOLDOUT_KEY``) that is the task's **current
sealed generation**, decrypted in memory: items no submitter can have seen or trained
on. Without it (a contributor's clone, CI) the run says so and uses the task's public
generation 0 (``holdouts`` in tasks.yaml: a hand-written set or a hashed share carved
out of the train split, disjoint from the test set but readable by anyone, so it
catches regressions of the software rather than over-fitting; the registered test set
only for a task without one). Per entry and task a diff file is written. A drop of
more than 5 AUROC points is listed in the public ``DIFF.md``; more than 10 points, with
the stored AUROC above the holdout's whole 95% CI (so a small holdout's noise never
deprecates), sets the entry's
status to ``deprecated`` with a notice, as a change to its YAML for a maintainer to
review.

The work is planned, run and merged in three steps, so any engine can spread it:

* ``plan``: the live entries become *units*, one per (model, task), each listing every
  entry and site it serves; units are packed into groups, one per model by default
  (contiguous in (model, task) order, so a group loads as few models as it can). The
  plan is JSON; one group is one CLI call (``reeval run --plan P --group ID``).
* ``run``: per unit, one forward pass of the model over the holdout pools every site
  the unit's entries read, and the activations fan out to all of its probes: the cost
  grows with models and tasks, not with probes. A group writes ``result.json``.
* ``merge``: the groups' results (each exactly once, all of the same plan) become the
  per-entry diffs, ``DIFF.md``, ``diff.json`` and the deprecations, exactly as an
  unsharded run writes them (``reeval`` with no action runs all three in one process).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError, field_problem
from probebench.evaluation.headline import Flat, headline_interval
from probebench.evaluation.metrics import N_RESAMPLES
from probebench.evaluation.session import Session, SubmitOptions
from probebench.hashing import atomic_write_bytes, sha256_json
from probebench.registry.entry import Entry, entries_with_status, entry_path
from probebench.registry.store import latest_results
from probebench.runs.evaluate import entry_probe
from probebench.sites import Site
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import ReevalSet, TaskCatalog
from probebench.tasks.sealed import current_generation, open_generation

LIST_DROP = 5.0
DEPRECATE_DROP = 10.0
PLAN_VERSION = 1
RESULT_FILE = "result.json"
#: the runner a group runs on when no GPU runner label is configured
CPU_RUNNER = "ubuntu-24.04"


class Change(BaseModel):
    """One (entry, task) re-evaluated: its stored and its holdout AUROC."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entry: str
    task: str
    version: int
    test_sha256: str
    #: the sealed generation scored (a keyed run), None for the public generation 0
    sealed_generation: int | None = None
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


class ReevalChanges(list[Change]):
    """The changes of a re-evaluation, and the entries it could not re-evaluate."""

    def __init__(self, changes: Iterable[Change] = ()) -> None:
        super().__init__(changes)
        #: entry id -> why it was skipped (its artifact no longer resolves or validates)
        self.failures: dict[str, str] = {}
        #: forward passes of a model this run needed (disk-cache hits not counted)
        self.passes = 0


# --- plan ------------------------------------------------------------------------------


class Unit(BaseModel):
    """One forward pass: a model over one task's holdout, serving every listed entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    task: str
    entries: list[str] = Field(min_length=1)
    #: the sites the entries declare ("layer:position"); the validated artifacts decide
    sites: list[str]


class Group(BaseModel):
    """A share of the plan that one job runs: ``probebench reeval run --group ID``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^g[0-9]{1,4}$")
    models: list[str]
    runs_on: str
    units: list[Unit] = Field(min_length=1)


class Plan(BaseModel):
    """The whole re-evaluation: which groups run which units, with which seed."""

    model_config = ConfigDict(extra="forbid")

    version: int = PLAN_VERSION
    seed: int
    bootstrap: int
    #: hash of the live entries the plan was made from (merge checks every group's
    #: result was run on the same plan)
    entries_sha256: str
    groups: list[Group]

    @property
    def sha256(self) -> str:
        return sha256_json(self.model_dump(mode="json"))

    def group(self, group_id: str) -> Group:
        for group in self.groups:
            if group.id == group_id:
                return group
        raise InputError(f"the plan has no group {group_id!r}; it has "
                         f"{', '.join(g.id for g in self.groups) or 'none'}")

    def matrix(self) -> dict[str, list[dict[str, str]]]:
        """The GitHub Actions matrix: one job per group."""
        return {"include": [{"group": g.id, "models": ", ".join(g.models),
                             "runs_on": g.runs_on} for g in self.groups]}

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"


def make_plan(registry: Path, catalog: TaskCatalog, *, groups: int | None = None,
              seed: int = 0, bootstrap: int = N_RESAMPLES,
              gpu_runner: str | None = None) -> Plan:
    """Plan the re-evaluation of every live entry: one unit per (model, task), packed
    into ``groups`` groups (default: one per model). Groups split the (model, task)
    order into contiguous runs of nearly equal size, so a model's units stay together."""
    live = entries_with_status(registry, "live")
    by_unit: dict[tuple[str, str], list[Entry]] = {}
    for _, entry in live:
        for task in entry.tasks:
            if task in catalog.specs:
                by_unit.setdefault((entry.model, task), []).append(entry)
    units = [Unit(model=model, task=task, entries=sorted(e.id for e in entries),
                  sites=sorted({f"{e.layer}:{e.position}" for e in entries}))
             for (model, task), entries in sorted(by_unit.items())]
    models = sorted({u.model for u in units})
    if groups is not None and groups < 1:
        raise InputError(f"--groups {groups}: expected at least 1")
    chunks: list[list[Unit]]
    if groups is None:
        chunks = [[u for u in units if u.model == m] for m in models]
    else:
        n = min(groups, len(units))
        bounds = [math.floor(k * len(units) / n) for k in range(n + 1)] if n else [0]
        chunks = [units[bounds[k]:bounds[k + 1]] for k in range(n)]
    runs_on = gpu_runner or CPU_RUNNER
    entries = [e.model_dump(mode="json") for _, e in sorted(live, key=lambda x: x[1].id)]
    return Plan(seed=seed, bootstrap=bootstrap, entries_sha256=sha256_json(entries),
                groups=[Group(id=f"g{k + 1}", models=sorted({u.model for u in chunk}),
                              runs_on=runs_on, units=chunk)
                        for k, chunk in enumerate(chunks)])


def read_plan(path: Path) -> Plan:
    try:
        return Plan.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InputError(f"{path}: cannot read the plan ({exc.strerror})") from None
    except ValidationError as exc:
        raise InputError(f"{path}: not a re-evaluation plan: {field_problem(exc)}") from None


# --- run -------------------------------------------------------------------------------


class GroupResult(BaseModel):
    """What ``reeval run`` writes for one group (``result.json``)."""

    model_config = ConfigDict(extra="forbid")

    plan_sha256: str
    group: str
    changes: list[Change]
    failures: dict[str, str]
    passes: int


@dataclass(frozen=True)
class AuditSet:
    """The items an audit scores for one task, and what they are."""

    items: list[Item]
    #: the public holdout's version (generation 0), or the sealed generation's number
    version: int
    #: the canonical test hash (public) or the commitment (sealed)
    test_sha256: str
    #: the sealed generation scored, None for the public one
    sealed: int | None
    #: a sealed generation skipped for want of the key (None when none was)
    skipped_sealed: int | None = None

    @property
    def cache_name(self) -> str:
        return f"sealed-g{self.sealed}" if self.sealed is not None else \
            f"reeval-v{self.version}"


def audit_set(catalog: TaskCatalog, task_id: str, key: bytes | None) -> AuditSet:
    """The task's current sealed generation, decrypted in memory, when ``key`` is given
    and the task has one; else its public generation 0 (the newest ``holdouts`` entry of
    tasks.yaml, or the registered test set)."""
    gen = current_generation(catalog, task_id)
    if gen is not None and key is not None:
        opened = open_generation(catalog.root_of(task_id), task_id, gen, key)
        return AuditSet(opened.items, gen.generation, gen.commitment, gen.generation)
    public: ReevalSet = catalog.reeval_set(task_id)
    return AuditSet(public.data.test, public.version, public.test_sha256, None,
                    skipped_sealed=gen.generation if gen is not None else None)


def run_group(plan: Plan, group_id: str, registry: Path, repo: Path, *,
              catalog: TaskCatalog, progress: bool = False,
              session: Session | None = None,
              holdout_key: bytes | None = None) -> GroupResult:
    """Re-evaluate one group's units: per unit one forward pass at every site its
    entries read, fanned out to all of them. An entry whose artifact no longer resolves
    or validates is reported in ``failures`` and skipped: one bad entry never stops the
    group. ``holdout_key`` opens the tasks' current sealed generations (in memory)."""
    group = plan.group(group_id)
    session = session or Session(catalog, SubmitOptions(
        seed=plan.seed, bootstrap=plan.bootstrap, progress=progress))
    probes: dict[str, tuple[ProbeWeights, Site] | str] = {}
    sets: dict[str, AuditSet] = {}
    result = GroupResult(plan_sha256=plan.sha256, group=group.id, changes=[], failures={},
                         passes=0)
    before = session.passes
    for unit in group.units:
        ready: list[tuple[str, ProbeWeights, Site]] = []
        for entry_id in unit.entries:
            if entry_id not in probes:
                probes[entry_id] = entry_probe(registry, repo, entry_id, catalog)
            loaded = probes[entry_id]
            if isinstance(loaded, str):
                result.failures[entry_id] = loaded
            else:
                ready.append((entry_id, *loaded))
        if not ready:
            continue
        if unit.task not in sets:
            sets[unit.task] = audit_set(catalog, unit.task, holdout_key)
            if sets[unit.task].skipped_sealed:
                session.say(f"{unit.task}: no holdout key, so its sealed generation "
                            f"{sets[unit.task].skipped_sealed} is skipped; auditing on the "
                            "public generation 0 instead")
        held = sets[unit.task]
        flat = Flat.of(held.items)
        acts = session.activations_at(unit.model, f"{unit.task}/{held.cache_name}",
                                      flat.prompts, sorted({site for _, _, site in ready}),
                                      disk_cache=held.sealed is None)
        for entry_id, weights, site in ready:
            probs = weights.predict_proba(acts[site])[:, 1]
            iv = headline_interval(unit.task, held.items, probs, seed=plan.seed,
                                   n_resamples=plan.bootstrap)
            assert iv.value is not None and iv.ci_low is not None and iv.ci_high is not None
            stored = latest_results(registry, entry_id).get(unit.task)
            result.changes.append(Change(
                entry=entry_id, task=unit.task, version=held.version,
                test_sha256=held.test_sha256, sealed_generation=held.sealed,
                old_auroc=stored.result.auroc.value if stored else None,
                new_auroc=iv.value, ci_low=iv.ci_low, ci_high=iv.ci_high))
    result.passes = session.passes - before
    return result


def write_group_result(out: Path, result: GroupResult) -> Path:
    path = out / RESULT_FILE
    atomic_write_bytes(path, (json.dumps(result.model_dump(mode="json"), indent=1,
                                         sort_keys=True) + "\n").encode("utf-8"))
    return path


def read_group_result(path: Path) -> GroupResult:
    if path.is_dir():
        path = path / RESULT_FILE
    try:
        return GroupResult.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InputError(f"{path}: cannot read a group result ({exc.strerror})") from None
    except ValidationError as exc:
        raise InputError(f"{path}: not a re-evaluation group result: "
                         f"{field_problem(exc)}") from None


# --- merge -----------------------------------------------------------------------------


def merge(plan: Plan, results: Sequence[GroupResult], registry: Path,
          out: Path) -> ReevalChanges:
    """Combine every group's result (each exactly once, all run on ``plan``) into the
    per-entry diffs, DIFF.md, diff.json and the deprecations of the entries' YAML."""
    seen: dict[str, GroupResult] = {}
    for result in results:
        if result.plan_sha256 != plan.sha256:
            raise InputError(f"group {result.group}'s result was run on another plan "
                             f"({result.plan_sha256[:12]}, this plan is {plan.sha256[:12]})")
        if result.group in seen:
            raise InputError(f"group {result.group}'s result is given twice")
        seen[result.group] = result
    missing = [g.id for g in plan.groups if g.id not in seen]
    if missing:
        raise InputError(f"no result for group(s) {', '.join(missing)}; a merge needs every "
                         "group of the plan")
    extra = sorted(set(seen) - {g.id for g in plan.groups})
    if extra:
        raise InputError(f"result(s) for group(s) {', '.join(extra)}, which the plan lacks")
    changes = ReevalChanges(sorted((c for r in results
                                    for c in r.changes), key=lambda c: (c.entry, c.task)))
    for result in results:
        changes.failures.update(result.failures)
        changes.passes += result.passes
    for change in changes:
        _write_diff(out, change)
        if change.action == "deprecate":
            _deprecate(entry_path(registry, change.entry), change)
    _write_public(out, changes)
    return changes


def reeval(registry: Path, repo: Path, out: Path, *, catalog: TaskCatalog,
           seed: int = 0, bootstrap: int = N_RESAMPLES, progress: bool = False,
           session: Session | None = None,
           holdout_key: bytes | None = None) -> ReevalChanges:
    """Plan, run and merge in one process: every live entry scored on the newest
    holdout of each of its tasks, the diffs written. The AUROC and its CI come from the
    same code and seeds as ``submit``'s, so a task without a holdout reproduces the
    stored interval exactly."""
    plan = make_plan(registry, catalog, groups=1, seed=seed, bootstrap=bootstrap)
    session = session or Session(catalog, SubmitOptions(seed=seed, bootstrap=bootstrap,
                                                        progress=progress))
    results = [run_group(plan, g.id, registry, repo, catalog=catalog, session=session,
                         holdout_key=holdout_key)
               for g in plan.groups]
    return merge(plan, results, registry, out)


def _write_diff(out: Path, change: Change) -> None:
    doc = {"entry": change.entry, "task": change.task, "holdout_version": change.version,
           "sealed_generation": change.sealed_generation,
           "test_sha256": change.test_sha256, "old_auroc": change.old_auroc,
           "new_auroc": change.new_auroc, "new_ci": [change.ci_low, change.ci_high],
           "drop_points": round(change.drop_points, 4), "action": change.action}
    path = out / change.entry / f"{change.task}.json"
    atomic_write_bytes(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())


def _deprecate(path: Path, change: Change) -> None:
    data = yaml.safe_load(path.read_text("utf-8"))
    data["status"] = "deprecated"
    data["notice"] = (f"Deprecated by re-evaluation: AUROC on {change.task} "
                      f"{_holdout_name(change)} fell {change.drop_points:.1f} points "
                      f"({change.old_auroc:.3f} -> {change.new_auroc:.3f}).")
    atomic_write_bytes(path, yaml.safe_dump(data, sort_keys=False,
                                            allow_unicode=True).encode("utf-8"))


def _holdout_name(change: Change) -> str:
    return (f"sealed generation {change.sealed_generation}"
            if change.sealed_generation is not None else f"public v{change.version}")


def _write_public(out: Path, changes: ReevalChanges) -> None:
    flagged = [c for c in changes if c.action != "none"]
    lines = ["# Re-evaluation diff", "",
             f"{len(changes)} (entry, task) pairs re-evaluated; drops over {LIST_DROP:.0f} "
             f"AUROC points are listed, over {DEPRECATE_DROP:.0f} deprecate the entry.", ""]
    if flagged:
        lines += ["| entry | task | holdout | old AUROC | new AUROC [95% CI] | drop (points) "
                  "| action |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for c in sorted(flagged, key=lambda c: -c.drop_points):
            lines.append(f"| {c.entry} | {c.task} | {_holdout_name(c)} | {c.old_auroc:.3f} | "
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
