"""The leaderboard ranks comparable entries only: per task, per (family, task set) group; guards
apart; task baselines from the task's store, never from an entry.

Every test builds a real registry in tmp_path from the repository's ``registry/``
(entries, stored results, guards.yaml, sweeps), plus entries written by copying real
ones and editing them: an entry on two BLiMP tasks, an entry on guard tasks only that
``guards.yaml`` does not name, and a pending copy of a verb-grammar entry.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import yaml

from probebench.cli import main
from probebench.evaluation.metrics import resample_counts
from probebench.evaluation.results import Submission, TransferOut
from probebench.leaderboard.build import (
    BuildSummary,
    build_leaderboard,
    page_name,
    rank_shard,
)
from probebench.leaderboard.probescore import (
    AXES,
    DEFAULT_SPEC,
    axis_values,
    load_probescore_spec,
    probescore,
)
from probebench.leaderboard.ranks import (
    Scored,
    _record_at,
    _Streams,
    _task_draws,
    family_of,
    rank_group,
)
from probebench.registry.baselines import store_baselines, task_baselines
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.store import ResultHistory, ResultRecord, latest_results, result_path
from probebench.tasks.catalog import TaskCatalog

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "registry"
RESAMPLES = 30

GUARD = "probebench/eval-awareness-guard-smollm2-135m-l15-v2"
#: not named in guards.yaml, but evaluated on guard tasks only
GUARD_COPY = "probebench/eval-awareness-copy-smollm2-135m-l15-v1"
DET_SMOL = "probebench/blimp-det-noun-smollm2-135m-l15-v1"
DET_MINI = "probebench/blimp-det-noun-minilm-l6-l4-v2"
ANAPHOR = "probebench/blimp-anaphor-gender-smollm2-135m-l15-v1"
#: evaluated on {determiner-noun, anaphor gender}: a task set of its own
TWO_TASKS = "probebench/blimp-det-anaphor-smollm2-135m-l15-v1"
VERB_PENDING = "probebench/verb-grammar-pending-smollm2-135m-l8-v1"
DET_TASK = "blimp_determiner_noun_agreement_1"
ANAPHOR_TASK = "blimp_anaphor_gender_agreement"


def _copy_entry(root: Path, source_id: str, new_id: str, *, tasks: dict[str, str],
                **changes: object) -> None:
    """A new entry ``new_id`` from ``source_id``'s YAML, with the results of
    ``tasks`` (task -> entry whose stored result it takes) re-labelled as its own."""
    data = yaml.safe_load(entry_path(root, source_id).read_text())
    sha = hashlib.sha256(new_id.encode()).hexdigest()
    data.update(id=new_id, artifact_sha256=sha, tasks=sorted(tasks), **changes)
    path = entry_path(root, new_id)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    for task, owner in tasks.items():
        doc = ResultHistory.model_validate_json(result_path(root, owner, task).read_text())
        history = [r.model_copy(update={"probe": r.probe.model_copy(
            update={"bundle_sha256": sha, "id": new_id})}) for r in doc.history]
        out = result_path(root, new_id, task)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(ResultHistory(entry=new_id, task=task, history=history).to_json())


def _store_baselines(root: Path, entry_id: str) -> None:
    """The task's baselines as ``registry evaluate`` stores them, from a stored result."""
    for rec in latest_results(root, entry_id).values():
        submission = Submission(spec_version=DEFAULT_SPEC, probebench_version="0.1.0",
                                probe=rec.probe, model=rec.model, device=rec.device,
                                seed=rec.seed, bootstrap_resamples=rec.bootstrap_resamples,
                                versions=rec.versions, definitions={}, tasks=[rec.result],
                                run=rec.run)
        assert store_baselines(root, submission)


def _match_stored_results(root: Path) -> None:
    """Point each copied entry at the artifact its stored results are for: the working
    tree's registry may be mid-regeneration (an artifact re-trained, its results not yet
    re-evaluated), and these tests are about the views, not about stale results."""
    for path in sorted((root / "probes").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        bundles = {r.probe.bundle_sha256 for r in latest_results(root, data["id"]).values()}
        if len(bundles) == 1 and data["artifact_sha256"] not in bundles:
            data["artifact_sha256"] = bundles.pop()
            path.write_text(yaml.safe_dump(data, sort_keys=False))


def make_registry(root: Path) -> Path:
    for part in ("probes", "results", "sweeps"):
        shutil.copytree(SOURCE / part, root / part)
    shutil.copy(SOURCE / "guards.yaml", root / "guards.yaml")
    _match_stored_results(root)
    _copy_entry(root, DET_SMOL, TWO_TASKS, tasks={DET_TASK: DET_SMOL, ANAPHOR_TASK: ANAPHOR},
                short_name="blimp-det-anaphor-l15")
    _copy_entry(root, GUARD, GUARD_COPY, tasks={"eval_awareness": GUARD},
                short_name="eval-awareness-copy")
    _copy_entry(root, "probebench/verb-grammar-smollm2-135m-l8-v3", VERB_PENDING,
                tasks={"verb_grammar_v2": "probebench/verb-grammar-smollm2-135m-l8-v3"},
                short_name="verb-grammar-pending", status="pending_review")
    for entry_id in (DET_SMOL, DET_MINI):  # two models' baselines on the same task
        _store_baselines(root, entry_id)
    return root


def remove_entry(registry: Path, entry_id: str) -> None:
    entry_path(registry, entry_id).unlink()
    shutil.rmtree(registry / "results" / entry_id)


@dataclass
class Table:
    attrs: dict[str, str]
    entries: list[str] = field(default_factory=list)   #: data-entry of each row, in order
    links: list[str] = field(default_factory=list)     #: every href inside

    @property
    def ranked(self) -> bool:
        return "ranked" in self.attrs.get("class", "").split()

    def linked_entries(self) -> set[str]:
        return {h.rsplit("entries/", 1)[1][:-5].replace("__", "/")
                for h in self.links if "entries/" in h}


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[Table] = []
        self._open: list[Table] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "table":
            self.tables.append(Table(a))
            self._open.append(self.tables[-1])
        elif self._open and tag == "tr" and "data-entry" in a:
            self._open[-1].entries.append(a["data-entry"])
        elif self._open and tag == "a" and "href" in a:
            self._open[-1].links.append(a["href"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._open:
            self._open.pop()


def tables(page: Path) -> list[Table]:
    parser = _Tables()
    parser.feed(page.read_text())
    return parser.tables


def ranked_tables(page: Path) -> list[Table]:
    return [t for t in tables(page) if t.ranked]


def ranked_pages(site: Path) -> list[Path]:
    return [site / "index.html", *sorted((site / "families").glob("*.html")),
            *sorted((site / "tasks").glob("*.html"))]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, BuildSummary]:
    root = tmp_path_factory.mktemp("views")
    registry = make_registry(root / "registry")
    summary = build_leaderboard(registry, root / "site", catalog=TaskCatalog.for_repo(REPO),
                                n_resamples=RESAMPLES)
    return registry, root / "site", summary


def _task_sets(registry: Path) -> dict[str, frozenset[str]]:
    """entry id -> the tasks it has stored results on, read from the store itself."""
    out = {}
    for path in sorted((registry / "probes").rglob("*.yaml")):
        e = read_entry(path)
        out[e.id] = frozenset(t for t in latest_results(registry, e.id) if t in e.tasks)
    return out


def _live_task_probes(registry: Path) -> set[str]:
    return {e.id for e in map(read_entry, sorted((registry / "probes").rglob("*.yaml")))
            if e.status == "live" and e.id not in (GUARD, GUARD_COPY)}


def test_guards_have_their_own_page_and_are_never_ranked(
        built: tuple[Path, Path, BuildSummary]) -> None:
    registry, site, summary = built
    guards_page = site / "guards.html"
    listed = {i for t in tables(guards_page) for i in t.entries}
    assert listed == {GUARD, GUARD_COPY}  # named in guards.yaml, and guard tasks only
    assert not any(t.ranked for t in tables(guards_page))
    assert "Guards are not ranked" in guards_page.read_text()
    seen_ranked: set[str] = set()
    for page in ranked_pages(site):
        for table in ranked_tables(page):
            rows = set(table.entries) | table.linked_entries()
            assert not rows & {GUARD, GUARD_COPY}, (page, table.attrs)
            seen_ranked |= rows
    # the ranked tables hold every live task probe: the check above is not vacuous
    assert seen_ranked == _live_task_probes(registry)
    # the guard task's page lists the guards apart, unranked
    eval_page = site / "tasks" / "eval_awareness.html"
    assert not [t for t in ranked_tables(eval_page) if t.entries]
    assert {i for t in tables(eval_page) if not t.ranked for i in t.entries} == {GUARD,
                                                                                 GUARD_COPY}
    assert sorted(summary.guards) == sorted([GUARD, GUARD_COPY])
    assert not {GUARD, GUARD_COPY} & set(summary.ranked_ids())
    for guard in (GUARD, GUARD_COPY):
        text = (site / page_name(guard)).read_text()
        assert "not ranked (guard)" in text and "A guard, never ranked" in text
    index = (site / "index.html").read_text()
    assert 'href="guards.html"' in index
    assert f'href="{page_name(GUARD)}"' in index.split('id="guards"')[1]


def test_a_guard_awaiting_new_results_still_defines_the_guard_tasks(tmp_path: Path) -> None:
    registry = make_registry(tmp_path / "registry")
    path = entry_path(registry, GUARD)
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump(dict(data, artifact_sha256="ef" * 32), sort_keys=False))
    summary = build_leaderboard(registry, tmp_path / "site", catalog=TaskCatalog.for_repo(REPO),
                                n_resamples=RESAMPLES)
    assert any(s.startswith(f"{GUARD}: stored results") for s in summary.skipped)
    assert summary.guards == [GUARD_COPY] and GUARD_COPY not in summary.ranked_ids()
    for page in ranked_pages(tmp_path / "site"):
        assert not any(GUARD_COPY in t.entries for t in ranked_tables(page)), page


def test_entries_with_different_task_sets_are_never_ranked_together(
        built: tuple[Path, Path, BuildSummary]) -> None:
    registry, site, summary = built
    task_sets = _task_sets(registry)
    groups = []
    for page in [site / "index.html", *sorted((site / "families").glob("*.html"))]:
        for table in ranked_tables(page):
            members = {task_sets[i] for i in table.entries}
            assert len(members) == 1, (page.name, table.entries)
            assert members == {frozenset(table.attrs["data-tasks"].split())}
            groups.append((page.name, tuple(table.entries)))
    assert len(groups) > 3
    blimp = {frozenset(t.entries) for t in ranked_tables(site / "families" / "blimp.html")}
    assert frozenset({TWO_TASKS}) in blimp  # its task set is its own group
    assert frozenset({DET_SMOL, DET_MINI}) in blimp  # not ranked with TWO_TASKS
    for group in summary.ranking:
        assert {task_sets[r.entry_id] for r in group.entries} == {frozenset(group.tasks)}
        # the entries that beat their baselines are ranked from 1, the others follow
        ranked = [r.rank for r in group.entries if r.rank is not None]
        assert ranked == sorted(ranked) and (not ranked or ranked[0] == 1)
        assert [r.rank is None for r in group.entries] == sorted(
            r.rank is None for r in group.entries)
    # an entry's page names its group and rank within it only
    # (task ids may break after an underscore: <wbr> marks where)
    # (the rank itself is in the entry's rank script, which the page's script shows)
    text = (site / page_name(TWO_TASKS)).read_text().replace("<wbr>", "")
    assert (f"</span> among the entries evaluated on exactly "
            f"{{{ANAPHOR_TASK}, {DET_TASK}}}") in text
    script = (site / rank_shard(TWO_TASKS)).read_text()
    own = json.loads(script.split("window.PROBEBENCH_RANKS = ", 1)[1].rstrip().rstrip(";"))
    assert own[TWO_TASKS]["set"] == [1, 1, 1, 1]  # 1 [1, 1] of 1
    # the ranking code refuses to compare different task sets
    spec = load_probescore_spec()
    entries = {e.id: e for e in map(read_entry, (registry / "probes").rglob("*.yaml"))}
    mixed = [Scored(i, latest_results(registry, i), axis_values(latest_results(registry, i),
                                                                entries[i].license), False)
             for i in (DET_SMOL, TWO_TASKS)]
    with pytest.raises(ValueError, match="not comparable"):
        rank_group(mixed, spec, family="blimp")


def _expected_task_order(registry: Path, task: str) -> list[tuple[str, float]]:
    """(entry, ProbeScore from this task's result alone), best first, computed here."""
    spec = load_probescore_spec()
    out = []
    for entry_id in _live_task_probes(registry):
        rec = latest_results(registry, entry_id).get(task)
        if rec is None:
            continue
        license = read_entry(entry_path(registry, entry_id)).license
        out.append((entry_id, probescore(spec, axis_values({task: rec}, license),
                                         closed_license=license == "closed").total))
    return sorted(out, key=lambda x: (-x[1], x[0]))


def _score_cells(page: Path) -> list[float]:
    body = page.read_text().split('id="task-ranking"')[1].split("</table>")[0]
    return [float(v) for v in re.findall(r'<td class="num score" data-value="([-0-9.]+)">',
                                         body)]


@pytest.mark.parametrize("task", ["verb_grammar_v2", DET_TASK])
def test_task_page_lists_entries_by_descending_score(
        built: tuple[Path, Path, BuildSummary], task: str) -> None:
    registry, site, _ = built
    page = site / "tasks" / f"{task}.html"
    ranked, = ranked_tables(page)
    expected = _expected_task_order(registry, task)
    assert len(expected) >= 3
    assert ranked.entries == [i for i, _ in expected]
    scores = _score_cells(page)
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    assert scores == pytest.approx([s for _, s in expected], abs=1e-6)
    # pending entries are listed apart, unranked
    unranked = {i for t in tables(page) if not t.ranked for i in t.entries}
    if task == "verb_grammar_v2":
        assert VERB_PENDING in unranked and VERB_PENDING not in ranked.entries
        assert 'id="pending"' in page.read_text()
    else:  # the two-task entry is scored here from this task's result alone
        spec = load_probescore_spec()
        results = latest_results(registry, TWO_TASKS)
        composite = probescore(spec, axis_values(results, "Apache-2.0")).total
        alone = dict(expected)[TWO_TASKS]
        assert abs(alone - composite) > 1e-3
        assert f"{alone:.6f}" in page.read_text() and f"{composite:.6f}" not in page.read_text()


def _baselines_section(site: Path, task: str) -> str:
    html = (site / "tasks" / f"{task}.html").read_text()
    start = html.index('<section id="baselines">')
    return html[start:html.index("</section>", start) + len("</section>")]


def test_task_baselines_do_not_depend_on_entries(tmp_path: Path) -> None:
    registry = make_registry(tmp_path / "registry")
    catalog = TaskCatalog.for_repo(REPO)
    build_leaderboard(registry, tmp_path / "all", catalog=catalog, n_resamples=RESAMPLES)
    every = _baselines_section(tmp_path / "all", DET_TASK)
    stored = task_baselines(registry, DET_TASK)  # one table per stored model (and site)
    assert sorted(k.split()[0] for k in stored) == ["minilm-l6", "smollm2-135m"]
    for key in stored:
        assert f"<h3>Baselines on {key}</h3>" in every
    assert every.count("<td>surprisal</td>") == 1  # the causal model's only
    assert "no baselines stored" not in every
    # the task's entries go, one at a time, until none is left: the section stays
    for gone, name in ((DET_SMOL, "minus-smol"), (TWO_TASKS, "minus-two"),
                       (DET_MINI, "none-left")):
        remove_entry(registry, gone)
        build_leaderboard(registry, tmp_path / name, catalog=catalog, n_resamples=RESAMPLES)
        assert _baselines_section(tmp_path / name, DET_TASK) == every, gone
    assert not ranked_tables(tmp_path / "none-left" / "tasks" / f"{DET_TASK}.html")
    # a task with no stored baselines says so and shows no entry's baselines
    verbs = _baselines_section(tmp_path / "all", "verb_grammar")
    assert "no baselines stored" in verbs
    result = latest_results(registry, "probebench/verb-grammar-smollm2-135m-l8-v2")
    assert result["verb_grammar"].result.baselines  # the entry does carry some
    assert "<td>random_features</td>" not in verbs and "<table" not in verbs


def _family(registry: Path, catalog: TaskCatalog, entry_id: str) -> str:
    return family_of(catalog.specs[t].family_key for t in latest_results(registry, entry_id))


def test_index_has_no_global_ranking_across_families(
        built: tuple[Path, Path, BuildSummary]) -> None:
    registry, site, summary = built
    catalog = TaskCatalog.for_repo(REPO)
    index = site / "index.html"
    found = ranked_tables(index)
    live = _live_task_probes(registry)
    families_with_entries = {_family(registry, catalog, i) for i in live}
    assert families_with_entries == {"verbs", "blimp", "syntaxgym", "truth", "honesty",
                                     "refusal"}
    assert len(found) >= len(families_with_entries)
    for table in found:
        families = {_family(registry, catalog, i) for i in table.entries}
        assert len(families) == 1 and families == {table.attrs["data-family"]}
        assert len(table.entries) < len(live)
    # one section per family, each holding only its own tables
    html = index.read_text()
    for family in families_with_entries:
        section = html.split(f'<section class="family" id="family-{family}">')[1]
        section = section.split("</section>")[0]
        assert f'href="families/{family}.html"' in section
        parser = _Tables()
        parser.feed(section)
        assert parser.tables and {t.attrs["data-family"] for t in parser.tables} == {family}
    # navigation: every family page, guards, tasks, methodology, archive; all relative
    nav = html.split("<nav>")[1].split("</nav>")[0]
    for href in ("families/verbs.html", "families/blimp.html", "families/syntaxgym.html",
                 "guards.html", "tasks.html", "methodology.html", "archive.html"):
        assert f'href="{href}"' in nav and (site / href).is_file()
    assert "://" not in nav
    # the pending list and the archive link are kept
    assert f'href="{page_name(VERB_PENDING)}"' in html.split('id="pending"')[1]
    # the printed summary: one small table per group, never one mixed list
    text = summary.top_table(2)
    blocks = text.split("\n\n")
    assert len(blocks) == len(summary.ranking) == len(found)
    task_sets = _task_sets(registry)
    for block in blocks:
        ids = re.findall(r"(probebench/\S+)$", block, re.MULTILINE)
        assert 1 <= len(ids) <= 2 and len({task_sets[i] for i in ids}) == 1


def test_cli_prints_one_table_per_group(built: tuple[Path, Path, BuildSummary],
                                        tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    registry, _, summary = built
    assert main(["leaderboard", "build", "--registry", str(registry), "--out",
                 str(tmp_path / "site"), "--resamples", str(RESAMPLES), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "ranked only against entries evaluated on exactly the same tasks" in out
    assert out.count("task set {") == len(summary.ranking)
    # one line per group with --top 1: rank 1, or an unranked entry where no entry of
    # the group beats its baselines
    with_ranked = sum(any(r.rank is not None for r in g.entries) for g in summary.ranking)
    assert out.count("   1  [") == with_ranked
    assert out.count("   —  unranked") == len(summary.ranking) - with_ranked
    assert f"guards (never ranked): {GUARD_COPY}, {GUARD}" in out or \
        f"guards (never ranked): {GUARD}, {GUARD_COPY}" in out


def test_selectivity_and_cost_are_shown_and_may_be_missing(
        built: tuple[Path, Path, BuildSummary], tmp_path: Path) -> None:
    """Selectivity [CI] and GFLOPs/prompt on entry and task pages; results stored before
    they were kept (None) show 'n/a' and a note, never an error. The measured latency
    stays, as information with its hardware."""
    from probebench.evaluation.results import CostOut, IntervalOut, SelectivityOut

    registry, _, _ = built
    copy = tmp_path / "registry"
    shutil.copytree(registry, copy)

    def iv(v: float) -> IntervalOut:
        return IntervalOut(value=v, ci_low=v - 0.02, ci_high=v + 0.02, resamples=100,
                           dropped=0)

    measured = {"selectivity": SelectivityOut(
        accuracy=iv(0.9), control_accuracy=iv(0.6), selectivity=iv(0.3),
        control_positive_rate=0.5, note="word-type control"),
        "cost": CostOut(flops_per_prompt=2.5e9, tokens_per_prompt=9.0, blocks=15)}
    for entry_id, update in ((DET_SMOL, measured),
                             (DET_MINI, {"selectivity": None, "cost": None})):
        path = result_path(copy, entry_id, DET_TASK)
        doc = ResultHistory.model_validate_json(path.read_text())
        rec = doc.history[-1]
        doc.history[-1] = rec.model_copy(update={"result": rec.result.model_copy(
            update=update)})
        path.write_text(doc.to_json())
    site = tmp_path / "site"
    build_leaderboard(copy, site, catalog=TaskCatalog.for_repo(REPO), n_resamples=RESAMPLES)
    smol = (site / page_name(DET_SMOL)).read_text()
    assert "Control task (Hewitt &amp; Liang 2019)" in smol
    assert "0.300 [0.280, 0.320]" in smol and "0.600 [0.580, 0.620]" in smol
    assert "2.500 GFLOPs/prompt (9.0 tokens, 15 blocks)" in smol
    latency = latest_results(copy, DET_SMOL)[DET_TASK].latency_ms
    assert latency and f"{latency:.1f} ms (cpu, " in smol
    mini = (site / page_name(DET_MINI)).read_text()
    assert "Control task (Hewitt &amp; Liang 2019)" in mini and "Not measured" in mini
    assert "not recorded (stored before the cost was kept)" in mini
    task_page = (site / "tasks" / f"{DET_TASK}.html").read_text()
    # human-readable headers (their tooltips define them; the cells carry the CI)
    assert ">Selectivity<" in task_page and ">GFLOPs/prompt<" in task_page
    row = task_page.split(f'data-entry="{DET_SMOL}"')[1].split("</tr>")[0]
    assert "0.300 [0.280, 0.320]" in row and ">2.500<" in row
    row = task_page.split(f'data-entry="{DET_MINI}"')[1].split("</tr>")[0]
    # selectivity and cost; the causal test's own cell ("moves the model") comes after
    assert row.split('<td class="causal"')[0].count(">n/a<") == 2


def test_a_resample_is_a_real_record_that_every_axis_reads_by_type() -> None:
    """Each resample's record is a ``ResultRecord`` built of pydantic copies, so each axis
    reads it through its own definition, ``isinstance`` tests included: on every draw
    the transfer axis is the drawn ratio of the stored ``TransferOut`` (a duck-typed
    stand-in once failed the test and gave 0 on every draw), the AUROC axis the drawn
    AUROC; the stored record is left as it was."""
    entry_id, task = "probebench/verb-grammar-smollm2-135m-l15-v2", "verb_grammar"
    record = latest_results(SOURCE, entry_id)[task]
    before = record.model_dump_json()
    n = 40
    counts = resample_counts(max(record.result.predictions.items) + 1, n,
                             np.random.default_rng(0))
    draws = _task_draws(task, record, counts, _Streams(0, n))
    (target, (field_name, ratios)), = draws.transfer.items()
    assert field_name == "transfer" and np.ptp(ratios) > 0.05
    for b in range(n):
        at = _record_at(record, draws, b)
        assert type(at) is ResultRecord and type(at.result.transfer[target]) is TransferOut
        assert AXES["mapped_transfer"].compute([at], "").value == ratios[b]
        assert AXES["auroc"].compute([at], "").value == draws.auroc[b]
    assert record.model_dump_json() == before
