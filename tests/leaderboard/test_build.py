"""The static leaderboard: structure, determinism, and a real browser (headless Chromium)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from probebench.cli import main
from probebench.evaluation.results import TransferOut
from probebench.leaderboard.build import (
    BuildSummary,
    _entry_score,
    build_leaderboard,
    page_name,
    rank_entries,
    score_entries,
    select_entries,
)
from probebench.leaderboard.probescore import (
    FEW_ITEMS,
    MIN_ITEMS_PER_CLASS,
    evalaware_items_per_class,
    items_per_class,
    load_probescore_spec,
)
from probebench.leaderboard.ranks import RANK_RESAMPLES
from probebench.registry.store import ResultHistory, latest_results, result_path
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_registry

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
REQUIRE = os.environ.get("PROBEBENCH_REQUIRE_BROWSER") == "1"


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("reg")
    ids = synthetic_registry(root / "registry", 12)
    out = root / "board"
    assert main(["leaderboard", "build", "--registry", str(root / "registry"), "--out",
                 str(out), "--resamples", "100"]) == 0
    return out, ids


def test_pages_exist_and_link_relatively(board: tuple[Path, list[str]]) -> None:
    out, ids = board
    index = (out / "index.html").read_text()
    archive = (out / "archive.html").read_text()
    for entry_id in ids:
        assert (out / page_name(entry_id)).is_file()
        assert f'href="{page_name(entry_id)}"' in index + archive
    assert (out / "tasks" / "verb_grammar.html").is_file()
    assert (out / "methodology.html").is_file()
    assert "http://" not in index.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in index  # no CDN
    entry = (out / page_name(ids[1])).read_text()
    assert "<svg" in entry and "ROC curve" in entry and "Reliability diagram" in entry
    assert "adversarial accuracy by category" in entry  # verb-task bars
    methodology = (out / "methodology.html").read_text()
    assert "0.2500" in methodology and "30%" in methodology and "0.01" in methodology


def _live(out: Path, ids: list[str]) -> list[str]:
    from probebench.registry.entry import read_entry

    registry = out.parent / "registry"
    return [i for i in ids if read_entry(registry / "probes" / (i + ".yaml")).status == "live"]


def _ranked_tables(html: str) -> list[str]:
    """The bodies of the ranked group tables of a page."""
    import re

    return re.findall(r'<table class="sortable ranked leaderboard"[^>]*>(.*?)</table>', html,
                      re.DOTALL)


def test_only_live_entries_are_ranked(board: tuple[Path, list[str]]) -> None:
    """Pending entries are listed apart, deprecated ones archived with their notice; live
    ones are ranked in groups of one task set, ranks 1..n within each group."""
    import re

    from probebench.registry.entry import read_entry

    out, ids = board
    registry = out.parent / "registry"
    status = {i: read_entry(registry / "probes" / (i + ".yaml")).status for i in ids}
    assert set(status.values()) == {"live", "pending_review", "deprecated"}
    index = (out / "index.html").read_text()
    tables = _ranked_tables(index)
    assert len(tables) == 2  # {blimp_passive_1} and {blimp_passive_1, verb_grammar}
    ranked = [href for t in tables for href in re.findall(r'href="(entries/[^"]+)"', t)]
    assert sorted(ranked) == sorted(page_name(i) for i, s in status.items() if s == "live")
    for table in tables:
        ranks = [int(r) for r in re.findall(r'<td class="num" data-value="(\d+)">', table)]
        assert ranks == sorted(ranks) and ranks[0] == 1
        assert max(ranks) <= len(re.findall(r'href="entries/', table))
    pending = index.split('id="pending"')[1]
    archive = (out / "archive.html").read_text()
    for entry_id, s in status.items():
        page = (out / page_name(entry_id)).read_text()
        if s == "pending_review":
            assert page_name(entry_id) in pending and "Awaiting review, not ranked" in page
        if s == "deprecated":
            k = entry_id.split("probe")[1].split("-")[0]
            notice = f"Deprecated by re-evaluation: probe {k} fell 12 points."
            assert page_name(entry_id) in archive and notice in archive and notice in page
            assert "not ranked (deprecated)" in page


def test_results_of_another_artifact_are_not_shown(tmp_path: Path) -> None:
    """An entry whose artifact changed (pending a new publish) is not shown with the old
    artifact's numbers."""
    from probebench.registry.entry import entry_path

    ids = synthetic_registry(tmp_path / "registry", 3)
    path = entry_path(tmp_path / "registry", ids[1])
    text = path.read_text()
    path.write_text(text.replace(f"{1:064x}", "ef" * 32))
    summary = build_leaderboard(tmp_path / "registry", tmp_path / "board",
                                catalog=TaskCatalog.default(), n_resamples=20)
    assert ids[1] not in summary.ranked_ids()
    assert ids[0] in summary.ranked_ids()
    assert any(s.startswith(f"{ids[1]}: stored results") and "not the entry's artifact" in s
               for s in summary.skipped)


def test_entry_pages_show_provenance(tmp_path: Path) -> None:
    ids = synthetic_registry(tmp_path / "registry", 1)
    build_leaderboard(tmp_path / "registry", tmp_path / "board", catalog=TaskCatalog.default(),
                      n_resamples=20)
    page = (tmp_path / "board" / page_name(ids[0])).read_text()
    assert "Evaluated 2026-11-02T10:00:00Z (UTC)" in page
    for label in ("device / dtype", "hardware", "model weights", "artifact bundle"):
        assert f"<th>{label}</th>" in page
    assert "cpu / float32" in page and "commit " + "ab" * 20 in page


def test_build_is_deterministic(tmp_path: Path) -> None:
    synthetic_registry(tmp_path / "registry", 6)
    catalog = TaskCatalog.default()
    build_leaderboard(tmp_path / "registry", tmp_path / "a", catalog=catalog, n_resamples=50)
    build_leaderboard(tmp_path / "registry", tmp_path / "b", catalog=catalog, n_resamples=50)
    for page in (tmp_path / "a").rglob("*.html"):
        assert page.read_bytes() == (tmp_path / "b" / page.relative_to(tmp_path / "a")
                                     ).read_bytes(), page


@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER) and not REQUIRE,
                    reason="Debian chromium and chromium-driver are not installed")
def test_browser_sorts_and_navigates(board: tuple[Path, list[str]], tmp_path: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    out, all_ids = board
    ids = _live(out, all_ids)  # the ranked rows
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1400,1000",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER or "/usr/bin/chromedriver"),
                              options=options)
    try:
        driver.get((out / "index.html").as_uri())
        rows = driver.find_elements(By.CSS_SELECTOR, "table.leaderboard tbody tr")
        assert len(rows) == len(ids)
        names = {r.find_element(By.CSS_SELECTOR, "td:nth-child(2) .note").text for r in rows}
        assert names == set(ids)
        # sort the largest group by ProbeScore: ascending, then descending
        group = max(driver.find_elements(By.CSS_SELECTOR, "table.leaderboard"),
                    key=lambda t: len(t.find_elements(By.CSS_SELECTOR, "tbody tr")))
        header = group.find_element(By.XPATH, ".//th[normalize-space()='ProbeScore']")

        def scores() -> list[float]:
            cells = group.find_elements(By.CSS_SELECTOR, "tbody td:nth-child(3)")
            return [float(c.get_attribute("data-value") or "nan") for c in cells]

        assert len(scores()) > 2
        header.click()
        assert scores() == sorted(scores())
        header.click()
        assert scores() == sorted(scores(), reverse=True)
        # the filter hides rows that do not match
        box = driver.find_element(By.ID, "filter-text")
        box.send_keys("probe-1")
        visible = [r for r in driver.find_elements(By.CSS_SELECTOR, "table.leaderboard tbody tr")
                   if r.is_displayed()]
        assert 0 < len(visible) < len(ids)
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(Keys.BACKSPACE)  # an input event, as a user deleting the text
        shown = [r for r in driver.find_elements(By.CSS_SELECTOR, "table.leaderboard tbody tr")
                 if r.is_displayed()]
        assert len(shown) == len(ids)
        driver.save_screenshot(str(tmp_path / "index.png"))
        assert (tmp_path / "index.png").stat().st_size > 10_000
        # follow a link to an entry page, then to a task page
        first = driver.find_element(By.CSS_SELECTOR,
                                    "table.leaderboard tbody tr td:nth-child(2) a")
        name = first.text
        first.click()
        assert driver.find_element(By.TAG_NAME, "h1").text
        assert "ProbeScore axes" in driver.page_source and name in driver.title
        link = driver.find_element(By.CSS_SELECTOR, "h2 a[href*='tasks/']")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)
        link.click()
        assert driver.find_element(By.TAG_NAME, "h1").text.startswith("Task ")
        assert "Baselines" in driver.page_source
        driver.save_screenshot(str(tmp_path / "task.png"))
    finally:
        driver.quit()


def test_two_builds_into_one_folder_take_turns(tmp_path: Path) -> None:
    """Two processes build into one folder at once: both succeed, one after the other,
    and the folder holds one whole leaderboard (no staging folder left behind)."""
    import subprocess
    import sys

    synthetic_registry(tmp_path / "registry", 6)
    out = tmp_path / "board"
    cmd = [sys.executable, "-m", "probebench", "leaderboard", "build", "--registry",
           str(tmp_path / "registry"), "--out", str(out), "--resamples", "50"]
    runs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, cwd=tmp_path) for _ in range(2)]
    outputs = [run.communicate(timeout=600)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert (out / "index.html").is_file() and (out / "leaderboard.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".board")) == [
        ".board.lock"]


# --- every axis in the joint resample, intervals never stretched -----------------------

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "registry"


@pytest.fixture(scope="module")
def reference_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildSummary]:
    """The leaderboard of the reference registry, as published (200 resamples), built
    once for the module: its folder and the build's summary."""
    out = tmp_path_factory.mktemp("reference") / "site"
    return out, build_leaderboard(REFERENCE, out, catalog=TaskCatalog.for_repo(REPO))


@pytest.fixture(scope="module")
def reference(reference_build: tuple[Path, BuildSummary]) -> tuple[dict[str, Any], BuildSummary]:
    """The reference leaderboard's leaderboard.json and the build's summary."""
    out, summary = reference_build
    return json.loads((out / "leaderboard.json").read_text()), summary


def _marks(score: dict[str, Any]) -> list[str]:
    """The axes of one probescores[] entry whose published value lies outside its
    published interval, then 'probescore' where the ProbeScore's does: read from the
    numbers alone, not from the build's own mark."""
    marked = [name for name, a in score["axes"].items()
              if not a["ci_low"] <= a["value"] <= a["ci_high"]]
    if not score["probescore_ci_low"] <= score["probescore"] <= score["probescore_ci_high"]:
        marked.append("probescore")
    return marked


def test_every_point_of_the_reference_registry_lies_in_its_interval(
        reference: tuple[dict[str, Any], BuildSummary]) -> None:
    """No interval is stretched to its point, and none needs to be: for every entry and
    every axis of the reference registry the point value lies inside the percentiles of
    its draws; the build's mark names exactly the points outside (here none)."""
    board, summary = reference
    assert len(board["probescores"]) >= 15
    spec = load_probescore_spec(board["spec_version"])
    outside = {}
    for score in board["probescores"]:
        assert list(score["axes"]) == [a.name for a in spec.axes]
        for axis in score["axes"].values():
            assert axis["ci_low"] <= axis["ci_high"]
        assert score["outside"] == _marks(score), score["entry_id"]
        if score["outside"]:
            outside[score["entry_id"]] = score["outside"]
    assert outside == {}
    assert summary.outside == []
    for ranking in board["rankings"]:  # the same draws as the entry's probescores[] row
        for row in ranking["entries"]:
            assert row["probescore_ci_low"] <= row["probescore"] <= row["probescore_ci_high"]
            mine = next(s for s in board["probescores"] if s["entry_id"] == row["entry_id"])
            assert (mine["probescore_ci_low"], mine["probescore_ci_high"]) == (
                row["probescore_ci_low"], row["probescore_ci_high"])


def _ratio(auroc: float, source: float) -> float:
    return min(1.0, max(0.0, (auroc - 0.5) / (source - 0.5)))


def test_the_transfer_axis_moves_in_the_resample_where_a_transfer_is_stored() -> None:
    """Spec 0.2.0 (the raw ratio, kept computable): every entry with a stored transfer
    ratio whose target AUROC's interval spans more than one ratio has a transfer axis
    that varies over the draws (it was 0 in every draw when a stand-in record failed the
    axis's ``isinstance`` test), and publishes each target's AUROC interval, its control
    AUROC and, where the axis is 0, why."""
    catalog = TaskCatalog.for_repo(REFERENCE.parent)
    spec = load_probescore_spec("0.2.0")
    selection = select_entries(REFERENCE, catalog)
    scores = score_entries(REFERENCE, selection, spec)
    ranks = rank_entries(selection, scores, spec, n_resamples=RANK_RESAMPLES, seed=0)
    board = {"probescores": [
        _entry_score(spec, e, selection, scores.breakdowns[e.id], ranks.entries[e.id])
        .model_dump() for e in selection.entries if e.id in ranks.entries]}
    name = next(a.name for a in spec.axes if a.source == "mapped_transfer")
    with_transfer = 0
    for score in board["probescores"]:
        records = latest_results(REFERENCE, score["entry_id"])
        stored = [(task, v) for task in score["tasks"]
                  for v in records[task].result.transfer.values() if isinstance(v, TransferOut)]
        axis = score["axes"][name]
        assert [(t["task"], t["target"], t["auroc"], t["auroc_ci_low"], t["auroc_ci_high"],
                 t["control_auroc"]) for t in axis["targets"]] == [
            (task, v.target, v.auroc.value if v.auroc else None,
             v.auroc.ci_low if v.auroc else None, v.auroc.ci_high if v.auroc else None,
             v.control_auroc) for task, v in stored]
        room = [v for _, v in stored if v.transfer is not None and v.auroc is not None
                and v.auroc.ci_low is not None and v.auroc.ci_high is not None
                and v.source_auroc is not None
                and _ratio(v.auroc.ci_low, v.source_auroc)
                < _ratio(v.auroc.ci_high, v.source_auroc)]
        if room:
            with_transfer += 1
            assert axis["ci_low"] < axis["ci_high"], score["entry_id"]
            assert axis["n_items"] == sum(records[t].result.n_items for t in score["tasks"])
        if axis["value"] == 0:
            measured = [v for _, v in stored if v.auroc is not None]
            # a probe whose position reads a span the corpus lacks (end_answer) has no
            # transfer measured at all, and its reason says so
            why = "target AUROC" if measured else "no transfer measured"
            assert axis["reason"] and why in axis["reason"], score["entry_id"]
        else:
            assert axis["reason"] is None
    assert with_transfer >= 15


def test_transfer_is_credited_only_above_its_control(
        reference: tuple[dict[str, Any], BuildSummary]) -> None:
    """Spec 0.3.0 (the default): in the built leaderboard.json no entry with a target
    AUROC interval that reaches its control's AUROC has a non-zero transfer axis, every
    target that is not credited says why, and a credited one has no reason."""
    board, _ = reference
    assert board["spec_version"] == "0.3.0"
    name = "cross_model_transfer"
    credited = 0
    for score in board["probescores"]:
        axis = score["axes"][name]
        targets = axis["targets"]
        reaching = [t for t in targets if t["auroc_ci_low"] is not None
                    and t["control_auroc"] is not None
                    and t["auroc_ci_low"] <= t["control_auroc"]]
        if targets and len(reaching) == len(targets):
            assert axis["value"] == 0, score["entry_id"]
            assert axis["reason"], score["entry_id"]
        for t in targets:
            if t in reaching:
                assert t["reason"] and ("does not lie above" in t["reason"]
                                        or "too few to judge" in t["reason"]), t
            elif t["reason"] is None:
                credited += 1
                assert t["transfer"] > 0
        if axis["value"] == 0:
            assert axis["reason"], score["entry_id"]
    # anaphor, det-noun (MiniLM), irregular-sv, npi-orc and the guard keep theirs
    assert credited >= 5


def test_a_point_outside_its_interval_is_marked_and_the_site_still_builds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stored AUROC its own predictions do not reproduce (0.99; they give about 0.95)
    lies above every draw: the build does not stretch the interval to it, it marks the
    entry and axis in leaderboard.json and prints a warning line, and the site builds."""
    registry = tmp_path / "registry"
    for part in ("probes", "results", "baselines", "sweeps"):
        shutil.copytree(REFERENCE / part, registry / part)
    shutil.copy(REFERENCE / "guards.yaml", registry / "guards.yaml")
    entry_id, task = ("probebench/blimp-det-noun-smollm2-135m-l15-v1",
                      "blimp_determiner_noun_agreement_1")
    path = result_path(registry, entry_id, task)
    doc = ResultHistory.model_validate_json(path.read_text())
    last = doc.history[-1]
    doc.history[-1] = last.model_copy(update={"result": last.result.model_copy(update={
        "auroc": last.result.auroc.model_copy(update={"value": 0.99})})})
    path.write_text(doc.to_json())
    out = tmp_path / "site"
    assert main(["leaderboard", "build", "--registry", str(registry), "--out", str(out),
                 "--resamples", "50", "--top", "1"]) == 0
    printed = capsys.readouterr().out
    # --top 0: one line, the count and the first ids, never a line per value
    assert main(["leaderboard", "build", "--registry", str(registry), "--out", str(out),
                 "--resamples", "50", "--top", "0"]) == 0
    quiet = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("  warning: ") and "outside" in line]
    board = json.loads((out / "leaderboard.json").read_text())
    assert len(quiet) == 1 and entry_id in quiet[0], quiet
    score = next(s for s in board["probescores"] if s["entry_id"] == entry_id)
    assert "auroc" in score["outside"] and score["outside"] == _marks(score)
    assert score["axes"]["auroc"]["value"] == 0.99 > score["axes"]["auroc"]["ci_high"]
    warnings = [line for line in printed.splitlines() if line.startswith("  warning: ")]
    assert len(warnings) == sum(len(s["outside"]) for s in board["probescores"])
    assert quiet[0].startswith(f"  warning: {len(warnings)} values outside their 95% interval")
    for axis in score["outside"]:
        assert any(f"{entry_id} on {{{task}}}: {axis} " in w and "outside its 95% interval" in w
                   for w in warnings), axis
    assert (out / "index.html").is_file() and (out / page_name(entry_id)).is_file()
    page = (out / page_name(entry_id)).read_text("utf-8")
    assert f"outside its 95% interval: {', '.join(score['outside'])}" in page
    others = [s for s in board["probescores"] if not s["outside"]]
    assert others and all("outside-mark" not in (out / page_name(s["entry_id"])).read_text(
        "utf-8") for s in others)


def test_no_axis_rests_on_fewer_items_than_its_minimum_without_a_flag(
        reference: tuple[dict[str, Any], BuildSummary]) -> None:
    """Spec 0.3.0: an eval-aware AUROC from a guard stratum with fewer than 10 items of a
    class is imputed and flagged (number-prep's was 1.000 [1.000, 1.000] from 2 of its 8
    items), a transfer on a task with fewer than 10 items of a class is imputed, and every
    interval from fewer than 20 items carries ``few_items``."""
    board, _ = reference
    for score in board["probescores"]:
        records = latest_results(REFERENCE, score["entry_id"])
        for name, axis in score["axes"].items():
            n = axis["n_items"]
            assert axis["few_items"] == (n is not None and n < FEW_ITEMS), (score, name)
        evalaware = score["axes"]["auroc_evalaware"]
        for task in score["tasks"]:
            kept = evalaware_items_per_class(records[task].result.predictions)
            if min(kept.values()) < MIN_ITEMS_PER_CLASS:
                assert evalaware["imputed"] and (f"fewer than {MIN_ITEMS_PER_CLASS}"
                                                 in evalaware["note"]
                                                 or "no guard" in evalaware["note"]
                                                 or "guard of" in evalaware["note"]), score
            fewest = min(items_per_class(records[task].result.predictions).values())
            transfer = score["axes"]["cross_model_transfer"]
            if fewest < MIN_ITEMS_PER_CLASS and len(score["tasks"]) == 1:
                assert transfer["imputed"] and transfer["value"] == 0, score["entry_id"]
    prep = next(s for s in board["probescores"]
                if s["entry_id"] == "probebench/syntaxgym-number-prep-smollm2-135m-l15-v2")
    evalaware = prep["axes"]["auroc_evalaware"]
    assert evalaware["imputed"] and evalaware["few_items"]
    assert (evalaware["value"], evalaware["ci_low"], evalaware["ci_high"]) != (1.0, 1.0, 1.0)
    assert evalaware["ci_low"] < evalaware["ci_high"]


def test_entries_not_shown_to_be_selective_carry_the_mark(
        reference: tuple[dict[str, Any], BuildSummary],
        reference_build: tuple[Path, BuildSummary]) -> None:
    """Every ranked entry whose selectivity interval is not above 0 (on a task with a
    computable control) is ``selective: false`` in leaderboard.json and carries "not shown
    to be selective" in its index row and on its entry page; one shown selective does
    not."""
    board, _ = reference
    out, _ = reference_build
    index = (out / "index.html").read_text()
    rows = {m.group(1): m.group(0) for m in re.finditer(
        r'<tr data-entry="([^"]+)".*?</tr>', index, re.DOTALL)}
    marked = 0
    for score in board["probescores"]:
        records = latest_results(REFERENCE, score["entry_id"])
        sels = [records[t].result.selectivity for t in score["tasks"]]
        lows = [s.selectivity.ci_low for s in sels
                if s is not None and s.selectivity.ci_low is not None]
        expected = None if not lows else all(low > 0 for low in lows)
        assert score["selective"] is expected, score["entry_id"]
        page = (out / page_name(score["entry_id"])).read_text()
        if expected is False:
            assert "not shown to be selective" in page
            if score["entry_id"] in rows:
                assert "not shown to be selective" in rows[score["entry_id"]]
                marked += 1
        else:
            assert "not shown to be selective" not in page
            if score["entry_id"] in rows:
                assert "not shown to be selective" not in rows[score["entry_id"]]
    assert marked >= 5  # every ranked verb-grammar entry, at least


def test_every_auroc_interval_on_the_index_carries_its_item_count(
        reference_build: tuple[Path, BuildSummary]) -> None:
    """Each AUROC cell of the index names the test items behind it, and one from fewer
    than 20 items shows the ‡ mark with its count (SyntaxGym's suites hold 8 to 14)."""
    out, _ = reference_build
    index = (out / "index.html").read_text()
    cells = re.findall(r'<td class="num" data-value="[0-9.]+" title="([^"]*)">([^<]*)(.*?)</td>',
                       index)
    assert len(cells) >= 10
    for title, _, rest in cells:
        found = re.search(r"over (\d+) test items", title)
        assert found, title
        n = int(found.group(1))
        assert (f"‡ {n} items" in rest) == (n < FEW_ITEMS), (title, rest)
    counts = [re.search(r"over (\d+)", t) for t, _, _ in cells]
    assert any(m is not None and int(m.group(1)) < FEW_ITEMS for m in counts)
