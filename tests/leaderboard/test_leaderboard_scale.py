"""The leaderboard at scale: small pages, each file stored once, incremental builds, a
paged index, a quiet ``--top 0``.

One synthetic registry of real-size results (150 items, three records each: about a
stored result's size) with artifact folders and a guard, built once with the CLI
(``--top 0 --index-rows 2``); the incremental tests build small registries of their own.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import pytest
import yaml

from probebench.cli import main
from probebench.leaderboard.build import ENTRIES_JS, build_leaderboard, family_page, page_name
from probebench.leaderboard.files import compact_json, slug
from probebench.leaderboard.incremental import MANIFEST
from probebench.registry.entry import entry_path
from probebench.registry.mirror import blob_path
from probebench.registry.store import result_path
from probebench.tasks.catalog import TaskCatalog
from tests.leaderboard.test_build_browser import _errors, _open, browser
from tests.leaderboard.test_build_browser import driver as driver
from tests.registry_fixture import synthetic_registry

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

PAGE_BYTES = 100_000
N_ENTRIES = 5
INDEX_ROWS = 2


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str], str]:
    root = tmp_path_factory.mktemp("scale")
    registry = root / "registry"
    ids = synthetic_registry(registry, N_ENTRIES, artifacts=True, n_items=150, history=3)
    (registry / "guards.yaml").write_text(yaml.safe_dump({"smollm2-135m": ids[0]}))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["leaderboard", "build", "--registry", str(registry), "--out",
                     str(root / "site"), "--resamples", "20", "--top", "0",
                     "--index-rows", str(INDEX_ROWS)]) == 0
    return registry, root / "site", ids, out.getvalue()


def _shown(board: Path, ids: list[str]) -> list[str]:
    return [i for i in ids if (board / page_name(i)).is_file()]


def test_entry_pages_and_their_data_stay_under_100_kb(
        site: tuple[Path, Path, list[str], str]) -> None:
    registry, board, ids, _ = site
    shown = _shown(board, ids)
    assert len(shown) >= N_ENTRIES - 2
    # the results are of a real stored result's size: the bound is not met by small inputs
    sizes = [result_path(registry, i, t).stat().st_size for i in shown
             for t in ("verb_grammar", "blimp_passive_1")
             if result_path(registry, i, t).is_file()]
    assert min(sizes) > 40_000
    for entry_id in shown:
        page = board / page_name(entry_id)
        assert page.stat().st_size < PAGE_BYTES, page
        own = board / "files" / slug(entry_id)  # what the build generates for the entry
        data = sum(p.stat().st_size for p in own.rglob("*") if p.is_file())
        assert page.stat().st_size + data < PAGE_BYTES, entry_id


def test_every_file_is_stored_once_and_the_page_links_its_blob(
        site: tuple[Path, Path, list[str], str]) -> None:
    registry, board, ids, _ = site
    by_content = Counter(hashlib.sha256(p.read_bytes()).hexdigest()
                         for p in board.rglob("*") if p.is_file())
    entry_id = _shown(board, ids)[1]
    k = int(re.search(r"probe(\d+)-", entry_id).group(1))  # type: ignore[union-attr]
    artifact = registry.parent / "artifacts" / f"p{k}"
    html = (board / page_name(entry_id)).read_text()
    for path in [*sorted(artifact.iterdir()), entry_path(registry, entry_id),
                 result_path(registry, entry_id, "blimp_passive_1")]:
        data = path.read_bytes()
        if path.parent.parent.parent.name == "results":  # a stored result: stored compact
            data = compact_json(data)
        digest = hashlib.sha256(data).hexdigest()
        assert by_content[digest] == 1, path  # one copy, for the mirror and the page
        assert f'href="../{blob_path(digest)}" download="{path.name}"' in html, path
    assert not list((board / "files").rglob("artifact"))
    assert not list((board / "files").rglob("*.json"))


def test_top_0_prints_no_guard_id(site: tuple[Path, Path, list[str], str]) -> None:
    _, board, ids, printed = site
    guards = [i for i in ids if i in (board / "guards.html").read_text()]
    assert guards  # the registry has guards, and the build knows them
    assert "guards (never ranked): guards.html" in printed
    # (a warning about a value outside its interval names its entry, guard or not)
    told = "\n".join(line for line in printed.splitlines() if "warning:" not in line)
    for entry_id in ids:
        assert entry_id not in told


def test_the_index_writes_the_top_rows_and_lists_every_entry_in_a_script(
        site: tuple[Path, Path, list[str], str]) -> None:
    _, board, _, _ = site
    index = (board / "index.html").read_text()
    for table in re.findall(r'<table class="sortable ranked leaderboard".*?</table>', index,
                            re.S):
        assert len(re.findall(r"<tr data-entry=", table)) <= INDEX_ROWS
    assert "truncated" in index and '<script src="entries.js"></script>' in index
    assert 'href="leaderboard.csv"' in index  # without JS: the downloads
    text = (board / ENTRIES_JS).read_text()
    data = json.loads(text.split("window.PROBEBENCH_ENTRIES = ", 1)[1].rstrip().rstrip(";"))
    listed = {row[data["fields"].index("id")] for row in data["rows"]}
    leaderboard = json.loads((board / "leaderboard.json").read_text())
    ranked = {r["entry_id"] for g in leaderboard["rankings"] for r in g["entries"]}
    assert ranked <= listed and len(listed) > INDEX_ROWS
    assert data["page_rows"] == INDEX_ROWS


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_incremental_build_renders_only_changed_pages_and_equals_a_full_build(
        tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    ids = synthetic_registry(registry, 4, artifacts=True)
    catalog = TaskCatalog.default()
    board = tmp_path / "site"
    first = build_leaderboard(registry, board, catalog=catalog, n_resamples=20)
    assert (first.rendered, first.reused) == (first.entries, 0)
    before = {i: (board / page_name(i)).stat().st_ino for i in _shown(board, ids)}
    # a change that moves no rank: one entry's tagline
    changed = _shown(board, ids)[2]
    path = entry_path(registry, changed)
    path.write_text(path.read_text().replace("tagline: Synthetic probe",
                                             "tagline: A re-worded probe"))
    second = build_leaderboard(registry, board, catalog=catalog, n_resamples=20)
    assert (second.rendered, second.reused) == (1, first.entries - 1)
    after = {i: (board / page_name(i)).stat().st_ino for i in before}
    # the reused pages are the previous build's files (hard links), the changed one is new
    assert [i for i in before if before[i] != after[i]] == [changed]
    assert "A re-worded probe" in (board / page_name(changed)).read_text()
    # new results of one entry: only its page is rendered, though other entries' ranks
    # move (ranks live in ranks/<xx>.js, which every build writes afresh)
    synthetic_registry(registry, 1, seed=7, artifacts=True)
    third = build_leaderboard(registry, board, catalog=catalog, n_resamples=20)
    assert (third.rendered, third.reused) == (1, first.entries - 1)
    full = tmp_path / "full"
    build_leaderboard(registry, full, catalog=catalog, n_resamples=20)
    assert _tree(board) == _tree(full)  # every file, byte for byte
    manifest = json.loads((board / MANIFEST).read_text())
    assert sorted(manifest["pages"]) == sorted(page_name(i) for i in before)


@browser
def test_the_entry_list_pages_and_filters(site: tuple[Path, Path, list[str], str],
                                          driver: WebDriver) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _, board, _, _ = site
    _open(driver, board / "index.html")

    def rows() -> list[str]:
        return [r.get_attribute("data-entry") or "" for r in
                driver.find_elements(By.CSS_SELECTOR, "#entry-list tbody tr")]

    data = driver.execute_script("return window.PROBEBENCH_ENTRIES")
    n = len(data["rows"])
    first = rows()
    assert len(first) == INDEX_ROWS
    label = driver.find_element(By.ID, "entry-page")
    pages = -(-n // INDEX_ROWS)
    assert label.text == f"page 1 of {pages} ({n} entries)"
    seen = list(first)
    for k in range(2, pages + 1):
        driver.find_element(By.ID, "entry-next").click()
        assert label.text.startswith(f"page {k} of {pages}")
        seen += rows()
    assert not driver.find_element(By.ID, "entry-next").is_enabled()
    assert sorted(seen) == sorted(r[0] for r in data["rows"])  # every entry, once
    driver.find_element(By.ID, "entry-prev").click()
    assert label.text.startswith(f"page {pages - 1} of")
    target = data["rows"][-1][0]
    driver.find_element(By.ID, "entry-search").send_keys(target)
    assert rows() == [target] and label.text == "page 1 of 1 (1 entries)"
    link = driver.find_element(By.CSS_SELECTOR, "#entry-list tbody a")
    assert (link.get_attribute("href") or "").endswith(page_name(target))
    driver.find_element(By.ID, "entry-search").clear()
    driver.find_element(By.ID, "entry-search").send_keys(" ")
    Select(driver.find_element(By.ID, "entry-status")).select_by_visible_text("guard")
    status = data["fields"].index("status")
    names = data["codes"].get("status")  # a column of few values is written as codes

    def status_of(row: list[Any]) -> str:
        return str(names[row[status]] if names else row[status])

    assert "guard" in {status_of(r) for r in data["rows"]}
    assert set(rows()) <= {r[0] for r in data["rows"] if status_of(r) == "guard"} and rows()
    assert not _errors(driver)


def _script_data(path: Path, name: str) -> object:
    text = path.read_text()
    return json.loads(text.split(f"window.{name} = ", 1)[1].rstrip().rstrip(";"))


def _ranked_rows(board: Path) -> dict[str, tuple[int, int, int, int]]:
    """entry id -> (rank, best, worst, ranked entries of its group), from leaderboard.json."""
    leaderboard = json.loads((board / "leaderboard.json").read_text())
    out = {}
    for g in leaderboard["rankings"]:
        n = sum(r["rank"] is not None for r in g["entries"])
        for r in g["entries"]:
            if r["rank"] is not None:
                out[r["entry_id"]] = (r["rank"], r["rank_best"], r["rank_worst"], n)
    return out


def test_an_entry_page_holds_no_rank_and_its_rank_script_does(
        site: tuple[Path, Path, list[str], str]) -> None:
    """The static page links its ranking (no rank number: other entries' results move it);
    the rank script it loads holds the rank leaderboard.json has."""
    _, board, _, _ = site
    ranked = _ranked_rows(board)
    assert ranked
    for entry_id, (rank, best, worst, n) in ranked.items():
        html = (board / page_name(entry_id)).read_text()
        script = re.search(r'<script src="\.\./(ranks/[0-9a-f]{2}\.js)"></script>', html)
        assert script is not None, entry_id
        assert f'<span class="entry-rank" data-entry="{entry_id}"><a href="../families/' \
            in html
        assert f"{rank} [{best}, {worst}] of {n}" not in html
        ranks = _script_data(board / script.group(1), "PROBEBENCH_RANKS")
        assert ranks[entry_id]["set"] == [rank, best, worst, n]  # type: ignore[index]


def test_family_and_task_pages_write_the_top_rows_and_list_every_entry_in_a_script(
        site: tuple[Path, Path, list[str], str]) -> None:
    _, board, _, _ = site
    pages = sorted((board / "tasks").glob("*.html")) + sorted((board / "families").glob("*.html"))
    assert pages
    leaderboard = json.loads((board / "leaderboard.json").read_text())
    for page in pages:
        html = page.read_text()
        for table in re.findall(r'<table class="sortable ranked.*?</table>', html, re.S):
            assert len(re.findall(r"<tr[^>]*data-entry=", table)) <= INDEX_ROWS, page
        data_js = page.with_name(page.name.removesuffix(".html") + ".data.js")
        assert f'<script src="{data_js.name}"></script>' in html
        data = _script_data(data_js, "PROBEBENCH_ENTRIES")
        listed = [row[0] for row in data["rows"]]  # type: ignore[index]
        assert len(listed) == len(set(listed))
        if page.parent.name == "tasks":  # every live or pending entry with a result on it
            task = page.stem
            expected = {r["entry_id"] for r in leaderboard["results"]
                        if r["task"] == task and r["status"] != "deprecated"}
            assert set(listed) == expected, page
        else:
            family = {g["family"] for g in leaderboard["rankings"]
                      if family_page(g["family"]) == f"families/{page.name}"}
            ranked = {r["entry_id"] for g in leaderboard["rankings"] if g["family"] in family
                      for r in g["entries"]}
            assert ranked <= set(listed), page
        if len(listed) > INDEX_ROWS:
            assert "truncated" in html, page


@browser
def test_an_entry_page_shows_its_rank_from_its_rank_script(
        site: tuple[Path, Path, list[str], str], driver: WebDriver) -> None:
    from selenium.webdriver.common.by import By

    _, board, _, _ = site
    entry_id, (rank, best, worst, n) = sorted(_ranked_rows(board).items())[0]
    _open(driver, board / page_name(entry_id))
    span = driver.find_element(By.CSS_SELECTOR, ".entry-rank:not([data-task])")
    assert span.text == f"{rank} [{best}, {worst}] of {n}"
    assert not span.find_elements(By.TAG_NAME, "a")  # text, not the fallback link
    assert not _errors(driver)


@browser
def test_a_task_page_pages_every_entry_on_the_task(
        site: tuple[Path, Path, list[str], str], driver: WebDriver) -> None:
    from selenium.webdriver.common.by import By

    _, board, _, _ = site
    page = max((board / "tasks").glob("*.html"),
               key=lambda p: p.with_name(p.stem + ".data.js").stat().st_size)
    _open(driver, page)
    data = driver.execute_script("return window.PROBEBENCH_ENTRIES")
    n = len(data["rows"])
    assert n > INDEX_ROWS
    seen: list[str] = []
    for _k in range(-(-n // INDEX_ROWS)):
        seen += [r.get_attribute("data-entry") or "" for r in
                 driver.find_elements(By.CSS_SELECTOR, "#entry-list tbody tr")]
        driver.find_element(By.ID, "entry-next").click()
    assert sorted(seen) == sorted(r[0] for r in data["rows"])
    link = driver.find_element(By.CSS_SELECTOR, "#entry-list tbody a")
    target = Path(unquote(urlparse(link.get_attribute("href") or "").path))
    assert target.is_file() and target.parent.name == "entries"
    assert not _errors(driver)
