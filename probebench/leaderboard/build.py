"""``probebench leaderboard build``: the static website (plain HTML/CSS/JS, no CDN).

Reads ``registry/probes/**.yaml`` and each entry's latest stored results, scores entries
with a ProbeScore spec and ranks only comparable ones (``ranks``):

* each task page ranks the live entries evaluated on that task by the ProbeScore of
  that task's result alone, with the paired bootstrap restricted to that task;
* each family page (verb grammar, BLiMP, SyntaxGym, a family tasks.yaml declares such
  as truth, or a format of its own: ``TaskSpec.family_key``) splits the family's live
  entries by their exact task set and ranks each group apart; the index shows these
  groups family by family, never one mixed list;
* a family page of a family with several tasks whose tasks declare it (or with stored
  sibling evaluations) shows its generalisation matrix (``generalisation_matrix``): every
  live entry on every task of the family, its own test AUROC on the diagonal and the
  probe read on the sibling tasks elsewhere (``registry.store.latest_generalisation``),
  reported and never ranked: no ProbeScore and no ranking group reads it;
* the "moves the model" column (``columns.moves_the_model``) on the task pages and on
  each entry page (with the dose-response figure) reads the entry's causal record
  (``registry.store.latest_causal_record``, once per entry, only where the file exists);
  reported and never ranked either;
* guards (the entries ``registry/guards.yaml`` names, and any entry evaluated on guard
  tasks only) are listed on their own page and never ranked;
* baselines gate ranks: every result's gap to the best baseline of its task, model and
  site (``gaps``) is shown beside its AUROC, and within each ranking only the entries
  that beat their baselines are ranked; the others follow them, unranked, with the
  reason (``ranks``). A task page flags a task that a surface baseline (length,
  majority) or the random-init one solves (AUROC >= 0.95), naming the surface feature
  where one word position separates the labels (``task_page``).

A task page's baselines are the task's own (``registry/baselines/``), never an entry's,
so they do not change when entries come and go. All links are relative, so the pages
work from ``file://``.

A build runs in four stages, each one function passing plain data to the next:
``select_entries`` (which entries are shown, and as what: ``Selection``) ->
``score_entries`` (gaps to the baselines and ProbeScores: ``Scores``) -> ``rank_entries``
(``Rankings``) -> ``render_site`` (the pages and downloads).

Beside the pages: ``leaderboard.json``, ``leaderboard.csv`` and their schema
(``downloads``), and the files the pages link (``files``: stored once, in the registry
mirror's blob store, or linked under a source URL). The index writes the top rows of each
table and lists every entry in ``entries.js`` (paged and filtered by ``static/app.js``);
an entry page whose inputs are unchanged is reused from the previous build
(``incremental``). Column headers and their tooltips come from ``columns``,
submitters' text is made safe by ``markdown``, the figures are drawn by ``charts``.
Every value a page writes passes through ``shown`` (the templates' ``finalize``): a
control or bidi character of an entry, a task or a result appears as a visible escape
(``probebench.safetext``), never raw.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from markupsafe import Markup

from probebench.errors import InputError
from probebench.evaluation.baselines import BASELINES
from probebench.evaluation.definitions import (
    DISTSHIFT_IMPUTE,
    EVALAWARE_IMPUTE,
    MAPPED_TRANSFER_IMPUTE,
    TRANSFER_IMPUTE,
)
from probebench.evaluation.generalisation import declared_families, family_tasks
from probebench.evaluation.results import (
    CausalOut,
    FlaggedOut,
    IntervalOut,
    PromptScores,
    TaskResult,
    TransferOut,
)
from probebench.hashing import sha256_bytes
from probebench.leaderboard.charts import (
    bars_svg,
    reliability_svg,
    roc_svg,
    scores_svg,
    sweep_svg,
)
from probebench.leaderboard.columns import columns, moves_the_model
from probebench.leaderboard.downloads import (
    AxisScore,
    EntryScore,
    GeneralisationCell,
    GeneralisationMatrix,
    GeneralisationRow,
    Leaderboard,
    RankedRow,
    Ranking,
    ResultRow,
    TransferTarget,
    causal_fields,
    leaderboard_csv,
    leaderboard_schema,
    write_leaderboard_json,
)
from probebench.leaderboard.entry_page import (
    baseline_key,
    baselines_beside,
    causal_view,
    history_by_task,
    linked_files,
    predictions_note,
    reproduce_commands,
    transfer_view,
)
from probebench.leaderboard.files import FileLink, LeaderboardFiles
from probebench.leaderboard.gaps import METHODS, Gap, entry_beats, result_gap, worst_gap
from probebench.leaderboard.holdouts import entry_holdout, holdout_context, task_holdouts
from probebench.leaderboard.incremental import PageCache, code_digest, file_digest, value_digest
from probebench.leaderboard.markdown import (
    breakable,
    inline_markdown,
    plain_markdown,
    safe_url,
)
from probebench.leaderboard.mirror import write_mirror
from probebench.leaderboard.probescore import (
    AXES,
    CLOSED_LICENSE_CEILING,
    DEFAULT_SPEC,
    FEW_ITEMS,
    MIN_ITEMS_PER_CLASS,
    SELECTIVITY_READING,
    UNMEASURED,
    AxisValue,
    ProbeScoreSpec,
    ScoreBreakdown,
    axis_values,
    fewest_items_per_class,
    license_score,
    load_probescore_spec,
    probescore,
    selectivity_judgment,
    transfer_judgment,
    transfer_reason,
)
from probebench.leaderboard.ranks import (
    PROBESCORE,
    RANK_RESAMPLES,
    RankedGroup,
    RankInterval,
    Scored,
    comparable_groups,
    family_name,
    family_of,
    family_sort_key,
    rank_group,
    score_intervals,
)
from probebench.leaderboard.recall import (
    declares_control,
    recall_cell,
    recall_fields,
    recall_sort_value,
    recall_view,
)
from probebench.leaderboard.swap import building_path, hold_lock, restore_previous, swap_in
from probebench.leaderboard.task_page import surface_flag, task_data
from probebench.registry.baselines import FOLDER as BASELINES_FOLDER
from probebench.registry.baselines import BaselineRecord, task_baselines
from probebench.registry.entry import Entry, entry_files, entry_path, read_entry
from probebench.registry.guards import guard_ids
from probebench.registry.store import (
    CausalRecord,
    GeneralisationRecord,
    ResultRecord,
    causal_path,
    latest_causal_record,
    latest_generalisation,
    latest_results,
    result_path,
)
from probebench.safetext import visible
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import get_format
from probebench.tasks.sealed import generations
from probebench.tasks.spec import TaskSpec
from probebench.train.sweep import read_sweep
from probebench.version import __version__

HERE = Path(__file__).parent
#: rows of each table the index writes as HTML (the best ones); every entry is in
#: ``entries.js``, which the index's entry list pages through and filters
INDEX_ROWS = 50


@dataclass(frozen=True)
class RankedEntry:
    """One line of a group's ranking (live entries only), best first; rank, best and
    worst are None for an entry that does not beat its baselines (listed after)."""

    rank: int | None
    best: int | None
    worst: int | None
    entry_id: str
    probescore: float
    auroc: float
    model: str
    #: why the entry is unranked ("" when ranked)
    unranked: str = ""


@dataclass(frozen=True)
class RankedTable:
    """The ranking of one group: the live entries of ``family`` evaluated on exactly
    ``tasks``."""

    family: str
    tasks: tuple[str, ...]
    entries: tuple[RankedEntry, ...]

    @property
    def title(self) -> str:
        return f"{family_name(self.family)}, task set {{{', '.join(self.tasks)}}}"


@dataclass
class BuildSummary:
    out: Path
    entries: int
    skipped: list[str]
    #: one ranking per (family, task set) group; entries are never ranked across groups
    ranking: list[RankedTable] = field(default_factory=list)
    #: guard entry ids (listed on guards.html, never ranked)
    guards: list[str] = field(default_factory=list)
    #: one warning line per point value outside its interval (``ranks.outside``)
    outside: list[str] = field(default_factory=list)
    #: entry pages rendered by this build, and reused unchanged from the previous one
    rendered: int = 0
    reused: int = 0

    def ranked_ids(self) -> list[str]:
        return [r.entry_id for table in self.ranking for r in table.entries]

    def top_table(self, n: int = 5) -> str:
        """The ``n`` best entries of each group, one small table per group."""
        blocks = []
        for table in self.ranking:
            shown = table.entries[:n] if n > 0 else table.entries
            n_ranked = sum(r.rank is not None for r in table.entries)
            lines = [f"{table.title}: {n_ranked} ranked"
                     + (f", {len(table.entries) - n_ranked} not beating their baselines "
                        "(unranked)" if n_ranked < len(table.entries) else ""),
                     f"{'rank':>4}  {'interval':<9}  {'ProbeScore':>10}  {'AUROC':>5}  "
                     f"{'model':<13} entry"]
            for r in shown:
                rank = "—" if r.rank is None else str(r.rank)
                interval = "unranked" if r.rank is None else f"[{r.best}, {r.worst}]"
                lines.append(f"{rank:>4}  {interval:<9}  {r.probescore:>10.3f}  "
                             f"{r.auroc:>5.3f}  {r.model:<13} {r.entry_id}")
                if r.unranked:
                    lines.append(f"{'':>6}not ranked: {r.unranked}")
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)


def _iv(x: IntervalOut | FlaggedOut | None) -> str:
    if x is None or x.value is None:
        return "n/a"
    text = f"{x.value:.3f}"
    if x.ci_low is not None and x.ci_high is not None:
        text += f" [{x.ci_low:.3f}, {x.ci_high:.3f}]"
    if isinstance(x, FlaggedOut) and x.imputed:
        text += " (imputed)"
    return text


def _marks(t: TaskResult) -> str:
    return ", ".join(f"{k} {m.mark}" for k, m in sorted(t.marks.items()))


def _gflops(t: TaskResult) -> str:
    return "n/a" if t.cost is None else f"{t.cost.flops_per_prompt / 1e9:.3f}"


def page_name(entry_id: str) -> str:
    return "entries/" + entry_id.replace("/", "__") + ".html"


def family_page(family: str) -> str:
    return "families/" + re.sub(r"[^A-Za-z0-9._-]+", "_", family) + ".html"


def guard_entries(registry: Path, entries: Sequence[Entry]) -> dict[str, str]:
    """entry id -> what makes it a guard, for every guard among ``entries``: the entries
    ``registry/guards.yaml`` names, and any entry whose tasks are all guard tasks (the
    tasks those named guards are evaluated on). A deprecated entry is no guard: it is in
    the archive, like every deprecated entry (a re-trained guard's old version)."""
    named = {entry_id: model for model, entry_id in guard_ids(registry).items()}
    guard_tasks = {t for e in entries if e.id in named for t in e.tasks}
    out = {}
    for e in entries:
        if e.status == "deprecated":
            continue
        if e.id in named:
            out[e.id] = f"the guard of {named[e.id]} (registry/guards.yaml)"
        elif guard_tasks and set(e.tasks) <= guard_tasks:
            out[e.id] = f"evaluated on guard tasks only ({', '.join(sorted(e.tasks))})"
    return out


def build_leaderboard(registry: Path, out: Path, *, catalog: TaskCatalog,
                      spec_version: str = DEFAULT_SPEC, n_resamples: int = RANK_RESAMPLES,
                      seed: int = 0, source_url: str | None = None,
                      index_rows: int | None = None) -> BuildSummary:
    """Render the whole leaderboard for ``registry`` into ``out`` (replaced atomically); task
    pages describe the tasks of ``catalog``, whose formats name the families. The files
    pages link (artifact files, notebooks, stored results) are copied into the
    leaderboard, or linked under ``source_url`` (the repository at the commit built;
    ``files``). ``index_rows``: the rows of each table the index writes as HTML (default
    ``INDEX_ROWS``); its entry list pages through all of them that many at a time.

    Builds into one folder take turns (a lock file beside ``out``): a second build
    waits, then replaces the first one's result whole; a killed build leaves the old
    leaderboard or the new one whole (``leaderboard.swap``)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with hold_lock(out):
        restore_previous(out)  # a build killed between its renames left the old site there
        return _build(registry, out, catalog=catalog, spec_version=spec_version,
                      n_resamples=n_resamples, seed=seed, source_url=source_url,
                      index_rows=INDEX_ROWS if index_rows is None else index_rows)


@dataclass(frozen=True)
class BuildOptions:
    """What a build was asked for (``build_leaderboard``'s arguments, the spec loaded)."""

    registry: Path
    catalog: TaskCatalog
    spec: ProbeScoreSpec
    n_resamples: int
    seed: int
    source_url: str | None
    #: rows of each table the index writes as HTML, and of each page of its entry list
    index_rows: int = 50


@dataclass(frozen=True)
class Selection:
    """Which entries the site shows, and in which role (``select_entries``)."""

    every: list[Entry]                            #: every entry of the registry
    #: the entries shown: those with stored results of their current artifact
    entries: list[Entry]
    results: dict[str, dict[str, ResultRecord]]   #: entry id -> task -> latest record
    skipped: list[str]                            #: the entries not shown, with why
    guards: dict[str, str]                        #: guard entry id -> what makes it one
    live: list[Entry]                             #: the live task probes: the ranked
    pending: list[Entry]                          #: awaiting review, by id
    archived: list[Entry]                         #: deprecated, by id
    task_ids: list[str]                           #: every task with results or baselines
    formats: dict[str, str]                       #: task id -> its format
    #: task id -> its family (``TaskSpec.family_key``: declared, else its format)
    families: dict[str, str] = field(default_factory=dict)
    #: entry id -> its generalisation record, where one is of its current artifact
    generalisation: dict[str, GeneralisationRecord] = field(default_factory=dict)
    #: entry id -> its causal record (``submit --causal``), where one is of its current
    #: artifact
    causal: dict[str, CausalRecord] = field(default_factory=dict)

    @cached_property
    def by_id(self) -> dict[str, Entry]:
        return {e.id: e for e in self.entries}

    def family(self, entry_id: str) -> str:
        """The family of an entry's task set."""
        return family_of(self.families[t] for t in self.results[entry_id])


@dataclass(frozen=True)
class Scores:
    """The shown entries' gaps to their baselines and ProbeScores (``score_entries``)."""

    gaps: dict[str, dict[str, Gap]]            #: entry id -> task -> gap to the baselines
    scored: dict[str, Scored]                  #: entry id -> scored on all its tasks
    breakdowns: dict[str, ScoreBreakdown]      #: entry id -> ProbeScore on all its tasks
    #: the mean AUROC over an entry's tasks, by axis source (a spec may call it anything)
    mean_auroc: dict[str, float]
    #: task id -> the live entries on it, each scored on that task's result alone
    on_task: dict[str, list[Scored]]


@dataclass(frozen=True)
class Rankings:
    """The rankings of the live entries (``rank_entries``)."""

    groups: list[RankedGroup]                  #: one per exact task set
    task_groups: dict[str, RankedGroup]        #: task id -> the ranking on it alone
    #: entry id -> its ProbeScore's and axes' intervals over all its tasks, for every
    #: shown entry: a live one's from its task-set group, the others' scored apart
    entries: dict[str, RankInterval] = field(default_factory=dict)

    def group_of(self, entry_id: str) -> RankedGroup | None:
        return next((g for g in self.groups if entry_id in g.order), None)

    def n_on_task(self, task_id: str) -> tuple[int, int]:
        """(entries, ranked entries) of the ranking on ``task_id`` alone: a page that
        counts only one of them contradicts a group heading that counts both."""
        group = self.task_groups.get(task_id)
        return (0, 0) if group is None else (len(group.order), len(group.ranked))


def _build(registry: Path, out: Path, *, catalog: TaskCatalog, spec_version: str,
           n_resamples: int, seed: int, source_url: str | None,
           index_rows: int) -> BuildSummary:
    """select -> score -> rank -> render, then the built folder replaces ``out``."""
    if source_url is not None and safe_url(source_url) is None:
        raise InputError(f"source URL {source_url!r}: expected an http(s) URL of the "
                         "repository's files, e.g. https://github.com/OWNER/REPO/blob/COMMIT")
    if index_rows < 1:
        raise InputError(f"index rows {index_rows}: expected at least 1 row per table")
    opts = BuildOptions(registry, catalog, load_probescore_spec(spec_version), n_resamples,
                        seed, source_url, index_rows)
    selection = select_entries(registry, catalog)
    scores = score_entries(registry, selection, opts.spec)
    rankings = rank_entries(selection, scores, opts.spec, n_resamples=n_resamples, seed=seed)

    building = building_path(out)
    left_out, cache = render_site(building, opts, selection, scores, rankings, previous=out)
    swap_in(building, out)  # out is the old leaderboard or the new one at every moment
    summary = _summary(out, selection, scores, rankings, selection.skipped + left_out)
    summary.rendered, summary.reused = len(cache.rendered), len(cache.reused)
    return summary


# --- select ---------------------------------------------------------------------------

def select_entries(registry: Path, catalog: TaskCatalog) -> Selection:
    """The entries the site shows (those with stored results of their current artifact;
    the others are skipped, with why) and their roles: live task probes (ranked), pending
    review, deprecated (archived), guards (never ranked); the tasks and their formats."""
    every = [read_entry(path) for path in entry_files(registry)]
    entries, results, skipped = _with_current_results(registry, every)
    # guard tasks come from every guard entry, shown or not: a guard whose results await
    # a new publish still makes an entry on its tasks alone a guard
    shown = {e.id for e in entries}
    guards = {i: why for i, why in guard_entries(registry, every).items() if i in shown}
    # only live task probes are ranked: pending ones await review, deprecated ones are
    # archived, guards are never compared with task probes
    live = [e for e in entries if e.status == "live" and e.id not in guards]
    pending = sorted((e for e in entries if e.status == "pending_review"
                      and e.id not in guards), key=lambda e: e.id)
    archived = sorted((e for e in every if e.status == "deprecated"), key=lambda e: e.id)
    baseline_tasks = {p.name for p in (registry / BASELINES_FOLDER).glob("*") if p.is_dir()}
    task_ids = sorted({t for r in results.values() for t in r} | baseline_tasks)
    formats = {t: _task_format(catalog, results, t) for t in task_ids}
    families = {t: _task_family(catalog, formats, t) for t in task_ids}
    # the sibling evaluations of the artifact shown (an older artifact's are not its)
    generalisation = {e.id: record for e in entries
                      if (record := latest_generalisation(registry, e.id)) is not None
                      and record.probe.bundle_sha256 == e.artifact_sha256}
    # the causal tests of the artifact shown: one stat per entry, a read where one exists
    causal = {e.id: tested for e in entries
              if (tested := latest_causal_record(registry, e.id)) is not None
              and tested.probe.bundle_sha256 == e.artifact_sha256}
    return Selection(every, entries, results, skipped, guards, live, pending, archived,
                     task_ids, formats, families, generalisation, causal)


def causal_of(sel: Selection, entry_id: str, task_id: str) -> tuple[CausalOut | None, str]:
    """The entry's stored causal test on ``task_id``, or None and why there is none to
    show (none stored for its current artifact, the task not covered, or measured on
    another test set than its result's)."""
    record = sel.causal.get(entry_id)
    if record is None:
        return None, "no causal test stored for the entry's current artifact"
    out = record.causal.get(task_id)
    if out is None:
        return None, "the stored causal test does not cover this task"
    if record.test_sha256.get(task_id) != sel.results[entry_id][task_id].result.test_sha256:
        return None, "the stored causal test was made on another test set"
    return out, ""


def _with_current_results(registry: Path, every: Sequence[Entry]
                          ) -> tuple[list[Entry], dict[str, dict[str, ResultRecord]], list[str]]:
    """The entries whose latest stored results (on their own tasks) are of their current
    artifact, those results, and why each other entry is skipped."""
    entries: list[Entry] = []
    results: dict[str, dict[str, ResultRecord]] = {}
    skipped = []
    shared: dict[tuple[str, tuple[Any, ...]], list[Any]] = {}
    for entry in every:
        stored = {t: r for t, r in latest_results(registry, entry.id).items()
                  if t in entry.tasks}
        if not stored:
            skipped.append(f"{entry.id}: no stored results")
            continue
        stale = sorted(t for t, r in stored.items()
                       if r.probe.bundle_sha256 != entry.artifact_sha256)
        if stale:  # results of another artifact: the entry changed and awaits publish
            skipped.append(f"{entry.id}: stored results on {', '.join(stale)} are for "
                           f"bundle {stored[stale[0]].probe.bundle_sha256[:12]}, not the "
                           f"entry's artifact {entry.artifact_sha256[:12]}")
            continue
        for record in stored.values():
            _share_lists(record.result.predictions, shared)
        entries.append(entry)
        results[entry.id] = stored
    return entries, results, skipped


def _share_lists(pred: PromptScores,
                 shared: dict[tuple[str, tuple[Any, ...]], list[Any]]) -> None:
    """Point ``pred``'s prompt ids, items and labels at an equal list already held
    (every entry on a task holds the same ones): a build holds every shown entry's
    latest results, and without this each held its own copies (a third of the build's
    memory at 10,000 entries). Equal values only: nothing read from them changes."""
    for name in ("prompt_ids", "items", "labels"):
        values = getattr(pred, name)
        held = shared.setdefault((name, tuple(values)), values)
        if held is not values:
            setattr(pred, name, held)


def _task_format(catalog: TaskCatalog, results: Mapping[str, Mapping[str, ResultRecord]],
                 task_id: str) -> str:
    task_spec = catalog.specs.get(task_id)
    if task_spec is not None:
        return task_spec.format
    # a task this catalog does not register: the format its stored results name
    return next(r[task_id].result.format for r in results.values() if task_id in r)


def _task_family(catalog: TaskCatalog, formats: Mapping[str, str], task_id: str) -> str:
    """The task's family: the catalog's ``family_key``; a task this catalog does not
    register: its format."""
    task_spec = catalog.specs.get(task_id)
    return task_spec.family_key if task_spec is not None else formats[task_id]


# --- score ----------------------------------------------------------------------------

def score_entries(registry: Path, selection: Selection, spec: ProbeScoreSpec) -> Scores:
    """Every shown entry's gap to its baselines on each task, its axis values and its
    ProbeScore over all its tasks, and each live entry scored on each of its tasks alone
    (what a task's own ranking compares)."""
    gaps = _gaps(registry, selection.results)
    scored = {e.id: _scored(e, selection.results[e.id], gaps[e.id])
              for e in selection.entries}
    on_task: dict[str, list[Scored]] = {}
    for task_id in selection.task_ids:
        on_task[task_id] = [_scored(e, {task_id: selection.results[e.id][task_id]},
                                    gaps[e.id])
                            for e in selection.live if task_id in selection.results[e.id]]
    breakdowns = {i: probescore(spec, s.values, closed_license=s.closed)
                  for i, s in scored.items()}
    mean_auroc = {i: s.values["auroc"].value for i, s in scored.items()}
    return Scores(gaps, scored, breakdowns, mean_auroc, on_task)


# --- rank -----------------------------------------------------------------------------

def rank_entries(selection: Selection, scores: Scores, spec: ProbeScoreSpec, *,
                 n_resamples: int, seed: int) -> Rankings:
    """The live entries ranked by exact task set (``ranks.comparable_groups``), and on
    each task alone; the baselines gate both (``ranks``)."""
    groups = comparable_groups([scores.scored[e.id] for e in selection.live], spec,
                               family=selection.families.__getitem__,
                               n_resamples=n_resamples, seed=seed)
    task_groups = {task_id: rank_group(on_task, spec, family=selection.families[task_id],
                                       n_resamples=n_resamples, seed=seed)
                   for task_id, on_task in scores.on_task.items() if on_task}
    intervals = {i: g.ranks[i] for g in groups for i in g.order}
    intervals.update(score_intervals(
        [scores.scored[e.id] for e in selection.entries if e.id not in intervals], spec,
        n_resamples=n_resamples, seed=seed))
    return Rankings(groups, task_groups, intervals)


# --- render ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Site:
    """What every page writer reads: the build's stages, the templates, the folder."""

    folder: Path
    opts: BuildOptions
    sel: Selection
    scores: Scores
    ranks: Rankings
    env: Any                                   #: the jinja2 Environment
    common: dict[str, Any]                     #: what every template reads
    files: LeaderboardFiles
    families: list[str]                        #: the families shown, in page order
    filters: dict[str, Any]                    #: the index's and family pages' filters
    cache: PageCache                           #: the entry pages an earlier build made

    def write(self, page: str, template: str, **context: Any) -> None:
        html = self.env.get_template(template).render(**self.common, **context)
        (self.folder / page).write_text(html, encoding="utf-8")


def render_site(folder: Path, opts: BuildOptions, selection: Selection, scores: Scores,
                rankings: Rankings, *, previous: Path | None = None
                ) -> tuple[list[str], PageCache]:
    """Write every page and download of the site into ``folder`` (made afresh), and the
    registry mirror; returns what the mirror left out, with why, and which entry pages
    were rendered or reused from the leaderboard at ``previous`` (``incremental``)."""
    site = _open_site(folder, opts, selection, scores, rankings, previous)
    sections = _sections(site)
    _write_index(site, sections)
    _write_family_pages(site, sections)
    _write_guards_and_archive(site)
    _write_entry_pages(site)
    _write_rank_scripts(site)
    _write_task_pages(site)
    _write_tasks_index(site)
    _write_methodology(site)
    _write_downloads(site)
    _, left_out = write_mirror(folder, opts.registry, selection.every, catalog=opts.catalog,
                               spec_version=opts.spec.version)
    site.cache.write()
    return left_out, site.cache


def shown(value: Any) -> Any:
    """What every ``{{ ... }}`` of a page writes (the environment's ``finalize``, before
    autoescape): text, markup included (a rendered README, an SVG figure), with control
    and bidi characters made visible (``safetext.visible``), so a stranger's ``U+202E``
    or ``ESC`` reaches no page raw; numbers and None as they are."""
    if value is None or isinstance(value, int | float):
        return value
    if hasattr(value, "__html__"):  # markup: its escapes are text, and stay markup
        return Markup(visible(str(value.__html__()), lines=True))
    return visible(str(value), lines=True)


def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(loader=FileSystemLoader(HERE / "templates"), undefined=StrictUndefined,
                      autoescape=select_autoescape(["html", "j2"]), finalize=shown)
    env.filters["inline_md"] = inline_markdown
    env.filters["plain_md"] = plain_markdown
    env.filters["wbr"] = breakable
    env.globals.update(selectivity_reading=SELECTIVITY_READING, few_items=FEW_ITEMS,
                       min_items=MIN_ITEMS_PER_CLASS)
    return env


def _open_site(folder: Path, opts: BuildOptions, sel: Selection, scores: Scores,
               ranks: Rankings, previous: Path | None = None) -> _Site:
    """The site's shared context, in a fresh ``folder`` holding the static files."""
    families = _families_shown(sel, ranks)
    env = _environment()
    common = {"spec": opts.spec, "version": __version__, "cols": columns(opts.spec),
              "nav_families": [(f, family_name(f), family_page(f)) for f in families]}
    if folder.exists():  # left by a build that was killed (we hold the lock)
        shutil.rmtree(folder)
    for sub in ("entries", "tasks", "families"):
        (folder / sub).mkdir(parents=True)
    shutil.copytree(HERE / "static", folder / "static")
    files = LeaderboardFiles(folder, opts.registry.parent, opts.source_url)
    listed = sel.live + sel.pending + [sel.by_id[i] for i in sorted(sel.guards)]
    salt = value_digest(__version__, code_digest(HERE), opts.spec, opts.source_url,
                        common["nav_families"])
    cache = PageCache(previous if previous is not None and previous.is_dir() else None,
                      folder, salt or "")
    return _Site(folder, opts, sel, scores, ranks, env, common, files, families,
                 _filters(listed, sel.results, sel.guards, sel.families), cache)


def _sections(site: _Site) -> list[dict[str, Any]]:
    """One section per family: its ranked groups, their chart, its pending entries."""
    sel, scores = site.sel, site.scores
    group_views = [_group_view(g, sel.by_id, scores.breakdowns, scores.mean_auroc,
                               sel.results, scores.gaps, site.opts.spec)
                   for g in site.ranks.groups]
    sections: list[dict[str, Any]] = []
    for family in site.families:
        family_groups = [v for v in group_views if v["family"] == family]
        matrix = generalisation_matrix(family, site.opts.catalog, sel)
        sections.append({
            "key": family, "name": family_name(family), "href": family_page(family),
            "groups": family_groups, "chart": _scores_chart(family_groups, family_name(family)),
            "pending": [(e, page_name(e.id)) for e in sel.pending
                        if sel.family(e.id) == family],
            "matrix": None if matrix is None else _matrix_view(matrix, sel)})
    return sections


def generalisation_matrix(family: str, catalog: TaskCatalog,
                          sel: Selection) -> GeneralisationMatrix | None:
    """``family``'s generalisation matrix: every live entry with a result on a task of
    the family, on every task of it (its own results on the diagonal, its stored sibling
    evaluations elsewhere), rows grouped by the tasks trained on. None for a family with
    one task, and for one whose tasks neither declare it (a format grouping separate
    phenomena) nor have a stored sibling evaluation. Reads nothing that ranks."""
    tasks = family_tasks(catalog, family)
    tasks += [t for t in sel.task_ids if sel.families[t] == family and t not in tasks]
    if len(tasks) < 2:
        return None
    column = {t: i for i, t in enumerate(tasks)}
    members = [e for e in sel.live if any(t in column for t in sel.results[e.id])]
    if family not in declared_families(catalog) and not any(
            t in column for e in members if e.id in sel.generalisation
            for t in sel.generalisation[e.id].generalisation.siblings):
        return None
    rows = []
    for e in members:
        trained = [t for t in tasks if t in sel.results[e.id]]
        cells = {}
        for t in trained:
            own = sel.results[e.id][t].result
            cells[t] = GeneralisationCell(own=True, auroc=own.auroc.value,
                                          auroc_ci_low=own.auroc.ci_low,
                                          auroc_ci_high=own.auroc.ci_high,
                                          n_items=own.n_items, note=None)
        record = sel.generalisation.get(e.id)
        siblings = record.generalisation.siblings if record is not None else {}
        for t, sib in siblings.items():
            if t not in column or t in cells:
                continue
            registered = catalog.specs[t].test_sha256 if t in catalog.specs else None
            if registered is not None and sib.test_sha256 != registered:
                cells[t] = GeneralisationCell(
                    own=False, auroc=None, auroc_ci_low=None, auroc_ci_high=None,
                    n_items=sib.n, note=f"measured on test set {sib.test_sha256[:12]}, "
                    f"not the registered {registered[:12]}: evaluate the entry again")
                continue
            cells[t] = GeneralisationCell(own=False, auroc=sib.auroc, auroc_ci_low=sib.ci[0],
                                          auroc_ci_high=sib.ci[1], n_items=sib.n,
                                          note=sib.note)
        rows.append(GeneralisationRow(entry_id=e.id, trained_on=trained,
                                      cells={t: cells[t] for t in tasks if t in cells}))
    rows.sort(key=lambda r: ([column[t] for t in r.trained_on], r.entry_id))
    return GeneralisationMatrix(family=family, tasks=tasks, rows=rows)


def _matrix_view(matrix: GeneralisationMatrix, sel: Selection) -> dict[str, Any]:
    """What a family page shows of its matrix: groups of rows by the tasks trained on,
    one cell per task (None: not measured)."""
    groups: list[dict[str, Any]] = []
    for row in matrix.rows:
        if not groups or groups[-1]["trained"] != row.trained_on:
            groups.append({"trained": row.trained_on, "rows": []})
        e = sel.by_id[row.entry_id]
        groups[-1]["rows"].append({
            "id": e.id, "href": page_name(e.id), "short_name": e.short_name,
            "site": f"{e.layer}:{e.position}",
            "cells": [row.cells.get(t) for t in matrix.tasks]})
    return {"tasks": matrix.tasks, "groups": groups}


def _unranked_row(site: _Site, e: Entry, status: str) -> dict[str, Any]:
    return _entry_row(e, site.sel.results[e.id], site.scores.breakdowns[e.id],
                      site.sel.family(e.id), status, site.scores.gaps[e.id])


#: the index's data file: a script, not JSON, so that it loads from file:// too
ENTRIES_JS = "entries.js"


def _write_index(site: _Site, sections: list[dict[str, Any]]) -> None:
    """index.html with the top ``INDEX_ROWS`` rows of each table, and ``entries.js``: every
    listed entry, compact, for the index's paged and filtered entry list."""
    sel, rows = site.sel, site.opts.index_rows
    shown = []
    for section in sections:
        groups = [dict(g, rows=g["rows"][:rows]) for g in section["groups"]]
        shown.append(dict(section, groups=groups,
                          chart=_scores_chart(groups, section["name"])))
    guards = [(_unranked_row(site, sel.by_id[i], "guard"), why)
              for i, why in sorted(sel.guards.items())]
    pending = [_unranked_row(site, e, e.status) for e in sel.pending]
    site.write(
        "index.html", "index.html.j2", root="", title="Leaderboard", sections=shown,
        n_resamples=site.opts.n_resamples, n_live=len({e.id for e in sel.live}),
        filters=site.filters, guards=guards[:rows], n_guards=len(guards),
        pending=pending[:rows], n_pending=len(pending), index_rows=rows,
        entries_js=ENTRIES_JS, n_listed=len(sel.live) + len(pending) + len(guards),
        n_archived=len(sel.archived))
    (site.folder / ENTRIES_JS).write_text(_entries_js(sections, pending, guards, rows),
                                          encoding="utf-8")


#: the columns of ``entries.js``'s rows
ENTRY_FIELDS = ("id", "short_name", "href", "family", "tasks", "model", "status", "category",
                "probescore", "auroc", "rank", "beats")


def _entries_js(sections: list[dict[str, Any]], pending: list[dict[str, Any]],
                guards: list[tuple[dict[str, Any], str]], page_rows: int) -> str:
    """``entries.js``: one row per listed entry (ranked tables in their order, then those
    awaiting review, then guards), as arrays under ``ENTRY_FIELDS``."""
    rows = [r for s in sections for g in s["groups"] for r in g["rows"]]
    rows += pending + [r for r, _ in guards]
    return _entries_script([_list_row(r) for r in rows], page_rows,
                           "every entry the index lists")


def _list_row(r: Mapping[str, Any]) -> list[Any]:
    """An entry list's row (``ENTRY_FIELDS``) from a table row (``_entry_row``)."""
    rank = "" if r.get("rank") is None else f"{r['rank']} [{r['best']}, {r['worst']}]"
    return [r["id"], r["short_name"], r["href"], family_name(r["family"]), " ".join(r["tasks"]),
            r["model"], r["status"], r["category"], round(r["score"], 3), round(r["auroc"], 3),
            rank, r["gap"]["mark"]]


#: a text column of an entry list with at most this many values is written as codes
CODED_VALUES = 32


def _entries_script(rows: list[list[Any]], page_rows: int, what: str) -> str:
    """A page's entry-list data: a script, not JSON, so that it loads from file:// too.

    Trimmed (a task page of 10,000 entries lists most of them): a column equal on every
    row is given once, under ``same``, not in each row; ``href`` is left out where every
    row's is its entry's page (``page_name``), which app.js makes from the id. ``fields``
    names the columns the rows hold, in order."""
    fields = list(ENTRY_FIELDS)
    drop: dict[str, Any] = {}
    if len(rows) >= 2:
        drop = {f: rows[0][k] for k, f in enumerate(fields)
                if all(type(r[k]) is type(rows[0][k]) and r[k] == rows[0][k] for r in rows)}
    same = {f: v for f, v in drop.items() if f != "id"}
    href, ident = fields.index("href"), fields.index("id")
    own_pages = bool(rows) and all(r[href] == page_name(r[ident]) for r in rows)
    if own_pages:
        same.pop("href", None)
    keep = [k for k, f in enumerate(fields)
            if f == "id" or (f not in same and not (f == "href" and own_pages))]
    # a text column of few values (status, category, the gap's mark) is given as an
    # index into ``codes[field]``, each value once (app.js reads it back)
    codes: dict[str, list[str]] = {}
    for k in keep:
        values = {r[k] for r in rows}
        if fields[k] not in ("id", "short_name", "href") and 1 < len(values) <= CODED_VALUES \
                and all(type(v) is str for v in values):
            codes[fields[k]] = sorted(values)
    index = {f: {v: i for i, v in enumerate(vs)} for f, vs in codes.items()}
    data = {"fields": [fields[k] for k in keep], "same": same, "page_rows": page_rows,
            "codes": codes,
            "rows": [[index[fields[k]][r[k]] if fields[k] in index else r[k] for k in keep]
                     for r in rows]}
    # ensure_ascii: no U+2028 or other character a script would read otherwise than JSON
    return (f"// {what} (probebench leaderboard build); read by app.js\n"
            "window.PROBEBENCH_ENTRIES = " + json.dumps(data, ensure_ascii=True,
                                                        separators=(",", ":")) + ";\n")


def data_script(page: str) -> str:
    """The entry-list data of a family or task page: ``families/x.html`` ->
    ``families/x.data.js``."""
    return page.removesuffix(".html") + ".data.js"


def _write_family_pages(site: _Site, sections: list[dict[str, Any]]) -> None:
    """One page per family: the top ``index_rows`` rows of each table (and of its recall
    table, generalisation matrix and pending list), every entry of the family in its
    data script (``data_script``), paged by app.js."""
    rows, sel = site.opts.index_rows, site.sel
    for section in sections:
        tasks = sorted({t for g in section["groups"] for t in g["tasks"]}
                       | {t for e, _ in section["pending"] for t in sel.results[e.id]})
        listed = [r for g in section["groups"] for r in g["rows"]]
        listed += [_unranked_row(site, e, e.status) for e, _ in section["pending"]]
        data_js = data_script(section["href"])
        (site.folder / data_js).write_text(
            _entries_script([_list_row(r) for r in listed], rows,
                            f"every entry of the family {section['name']}"),
            encoding="utf-8")
        shown = dict(section, groups=[dict(g, rows=g["rows"][:rows])
                                      for g in section["groups"]])
        shown["chart"] = _scores_chart(shown["groups"], section["name"])
        if section["matrix"] is not None:
            shown["matrix"] = _truncated_matrix(section["matrix"], rows)
        recall = _family_recall(site, tasks)
        site.write(section["href"], "family.html.j2", root="../", title=section["name"],
                   section=shown, n_resamples=site.opts.n_resamples, filters=site.filters,
                   tasks=[(t, *site.ranks.n_on_task(t)) for t in tasks],
                   recall=recall[:rows], n_recall=len(recall), index_rows=rows,
                   n_listed=len(listed), data_js=data_js.rpartition("/")[2],
                   pending=section["pending"][:rows])


def _truncated_matrix(matrix: dict[str, Any], rows: int) -> dict[str, Any]:
    """A matrix view (``_matrix_view``) with its first ``rows`` entries."""
    groups, left = [], rows
    for g in matrix["groups"]:
        if left <= 0:
            break
        groups.append(dict(g, rows=g["rows"][:left]))
        left -= len(groups[-1]["rows"])
    n_rows = sum(len(g["rows"]) for g in matrix["groups"])
    return dict(matrix, groups=groups, n_rows=n_rows, n_shown=min(rows, n_rows))


def _family_recall(site: _Site, tasks: Sequence[str]) -> list[dict[str, Any]]:
    """The family page's recall table: every live entry's recall at 1% false positives on
    each of the family's tasks that declares a control set (reported, not ranked)."""
    rows = []
    for task_id in tasks:
        if not declares_control(site.opts.catalog.specs.get(task_id)):
            continue
        for e in site.sel.entries:
            record = site.sel.results[e.id].get(task_id)
            if record is None or e.status != "live":
                continue
            r = record.result.recall_at_1pct_fpr
            rows.append({"task": task_id, "entry": e, "href": page_name(e.id),
                         "recall": recall_cell(record.result),
                         "threshold": None if r is None else f"{r.threshold:.3f}",
                         "n_control": None if r is None else r.n_control})
    return rows


def _write_guards_and_archive(site: _Site) -> None:
    sel = site.sel
    site.write("guards.html", "guards.html.j2", root="", title="Guards",
               guards=[_guard_view(sel.by_id[i], why, sel.results[i])
                       for i, why in sorted(sel.guards.items())])
    site.write("archive.html", "archive.html.j2", root="", title="Archive",
               archived=[(e, page_name(e.id) if e.id in sel.results else None)
                         for e in sel.archived])


def _write_entry_pages(site: _Site) -> None:
    """One page per shown entry; a page whose inputs are those of the previous build's
    page is reused from it (``incremental``)."""
    sel, registry = site.sel, site.opts.registry
    group_of = {i: g for g in site.ranks.groups for i in g.order}
    held: dict[str, object] = {}
    for e in sel.entries:
        page = page_name(e.id)
        standing = _standing(group_of.get(e.id), e.id)
        digest = _entry_digest(site, e, standing, held)
        if site.cache.reuse(page, digest):
            continue
        files = linked_files(site.files, registry, e, sel.results[e.id],
                             site.opts.spec.version)
        site.write(
            page, "entry.html.j2", root="../", title=e.short_name, e=e,
            standing=standing, guard=sel.guards.get(e.id), rank_script=rank_shard(e.id),
            score=site.scores.breakdowns[e.id], tasks=_entry_task_views(site, e),
            intervals=_own_interval(site.ranks.entries[e.id]),
            selective=selectivity_judgment(sel.results[e.id]),
            files=files,
            history=history_by_task(registry, e.id, sorted(sel.results[e.id])),
            reproduce=reproduce_commands(e, sel.results[e.id]))
        site.cache.record(page, digest, _local_files(files))


def _local_files(files: Mapping[str, Any]) -> list[str]:
    """The leaderboard's own files an entry page links (blobs, REPORT.md): what a reused
    page brings along from the previous build."""
    links: list[FileLink | None] = [files["entry_yaml"], *files["artifact"]]
    links += [link for _, stored, report in files["results"] for link in (stored, report)]
    return sorted({unquote(f.href) for f in links
                   if f is not None and f.href is not None and "://" not in f.href})


def _entry_digest(site: _Site, e: Entry, standing: dict[str, Any] | None,
                  held: dict[str, object]) -> str | None:
    """What an entry page is rendered from (``incremental``): its files' bytes and what
    the build computed for it; ``held`` keeps each task's catalog view between entries."""
    sel, registry = site.sel, site.opts.registry
    tasks = sorted(sel.results[e.id])
    paths = [entry_path(registry, e.id)] + [result_path(registry, e.id, t) for t in tasks]
    paths.append(causal_path(registry, e.id))  # the "moves the model" rows and figures
    folder = site.files.artifact_folder(e.artifact_url)
    if folder is not None:
        paths += sorted(p for p in folder.rglob("*") if p.is_file())
    for t in tasks:
        paths += sorted((registry / BASELINES_FOLDER / t).glob("*"))
        if t not in held:
            spec = site.opts.catalog.specs.get(t)
            held[t] = (spec, generations(site.opts.catalog, t) if spec is not None else None)
    on_task = []
    for t in tasks:
        group = site.ranks.task_groups.get(t)
        if group is not None and e.id in group.ranks:
            on_task.append((t, _own_interval(group.ranks[e.id]), group.scores[e.id]))
    return site.cache.digest(
        file_digest(paths, registry.parent), e, standing, sel.guards.get(e.id),
        site.scores.breakdowns[e.id], _own_interval(site.ranks.entries[e.id]),
        site.scores.gaps[e.id],
        on_task, [held[t] for t in tasks])


def _standing(group: RankedGroup | None, entry_id: str) -> dict[str, Any] | None:
    """Where an entry page says the entry stands: its task set's group, whether it is ranked
    there (and if not, why: its own gap to its baselines) and its ProbeScore's interval;
    never its rank, which moves with other entries' results (``ranks/<shard>.js``)."""
    if group is None:
        return None
    r = group.ranks[entry_id]
    return {"ranked": r.rank is not None, "unranked": r.unranked, "tasks": group.tasks,
            "family": family_name(group.family), "href": family_page(group.family),
            "anchor": "set-" + "--".join(group.tasks), "shard": rank_shard(entry_id)}


#: the folder of the entry pages' rank scripts (``rank_shard``)
RANKS_FOLDER = "ranks"


def rank_shard(entry_id: str) -> str:
    """The rank script an entry page loads, ``ranks/<xx>.js``: its entry id's sha256's
    first two hex digits, so that a page names it from its own id and a page plus its
    script stays small (about 1/256 of the entries per script).

    >>> rank_shard("a")
    'ranks/ca.js'
    """
    return f"{RANKS_FOLDER}/{sha256_bytes(entry_id.encode('utf-8', 'surrogatepass'))[:2]}.js"


def _own_interval(interval: RankInterval) -> RankInterval:
    """``interval`` without its rank, which other entries' results move: what an entry
    page shows of it."""
    return replace(interval, rank=None, best=None, worst=None)


def _write_rank_scripts(site: _Site) -> None:
    """``ranks/<xx>.js``: each entry's rank in its task set's group and on each task alone
    (``[rank, best, worst, ranked entries]``), read by the entry page through app.js."""
    shards: dict[str, dict[str, Any]] = {}
    group_of = {i: g for g in site.ranks.groups for i in g.order}

    def cell(group: RankedGroup | None, entry_id: str) -> list[int] | None:
        if group is None or entry_id not in group.ranks:
            return None
        r = group.ranks[entry_id]
        if r.rank is None or r.best is None or r.worst is None:
            return None
        return [r.rank, r.best, r.worst, len(group.ranked)]

    for e in site.sel.entries:
        on_task = {t: cell(site.ranks.task_groups.get(t), e.id)
                   for t in sorted(site.sel.results[e.id])}
        shards.setdefault(rank_shard(e.id), {})[e.id] = {
            "set": cell(group_of.get(e.id), e.id),
            "tasks": {t: c for t, c in on_task.items() if c is not None}}
    (site.folder / RANKS_FOLDER).mkdir(exist_ok=True)
    for name, ranks in sorted(shards.items()):
        # ensure_ascii: no U+2028 or other character a script would read otherwise
        (site.folder / name).write_text(
            "// entry ranks (probebench leaderboard build); read by app.js\n"
            "window.PROBEBENCH_RANKS = " + json.dumps(dict(sorted(ranks.items())),
                                                      ensure_ascii=True,
                                                      separators=(",", ":")) + ";\n",
            encoding="utf-8")


def _entry_task_views(site: _Site, e: Entry) -> list[dict[str, Any]]:
    """An entry page's task sections: each result, its standing on the task alone, the
    task's baselines beside it, the gap, the sealed holdout."""
    tasks = []
    for t, rec in sorted(site.sel.results[e.id].items()):
        view = _task_view(t, rec)
        task_group = site.ranks.task_groups.get(t)
        own = (task_group.ranks[e.id] if task_group is not None and e.id in task_group.ranks
               else None)
        view["standing"] = None if own is None or task_group is None else {
            "score": task_group.scores[e.id], "score_low": own.score_low,
            "score_high": own.score_high, "ranked": own.rank is not None,
            "unranked": own.unranked}
        view["baselines"] = baselines_beside(site.opts.registry, t, rec)
        view["gap"] = _gap_view(site.scores.gaps[e.id][t])
        view["holdout"] = entry_holdout(site.opts.catalog, t, rec)
        view["causal"] = causal_view(t, *causal_of(site.sel, e.id, t))
        tasks.append(view)
    return tasks


def _write_tasks_index(site: _Site) -> None:
    """tasks.html: every task by family, guard tasks last."""
    sel, catalog = site.sel, site.opts.catalog
    guard_tasks = {t for i in sel.guards for t in sel.results[i]}
    by_family: dict[str, list[tuple[str, str, int, int]]] = {}
    for t in sel.task_ids:
        key = "guard tasks" if t in guard_tasks else family_name(sel.families[t])
        title = catalog.specs[t].title if t in catalog.specs else t
        by_family.setdefault(key, []).append((t, title, *site.ranks.n_on_task(t)))
    order = [family_name(f) for f in sorted({sel.families[t] for t in sel.task_ids},
                                              key=family_sort_key)] + ["guard tasks"]
    site.write("tasks.html", "tasks.html.j2", root="", title="Tasks",
               task_families=[(k, by_family[k]) for k in order if k in by_family])


def _write_methodology(site: _Site) -> None:
    site.write(
        "methodology.html", "methodology.html.j2", root="", title="Methodology",
        weights=site.opts.spec.normalised(), n_resamples=site.opts.n_resamples,
        closed_license_score=license_score("closed"), closed_ceiling=CLOSED_LICENSE_CEILING,
        imputes={"evalaware": EVALAWARE_IMPUTE, "distshift": DISTSHIFT_IMPUTE,
                 "transfer": TRANSFER_IMPUTE,
                 "mapped_transfer": MAPPED_TRANSFER_IMPUTE, "unmeasured": UNMEASURED})


def _write_downloads(site: _Site) -> None:
    """leaderboard.json, leaderboard.csv and the JSON's schema."""
    board = _downloads(site.opts, site.sel, site.scores, site.ranks)
    write_leaderboard_json(board, site.folder / "leaderboard.json")
    (site.folder / "leaderboard.csv").write_text(leaderboard_csv(board.results),
                                                 encoding="utf-8")
    (site.folder / "leaderboard.schema.json").write_text(leaderboard_schema(),
                                                         encoding="utf-8")


def _summary(out: Path, sel: Selection, scores: Scores, ranks: Rankings,
             skipped: list[str]) -> BuildSummary:
    ranking = [RankedTable(g.family, g.tasks, tuple(
        RankedEntry(g.ranks[i].rank, g.ranks[i].best, g.ranks[i].worst, i, g.scores[i],
                    scores.mean_auroc[i], sel.by_id[i].model, g.ranks[i].unranked)
        for i in g.order)) for g in ranks.groups]
    return BuildSummary(out, len(sel.entries), skipped, ranking, sorted(sel.guards),
                        _outside_lines(sel, scores, ranks))


def _filters(listed: Sequence[Entry], results: Mapping[str, dict[str, ResultRecord]],
             guards: Mapping[str, str], task_families: Mapping[str, str]) -> dict[str, Any]:
    """The choices of the index's and family pages' filters, from the entries listed."""
    tasks = sorted({t for e in listed for t in results[e.id]})
    families = sorted({task_families[t] for t in tasks}, key=family_sort_key)
    statuses = sorted({"guard" if e.id in guards else e.status for e in listed},
                      key=["live", "pending_review", "guard"].index)
    return {"models": sorted({e.model for e in listed}),
            "categories": sorted({e.category for e in listed}),
            "families": [(f, family_name(f)) for f in families],
            "tasks": tasks, "statuses": statuses}


def _scores_chart(group_views: Sequence[dict[str, Any]], name: str) -> str | None:
    """ProbeScore with its 95% interval per ranked entry of a family, group by group
    (an unranked entry's score is no standing: it is in the table, not in the chart)."""
    rows = [(f"Task set {{{', '.join(g['tasks'])}}}", r["short_name"], r["score"],
             r["score_low"], r["score_high"]) for g in group_views for r in g["rows"]
            if r["rank"] is not None]
    if not rows:
        return None
    return scores_svg(rows, f"{name}: ProbeScore with 95% intervals, by task set")


def _selectivity(records: Mapping[str, ResultRecord]) -> tuple[str, float | None]:
    """An entry's selectivity over its tasks: the task's value and CI for one task, the
    mean for several (n/a when a task has none)."""
    found = [r.result.selectivity.selectivity for r in records.values()
             if r.result.selectivity is not None]
    values = [s.value for s in found if s.value is not None]
    if not values or len(values) != len(records):
        return "n/a", None
    if len(values) == 1:
        return _iv(found[0]), values[0]
    mean = sum(values) / len(values)
    return f"{mean:.3f} (mean of {len(values)})", mean


def _gaps(registry: Path, results: Mapping[str, Mapping[str, ResultRecord]]
          ) -> dict[str, dict[str, Gap]]:
    """entry id -> task -> the result's gap to its baselines (``gaps.result_gap``), with
    the task's baselines stored for the result's model and site where there are some."""
    stored: dict[str, dict[str, BaselineRecord]] = {}
    out: dict[str, dict[str, Gap]] = {}
    for entry_id, records in results.items():
        out[entry_id] = {}
        for task, rec in records.items():
            if task not in stored:
                stored[task] = task_baselines(registry, task)
            out[entry_id][task] = result_gap(rec, stored[task].get(baseline_key(rec)))
    return out


def _scored(entry: Entry, records: dict[str, ResultRecord],
            gaps: Mapping[str, Gap]) -> Scored:
    """What ranking needs of ``entry`` scored on ``records`` (all its tasks, or one),
    whether it beats its baselines on them, and the gap that decides it."""
    mine = [gaps[t] for t in sorted(records)]
    worst = worst_gap(mine)
    note = "" if worst is None else worst.note
    if worst is not None and len(mine) > 1:
        task = next(t for t in sorted(records) if gaps[t] is worst)
        note = f"on {task}, {note}"
    return Scored(entry.id, records, axis_values(records, entry.license),
                  closed=entry.license == "closed", beats=entry_beats(mine),
                  baseline_note=note)


def _gap_view(gap: Gap | None) -> dict[str, Any]:
    """What a table cell and an entry page show of a gap: its point and interval (signed,
    3 decimals), the baseline, whether it beats it (✓, ✗, ? for not compared) and how
    it was obtained."""
    if gap is None:
        return {"text": "n/a", "point": "n/a", "interval": "", "value": "", "beats": None,
                "verdict": "baselines not compared", "baseline": None,
                "method": METHODS["none"], "mark": "?", "tasks_note": ""}
    known = gap.value is not None
    interval = gap.text.split(" vs ")[0].partition(" ")[2] if known else ""
    return {"text": gap.text, "point": f"{gap.value:+.3f}".replace("-", "−") if known
            else "n/a", "interval": interval, "value": f"{gap.value:.6f}" if known else "",
            "beats": gap.beats, "verdict": gap.verdict, "baseline": gap.baseline,
            "method": METHODS[gap.method] + (f": {gap.why}" if gap.why else ""),
            "mark": {True: "✓", False: "✗", None: "?"}[gap.beats], "tasks_note": ""}


def _group_view(group: RankedGroup, entries: Mapping[str, Entry],
                breakdowns: Mapping[str, ScoreBreakdown], mean_auroc: Mapping[str, float],
                results: Mapping[str, dict[str, ResultRecord]],
                gaps: Mapping[str, Mapping[str, Gap]], spec: ProbeScoreSpec) -> dict[str, Any]:
    """The rows of one group's ranked table (every row on ``group.tasks``): the ranked
    entries, then those that do not beat their baselines (``unranked`` says why)."""
    rows = []
    for entry_id in group.order:
        e, b, r = entries[entry_id], breakdowns[entry_id], group.ranks[entry_id]
        row = _entry_row(e, results[e.id], b, group.family, "live", gaps[e.id])
        row.update({
            "rank": r.rank, "best": r.best, "worst": r.worst, "score": group.scores[e.id],
            "score_low": r.score_low, "score_high": r.score_high,
            "score_note": r.score_note, "unranked": r.unranked, "outside": r.outside,
            "axes": {a.name: {"value": b.values[a.name].value,
                              "imputed": b.values[a.name].imputed,
                              "capped": a.name in b.capped,
                              "ci_low": r.axes[a.name].ci_low,
                              "ci_high": r.axes[a.name].ci_high,
                              "n_items": r.axes[a.name].n_items} for a in spec.axes},
            "auroc": mean_auroc[e.id],
            "auroc_low": r.auroc_low, "auroc_high": r.auroc_high,
            "auroc_capped": any(a.name in b.capped for a in spec.axes if a.source == "auroc")})
        rows.append(row)
    return {"family": group.family, "tasks": list(group.tasks), "rows": rows,
            "n_rows": len(rows), "n_ranked": len(group.ranked),
            "anchor": "set-" + "--".join(group.tasks)}


def _entry_row(e: Entry, records: Mapping[str, ResultRecord], score: ScoreBreakdown,
               family: str, status: str, gaps: Mapping[str, Gap]) -> dict[str, Any]:
    """What every table of entries shows of one entry, ranked or not: its ProbeScore,
    AUROC over its tasks (with the AUROC's interval when it has one task) and its gap to
    the baselines (the task's, or over several tasks the one its standing turns on)."""
    selectivity, sel_value = _selectivity(records)
    selective, selective_note = selectivity_judgment(records)
    n_items = sum(r.result.n_items for r in records.values())
    mine = [gaps[t] for t in sorted(records)]
    worst = worst_gap(mine)
    gap = _gap_view(worst)
    gap["beats"] = entry_beats(mine)
    if len(mine) > 1 and worst is not None:
        gap["tasks_note"] = f"the worst of {len(mine)} tasks"
    aurocs = [r.result.auroc for r in records.values()]
    one = aurocs[0] if len(aurocs) == 1 else None
    return {
        "id": e.id, "href": page_name(e.id), "short_name": e.short_name, "model": e.model,
        "site": f"{e.layer}:{e.position}", "category": e.category, "status": status,
        "family": family, "tasks": sorted(records), "score": score.total,
        "score_low": None, "score_high": None,
        "auroc": sum(a.value or 0.0 for a in aurocs) / len(aurocs),
        "auroc_low": one.ci_low if one else None, "auroc_high": one.ci_high if one else None,
        "auroc_capped": False, "selectivity": selectivity, "sel_value": sel_value,
        "selective": selective, "selective_note": selective_note,
        "n_items": n_items, "few_items": n_items < FEW_ITEMS,
        "gap": gap, "unranked": "", "score_note": "",
        "marks": [(t, rec.result.marks["auroc"].mark) for t, rec in sorted(records.items())
                  if "auroc" in rec.result.marks]}


def _guard_view(entry: Entry, why: str, records: dict[str, ResultRecord]) -> dict[str, Any]:
    return {"e": entry, "href": page_name(entry.id), "why": why,
            "tasks": [{"id": t, "auroc": _iv(rec.result.auroc),
                       "accuracy_name": rec.result.accuracy_name,
                       "accuracy": _iv(rec.result.accuracy), "ece": f"{rec.result.ece:.3f}",
                       "selectivity": _iv(rec.result.selectivity.selectivity
                                          if rec.result.selectivity else None),
                       "gflops": _gflops(rec.result), "latency": _latency(rec)}
                      for t, rec in sorted(records.items())]}


def _latency(record: ResultRecord) -> str:
    """The measured latency with the hardware it was measured on (shown, not scored by
    specs from 0.1.0 on: it depends on the machine)."""
    if not record.latency_ms:
        return "n/a"
    hardware = record.run.hardware if record.run else "hardware not recorded"
    return f"{record.latency_ms:.1f} ms ({record.device}, {hardware})"


def _provenance(record: ResultRecord) -> list[tuple[str, str]]:
    """Where and when a stored result was measured, as label/value rows."""
    run = record.run
    not_recorded = "not recorded (stored before provenance was kept)"
    commit = (run.probebench_commit or "unknown (installed without git)") if run else None
    return [
        ("evaluated", f"{run.evaluated_at} (UTC)" if run else not_recorded),
        ("probebench", f"{record.versions.get('probebench', 'unknown')}"
                       + (f", commit {commit}" if commit else "")
                       + (" (uncommitted changes: the code that measured it cannot be "
                          "checked out)" if record.from_dirty_tree else "")),
        ("device / dtype", f"{record.device} / {record.dtype}"),
        ("hardware", run.hardware if run else not_recorded),
        ("libraries", ", ".join(f"{k} {record.versions[k]}" for k in
                                ("torch", "transformers", "scikit-learn", "numpy")
                                if k in record.versions)),
        ("model weights", f"{record.model.get('name', '?')} "
                          f"({record.model.get('revision') or 'no revision'}), sha256 "
                          f"{record.model.get('weights_sha256', '?')} "
                          + (f"({record.model['hash_scheme']}: of the tensors)"
                             if "hash_scheme" in record.model else "(of the files' bytes)")),
        ("test set", f"sha256 {record.result.test_sha256}"),
        ("artifact bundle", f"sha256 {record.probe.bundle_sha256}"),
        ("seed / resamples", f"{record.seed} / {record.bootstrap_resamples}"),
    ]


def _task_view(task_id: str, record: ResultRecord) -> dict[str, Any]:
    t = record.result
    pred = t.predictions
    sel = t.selectivity
    view: dict[str, Any] = {
        "id": task_id, "version": t.version, "auroc": _iv(t.auroc),
        "accuracy_name": t.accuracy_name, "accuracy": _iv(t.accuracy),
        "ece": f"{t.ece:.3f}", "brier": f"{t.brier:.3f}",
        "fpr": "n/a" if t.fpr_at_99tpr is None else f"{t.fpr_at_99tpr:.3f}",
        "latency": _latency(record),
        "cost": "not recorded (stored before the cost was kept)" if t.cost is None else
                f"{_gflops(t)} GFLOPs/prompt ({t.cost.tokens_per_prompt:.1f} tokens, "
                f"{t.cost.blocks} blocks)",
        "selectivity": None if sel is None else {
            "accuracy": _iv(sel.accuracy), "control_accuracy": _iv(sel.control_accuracy),
            "selectivity": _iv(sel.selectivity),
            "control_positive_rate": f"{sel.control_positive_rate:.3f}", "note": sel.note},
        "distshift": _iv(t.distshift_auroc), "evalaware": _iv(t.evalaware_auroc),
        "marks": _marks(t),
        "provenance": _provenance(record),
        "roc": roc_svg(pred.labels, pred.probs, f"ROC curve, {task_id}"),
        "predictions_note": predictions_note(t),
        "reliability": reliability_svg(pred.labels, pred.probs,
                                       f"Reliability diagram, {task_id}"),
        "slice_figures": [],
        "transfer": transfer_view(t),
        "recall": recall_view(t),
    }
    try:
        charts = get_format(t.format).charted_slices
    except InputError:  # a result of a format this installation does not know
        charts = ()
    for chart in charts:
        values = t.slices.get(chart.slice, {})
        bars = [(v, s.accuracy.value, s.accuracy.ci_low or 0.0, s.accuracy.ci_high or 0.0)
                for v, s in sorted(values.items())
                if s.accuracy.value is not None and v not in chart.skip_values]
        if bars:
            view["slice_figures"].append((chart.title, bars_svg(bars, chart.title)))
    return view


def _sweeps(registry: Path) -> dict[str, list[dict[str, Any]]]:
    """task id -> figures of the layer sweeps stored under ``registry/sweeps/``."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((registry / "sweeps").rglob("*.json")):
        sweep = read_sweep(path)
        rows = [r for r in sweep.rows if r.auroc is not None]
        layers = [r.layer for r in rows]
        series = [("AUROC", "s1", [r.auroc or 0.0 for r in rows],
                   [r.auroc_ci_low or 0.0 for r in rows], [r.auroc_ci_high or 0.0 for r in rows])]
        if all(r.accuracy is not None for r in rows):
            series.append((sweep.accuracy_name, "s2", [r.accuracy or 0.0 for r in rows],
                           [r.accuracy_ci_low or 0.0 for r in rows],
                           [r.accuracy_ci_high or 0.0 for r in rows]))
        title = (f"Layer sweep: {sweep.probe_type} probes on {sweep.model}, position "
                 f"{sweep.position}")
        best = sweep.best()
        out.setdefault(sweep.task, []).append({
            "title": title, "svg": sweep_svg(layers, series, title),
            "best": f"best layer {best.layer}: AUROC {best.auroc:.3f} "
                    f"[{best.auroc_ci_low:.3f}, {best.auroc_ci_high:.3f}]",
            "rows": sweep.rows, "accuracy_name": sweep.accuracy_name})
    return out


def _baselines_view(stored: Mapping[str, BaselineRecord],
                    registered_sha256: str | None) -> list[dict[str, Any]]:
    """One table per stored key (a model, or a model at a site) from the task's stored
    baselines (``registry/baselines/``): never a function of an entry."""
    def order(name: str) -> tuple[int, str]:
        return (BASELINES.index(name) if name in BASELINES else len(BASELINES), name)

    out = []
    for model, record in sorted(stored.items()):
        out.append({
            "model": model, "seed": record.seed, "resamples": record.bootstrap_resamples,
            "evaluated": f"{record.run.evaluated_at} (UTC)" if record.run else "not recorded",
            "test_sha256": record.test_sha256,
            "stale": registered_sha256 is not None and record.test_sha256 != registered_sha256,
            "rows": [{"name": n, "auroc": _iv(b.auroc), "accuracy": _iv(b.accuracy),
                      "note": b.note}
                     for n, b in sorted(record.baselines.items(), key=lambda kv: order(kv[0]))]})
    return out


def _task_row(e: Entry, record: ResultRecord, group: RankedGroup | None,
              gap: Gap, causal: tuple[CausalOut | None, str] = (None, "")
              ) -> dict[str, Any]:
    t = record.result
    cell = moves_the_model(causal[0], causal[1] or "no causal test stored")
    sel = t.selectivity.selectivity if t.selectivity else None
    row: dict[str, Any] = {
        "id": e.id, "href": page_name(e.id), "short_name": e.short_name, "model": e.model,
        "status": e.status, "auroc": _iv(t.auroc), "auroc_value": t.auroc.value,
        "accuracy": _iv(t.accuracy),
        "acc_value": t.accuracy.value if t.accuracy.value is not None else -1,
        "selectivity": _iv(sel),
        "sel_value": sel.value if sel is not None and sel.value is not None else "",
        "gflops": _gflops(t), "ece": f"{t.ece:.3f}", "site": f"{e.layer}:{e.position}",
        "marks": sorted((k, m.mark) for k, m in t.marks.items()), "gap": _gap_view(gap),
        "recall": recall_cell(t), "recall_value": recall_sort_value(t),
        "causal": cell, "causal_value": "" if cell.effect is None else cell.effect}
    if group is not None:
        r = group.ranks[e.id]
        row.update(rank=r.rank, best=r.best, worst=r.worst, score=group.scores[e.id],
                   score_low=r.score_low, score_high=r.score_high, score_note=r.score_note,
                   unranked=r.unranked, outside=r.outside)
    return row


def _write_task_pages(site: _Site) -> None:
    """One page per task: the live entries ranked on it alone, then pending entries and
    guards; the task's baselines, sealed holdouts, sweeps and data."""
    sel, catalog = site.sel, site.opts.catalog
    sweeps = _sweeps(site.opts.registry)
    for task_id in sel.task_ids:
        on_task = [e for e in sel.entries if task_id in sel.results[e.id]]
        group = site.ranks.task_groups.get(task_id)

        def row(e: Entry, group: RankedGroup | None, task_id: str = task_id
                ) -> dict[str, Any]:
            return _task_row(e, sel.results[e.id][task_id], group,
                             site.scores.gaps[e.id][task_id],
                             causal_of(sel, e.id, task_id))

        spec = catalog.specs.get(task_id)
        stored = task_baselines(site.opts.registry, task_id)
        names = [sel.results[e.id][task_id].result.accuracy_name for e in on_task]
        holdouts = (holdout_context(task_holdouts(catalog, task_id, site.opts.registry,
                                                  [e.id for e in on_task]))
                    if spec is not None else None)
        ranked = ([row(sel.by_id[i], group) for i in group.order]
                  if group is not None else [])
        pending = [row(e, None) for e in on_task
                   if e.status == "pending_review" and e.id not in sel.guards]
        guard_rows = [row(e, None) for e in on_task
                      if e.id in sel.guards and e.status != "deprecated"]
        page, n = f"tasks/{task_id}.html", site.opts.index_rows
        family = family_name(sel.families[task_id])
        listed = [[r["id"], r["short_name"], r["href"], family, task_id, r["model"],
                   "guard" if r["id"] in sel.guards else r["status"],
                   sel.by_id[r["id"]].category,
                   round(r["score"], 3) if "score" in r else None,
                   round(r["auroc_value"], 3),
                   "" if r.get("rank") is None else f"{r['rank']} [{r['best']}, {r['worst']}]",
                   r["gap"]["mark"]] for r in ranked + pending + guard_rows]
        (site.folder / data_script(page)).write_text(
            _entries_script(listed, n, f"every entry on the task {task_id}"), encoding="utf-8")
        site.write(
            page, "task.html.j2", root="../", title=task_id,
            task=_task_header(task_id, spec), recall=declares_control(spec),
            rows=ranked[:n], n_rows=len(ranked),
            n_ranked=len(group.ranked) if group is not None else 0,
            surface=surface_flag(catalog, task_id, stored),
            pending=pending[:n], n_pending=len(pending), guard_rows=guard_rows[:n],
            n_guard_rows=len(guard_rows), index_rows=n, n_listed=len(listed),
            data_js=data_script(page).rpartition("/")[2], filters=site.filters,
            baselines=_baselines_view(stored, spec.test_sha256 if spec else None),
            accuracy_name=names[0] if names else "accuracy",
            n_resamples=site.opts.n_resamples, sweeps=sweeps.get(task_id, []),
            data=task_data(catalog, task_id, site.files), holdouts=holdouts)


def _task_header(task_id: str, spec: TaskSpec | None) -> dict[str, Any]:
    """What a task page's header says of the task ("?" for a task the catalog lacks)."""
    return {"id": task_id, "title": spec.title if spec else task_id,
            "version": spec.version if spec else "?", "format": spec.format if spec else "?",
            "license": spec.license if spec else "?",
            "test_sha256": spec.test_sha256 if spec else "?"}


def _holdout_fields(rec: ResultRecord) -> dict[str, Any]:
    """A result row's sealed-holdout columns (None where the record has no holdout part)."""
    held = rec.holdout
    if held is None:
        return dict.fromkeys(("holdout_generation", "holdout_commitment", "holdout_auroc",
                              "holdout_auroc_ci_low", "holdout_auroc_ci_high",
                              "holdout_retention", "goodhart_resistance"))
    goodhart = AXES["holdout_goodhart"].compute([rec], "")
    return {"holdout_generation": held.generation, "holdout_commitment": held.commitment,
            "holdout_auroc": held.auroc.value, "holdout_auroc_ci_low": held.auroc.ci_low,
            "holdout_auroc_ci_high": held.auroc.ci_high, "holdout_retention": held.retention,
            "goodhart_resistance": None if goodhart.imputed else round(goodhart.value, 6)}


def _downloads(opts: BuildOptions, sel: Selection, scores: Scores,
               ranks: Rankings) -> Leaderboard:
    """leaderboard.json's content: one row per (entry, task), every ranking, every
    entry's ProbeScore breakdown."""
    entries = sorted(sel.entries, key=lambda e: e.id)
    return Leaderboard(probebench_version=__version__, spec_version=opts.spec.version,
                       rank_resamples=opts.n_resamples, rank_seed=opts.seed,
                       results=[row for e in entries
                                for row in _result_rows(opts.spec, e, sel, scores, ranks)],
                       rankings=[_ranking(g, sel, scores) for g in ranks.groups],
                       probescores=[_entry_score(opts.spec, e, sel, scores.breakdowns[e.id],
                                                 ranks.entries[e.id]) for e in entries],
                       generalisation=[m for f in _families_shown(sel, ranks)
                                       if (m := generalisation_matrix(f, opts.catalog, sel))
                                       is not None])


def _families_shown(sel: Selection, ranks: Rankings) -> list[str]:
    """The families with a section (as ``_open_site`` lists them), in page order."""
    return sorted({g.family for g in ranks.groups} | {sel.family(e.id) for e in sel.pending},
                  key=family_sort_key)


def _lo_hi(x: IntervalOut | None) -> tuple[float | None, float | None, float | None]:
    return (None, None, None) if x is None else (x.value, x.ci_low, x.ci_high)


def _result_rows(spec: ProbeScoreSpec, e: Entry, sel: Selection, scores: Scores,
                 ranks: Rankings) -> list[ResultRow]:
    """leaderboard.json's rows of one entry: one per task, by task."""
    rows = []
    for task, rec in sorted(sel.results[e.id].items()):
        t, run = rec.result, rec.run
        sel_iv = _lo_hi(t.selectivity.selectivity if t.selectivity else None)
        group = ranks.task_groups.get(task)
        rank = group.ranks.get(e.id) if group is not None else None
        gap = scores.gaps[e.id][task]
        rows.append(ResultRow(
            entry_id=e.id, short_name=e.short_name, name=e.name, author=e.author,
            org=e.org, status=e.status, guard=e.id in sel.guards, category=e.category,
            model=e.model, layer=e.layer, position=e.position, probe_type=e.probe_type,
            license=e.license, artifact_url=e.artifact_url,
            artifact_sha256=e.artifact_sha256, task=task, task_version=t.version,
            family=sel.families[task], test_sha256=t.test_sha256, n_items=t.n_items,
            auroc=t.auroc.value, auroc_ci_low=t.auroc.ci_low, auroc_ci_high=t.auroc.ci_high,
            best_baseline=gap.baseline, best_baseline_auroc=gap.baseline_auroc,
            baseline_gap=_round(gap.value), baseline_gap_ci_low=_round(gap.low),
            baseline_gap_ci_high=_round(gap.high), baseline_gap_method=gap.method,
            beats_baselines=gap.beats, accuracy_name=t.accuracy_name, accuracy=t.accuracy.value,
            accuracy_ci_low=t.accuracy.ci_low, accuracy_ci_high=t.accuracy.ci_high,
            ece=t.ece, brier=t.brier, fpr_at_99tpr=t.fpr_at_99tpr, selectivity=sel_iv[0],
            selectivity_ci_low=sel_iv[1], selectivity_ci_high=sel_iv[2],
            distshift_auroc=t.distshift_auroc.value,
            distshift_imputed=t.distshift_auroc.imputed,
            evalaware_auroc=t.evalaware_auroc.value,
            evalaware_imputed=t.evalaware_auroc.imputed,
            **recall_fields(t),
            **causal_fields(*causal_of(sel, e.id, task)),
            **_holdout_fields(rec),
            gflops_per_prompt=None if t.cost is None else
            round(t.cost.flops_per_prompt / 1e9, 6),
            latency_ms=rec.latency_ms,
            task_probescore=round(probescore(spec, axis_values({task: rec}, e.license),
                                             closed_license=e.license == "closed").total, 6),
            task_rank=rank.rank if rank else None, task_rank_best=rank.best if rank else None,
            task_rank_worst=rank.worst if rank else None,
            task_unranked=rank.unranked or None if rank else None,
            evaluated_at=run.evaluated_at if run else None,
            probebench_version=rec.versions.get("probebench"),
            probebench_commit=run.probebench_commit if run else None, device=rec.device,
            dtype=rec.dtype, hardware=run.hardware if run else None, seed=rec.seed,
            bootstrap_resamples=rec.bootstrap_resamples, page=page_name(e.id)))
    return rows


def _ranking(g: RankedGroup, sel: Selection, scores: Scores) -> Ranking:
    """leaderboard.json's ranking of one group, in its order."""
    def group_gap(i: str) -> Gap | None:
        return worst_gap(scores.gaps[i][t] for t in g.tasks)

    return Ranking(family=g.family, tasks=list(g.tasks), entries=[RankedRow(
        entry_id=i, rank=g.ranks[i].rank, rank_best=g.ranks[i].best,
        rank_worst=g.ranks[i].worst, probescore=round(g.scores[i], 6),
        probescore_ci_low=round(g.ranks[i].score_low, 6),
        probescore_ci_high=round(g.ranks[i].score_high, 6),
        probescore_ci_note=g.ranks[i].score_note or None,
        auroc=round(sum(r.result.auroc.value or 0.0 for r in sel.results[i].values())
                    / len(sel.results[i]), 6),
        auroc_ci_low=round(g.ranks[i].auroc_low, 6),
        auroc_ci_high=round(g.ranks[i].auroc_high, 6),
        beats_baselines=scores.scored[i].beats,
        baseline_gap=_round(worst.value if (worst := group_gap(i)) else None),
        baseline_gap_ci_low=_round(worst.low if worst else None),
        baseline_gap_ci_high=_round(worst.high if worst else None),
        unranked=g.ranks[i].unranked or None) for i in g.order])


def _entry_score(spec: ProbeScoreSpec, e: Entry, sel: Selection,
                 breakdown: ScoreBreakdown, interval: RankInterval) -> EntryScore:
    """leaderboard.json's ProbeScore breakdown of one entry, axis by axis, with each
    axis's interval over the joint resample and the marks of points outside theirs."""
    results = sel.results[e.id]
    return EntryScore(entry_id=e.id, tasks=sorted(results),
                      probescore=round(breakdown.total, 6),
                      probescore_ci_low=round(interval.score_low, 6),
                      probescore_ci_high=round(interval.score_high, 6),
                      axes={a.name: AxisScore(
                          value=round(breakdown.values[a.name].value, 6),
                          imputed=breakdown.values[a.name].imputed,
                          contribution=round(breakdown.contributions[a.name], 6),
                          capped=a.name in breakdown.capped,
                          ci_low=round(interval.axes[a.name].ci_low, 6),
                          ci_high=round(interval.axes[a.name].ci_high, 6),
                          n_items=interval.axes[a.name].n_items,
                          few_items=interval.axes[a.name].few_items,
                          note=breakdown.values[a.name].note,
                          **_transfer_detail(a.source, breakdown.values[a.name], results))
                          for a in spec.axes},
                      selective=selectivity_judgment(results)[0],
                      outside=list(interval.outside))


def _transfer_detail(source: str, value: AxisValue,
                     results: Mapping[str, ResultRecord]) -> dict[str, Any]:
    """The mapped-transfer axis's stored targets (target AUROC's interval, control AUROC)
    and, when the axis is 0, why; nothing for another axis."""
    if source not in ("mapped_transfer", "transfer_above_control"):
        return {}

    def why(v: TransferOut, rec: ResultRecord) -> str | None:
        if source == "mapped_transfer":
            return transfer_reason(v)
        fewest = fewest_items_per_class(rec.result.predictions)
        return transfer_judgment(v, fewest)[1]

    targets = [TransferTarget(
        task=task, target=v.target, transfer=v.transfer,
        auroc=v.auroc.value if v.auroc else None,
        auroc_ci_low=v.auroc.ci_low if v.auroc else None,
        auroc_ci_high=v.auroc.ci_high if v.auroc else None,
        control_auroc=v.control_auroc, reason=why(v, rec))
        for task, rec in sorted(results.items())
        for _, v in sorted(rec.result.transfer.items()) if isinstance(v, TransferOut)]
    reason = None
    if round(value.value, 6) == 0:
        reason = value.note if value.imputed else "; ".join(
            f"{t.task} to {t.target}: {t.reason}" for t in targets if t.reason)
    return {"targets": targets, "reason": reason or None}


def _outside_lines(sel: Selection, scores: Scores, ranks: Rankings) -> list[str]:
    """A warning line per point value outside its interval: every shown entry over all
    its tasks, and a multi-task entry's ranking on one task alone."""
    lines = []
    views = [(i, sorted(sel.results[i]), r, scores.breakdowns[i].total)
             for i, r in sorted(ranks.entries.items())]
    views += [(i, [task], g.ranks[i], g.scores[i]) for task, g in sorted(ranks.task_groups.items())
              for i in g.order if len(sel.results[i]) > 1]
    for entry_id, tasks, interval, total in views:
        for name in interval.outside:
            if name == PROBESCORE:
                value, low, high = total, interval.score_low, interval.score_high
            else:
                axis = interval.axes[name]
                value, low, high = axis.value, axis.ci_low, axis.ci_high
            lines.append(f"{entry_id} on {{{', '.join(tasks)}}}: {name} {value:.6f} lies "
                         f"outside its 95% interval [{low:.6f}, {high:.6f}] (marked in "
                         "leaderboard.json, probescores[].outside)")
    return lines


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)
