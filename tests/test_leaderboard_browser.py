"""The leaderboard a researcher reads and cites, checked as built and in a real browser.

One registry per module: a copy of the repository's ``registry/`` (artifacts, results,
baselines, sweeps), plus a pending copy of a verb-grammar entry and a hostile entry
whose every submitter-controlled field (name, short name, author, tagline, paper,
Colab link, description, notice, README, extra artifact files) carries a script, an
event handler, a ``javascript:`` URL or an SVG payload. One board build, one browser.

Without a browser (always): every link of every page resolves (a crawler over the
files), the downloads validate against their schema, the build is deterministic byte
for byte, ``--source-url`` links repository files there. In Debian's Chromium (skipped
when chromium/chromedriver are missing, unless PROBEBENCH_REQUIRE_BROWSER=1): no
horizontal overflow at 1400 x 1000 and 390 x 844, sorting, filters and the axis
toggle work, an entry page shows its baselines, provenance and working file links, and
no page logs a console error or runs a hostile payload.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from probebench.leaderboard.build import BuildSummary, build_leaderboard, page_name
from probebench.leaderboard.downloads import csv_columns
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.store import latest_results
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_registry
from tests.test_leaderboard_views import (
    DET_MINI,
    DET_SMOL,
    DET_TASK,
    GUARD,
    REPO,
    VERB_PENDING,
    _copy_entry,
    _match_stored_results,
)

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
REQUIRE = os.environ.get("PROBEBENCH_REQUIRE_BROWSER") == "1"
browser = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER) and not REQUIRE,
                             reason="Debian chromium and chromium-driver are not installed")
RESAMPLES = 30
VERB = "probebench/verb-grammar-smollm2-135m-l15-v2"
HOSTILE = "mallory/blimp-det-noun-smollm2-135m-l15-v1"
HOSTILE_FOLDER = "mallory-det-noun"
SIZES = {"desktop": (1400, 1000), "phone": (390, 844)}

#: every payload tries to set window.__pwned, change the title or open an alert
JS = "window.__pwned=1;document.title='PWNED'"
HOSTILE_FIELDS = {
    "name": f"<script>{JS}</script>Det-noun <b>bold</b>",
    "short_name": "<svg onload=window.__pwned=1>",
    "author": f'"><img src=x onerror="{JS}">Mallory',
    "tagline": f"<svg><script>{JS}</script></svg><iframe src=javascript:alert(1)>",
    "paper": f"javascript:{JS}",
    "paper_title": f"<a href=\"javascript:{JS}\">a paper</a>",
    "colab_url": f"javascript:alert(1)//{JS}",
    "description": f"**bold** `<script>{JS}</script>` <img src=x onerror=alert(1)>",
    "notice": "<style>body{display:none}</style><script>alert(1)</script>",
    "category": "<b onmouseover=alert(1)>grammar</b>",
    "reproducer_notebook": "train.ipynb",
    "artifact_url": f"registry/artifacts/{HOSTILE_FOLDER}",
}
HOSTILE_README = f"""# <script>{JS}</script> Hostile README

<img src=x onerror="{JS}">
<svg xmlns="http://www.w3.org/2000/svg" onload="{JS}"><script>{JS}</script></svg>

A [javascript link](javascript:{JS}), a [data link](data:text/html,<script>alert(1)</script>),
an ![image](javascript:{JS}) and [the notebook](train.ipynb) and [a page](evil.html).

| col | <script>{JS}</script> |
| --- | --- |
| <iframe src="javascript:{JS}"></iframe> | `<b>` |

```html
<script>{JS}</script>
```
"""


def make_registry(root: Path) -> Path:
    """The repository's registry, a pending entry and a hostile one (module docstring)."""
    shutil.copytree(REPO / "registry", root, ignore=shutil.ignore_patterns("__pycache__"))
    _match_stored_results(root)
    _copy_entry(root, "probebench/verb-grammar-smollm2-135m-l8-v2", VERB_PENDING,
                tasks={"verb_grammar": "probebench/verb-grammar-smollm2-135m-l8-v2"},
                short_name="verb-grammar-pending", status="pending_review")
    folder = root / "artifacts" / HOSTILE_FOLDER
    shutil.copytree(root / "artifacts" / "blimp-det-noun-smollm2-135m-l15-v1", folder)
    (folder / "README.md").write_text(HOSTILE_README)
    (folder / "evil.html").write_text(f"<script>{JS}</script>")
    (folder / "evil.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg" '
                                     f'onload="{JS}"/>')
    entry_path(root, HOSTILE).parent.mkdir(parents=True)
    _copy_entry(root, DET_SMOL, HOSTILE, tasks={DET_TASK: DET_SMOL}, **HOSTILE_FIELDS)
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, BuildSummary]:
    root = tmp_path_factory.mktemp("board")
    registry = make_registry(root / "registry")
    summary = build_leaderboard(registry, root / "board", catalog=TaskCatalog.for_repo(REPO),
                                n_resamples=RESAMPLES)
    return registry, root / "board", summary


def pages(board: Path) -> list[Path]:
    return sorted(board.rglob("*.html"))


class _Links(HTMLParser):
    """Every URL a page refers to, every id it defines, every tag and attribute name."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            self.attributes.add(name)
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src", "action", "formaction", "xlink:href") and value:
                self.urls.append(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text("utf-8"))
    return parser


# --- without a browser --------------------------------------------------------------

def test_every_link_on_every_page_resolves(built: tuple[Path, Path, BuildSummary]) -> None:
    """A crawler over the built leaderboard: every local link leads to a file inside the leaderboard
    (and to an id that exists, when it has a fragment); the only other links are http(s)
    ones (a paper, the hub), never javascript:, data: or file:."""
    _, board, _ = built
    parsed = {p: _parse(p) for p in pages(board)}
    local = external = 0
    targets: set[Path] = set()
    for page, links in parsed.items():
        for url in links.urls:
            parts = urlsplit(url)
            if parts.scheme:
                assert parts.scheme in ("http", "https") and parts.netloc, (page, url)
                assert not url.startswith("http://www.w3.org"), (page, url)
                external += 1
                continue
            assert not url.startswith("//"), (page, url)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            assert target.is_relative_to(board.resolve()), (page, url)
            assert target.is_file(), (page, url)
            if parts.fragment and target.suffix == ".html":
                assert parts.fragment in parsed[target].ids, (page, url)
            targets.add(target)
            local += 1
    assert local > 500
    # the files behind the numbers are among the targets: results, reports, notebooks
    names = {t.relative_to(board.resolve()).as_posix() for t in targets}
    verb = "files/probebench__verb-grammar-smollm2-135m-l15-v2"
    for expected in (f"{verb}/results/verb_grammar.json", f"{verb}/reports/verb_grammar/REPORT.md",
                     f"{verb}/artifact/train.ipynb", f"{verb}/artifact/eval.ipynb",
                     f"{verb}/artifact/probe.safetensors", f"{verb}/entry.yaml",
                     "leaderboard.json", "leaderboard.csv", "leaderboard.schema.json"):
        assert expected in names, expected
    report = (board / verb / "reports/verb_grammar/REPORT.md").read_text()
    assert report.startswith("# probebench report: ") and "| verb_grammar | 1 |" in report
    # an artifact folder cannot put a page or an SVG on the leaderboard's origin
    assert not list((board / "files").rglob("*.html")) and not list(board.rglob("*.svg"))
    assert (board / f"files/{HOSTILE.replace('/', '__')}/artifact/README.md").is_file()


def test_downloads_hold_one_row_per_entry_and_task_and_validate(
        built: tuple[Path, Path, BuildSummary]) -> None:
    import jsonschema

    registry, board, summary = built
    doc = json.loads((board / "leaderboard.json").read_text())
    schema = json.loads((board / "leaderboard.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema)
    skipped = {s.split(":")[0] for s in summary.skipped}
    expected = set()
    for path in sorted((registry / "probes").rglob("*.yaml")):
        e = read_entry(path)
        if e.id not in skipped:
            expected |= {(e.id, t) for t in latest_results(registry, e.id) if t in e.tasks}
    assert len(expected) > 10
    rows = list(csv.DictReader((board / "leaderboard.csv").open(newline="")))
    with (board / "leaderboard.csv").open(newline="") as handle:
        assert next(csv.reader(handle)) == csv_columns()
    assert len(rows) == len(expected) == len(doc["results"])
    assert {(r["entry_id"], r["task"]) for r in rows} == expected
    assert {(r["entry_id"], r["task"]) for r in doc["results"]} == expected
    # the CSV and the JSON say the same; every number is the stored one
    verb = next(r for r in rows if r["entry_id"] == VERB)
    stored = latest_results(registry, VERB)["verb_grammar"].result
    assert float(verb["auroc"]) == stored.auroc.value
    assert float(verb["auroc_ci_low"]) == stored.auroc.ci_low
    assert verb["status"] == "live" and verb["guard"] == "false" and verb["task_rank"]
    guard = next(r for r in doc["results"] if r["entry_id"] == GUARD)
    assert guard["guard"] is True and guard["task_rank"] is None
    assert {tuple(g["tasks"]) for g in doc["rankings"]} == {
        t.tasks for t in summary.ranking}
    for group in doc["rankings"]:
        for r in group["entries"]:
            assert r["probescore_ci_low"] <= r["probescore"] <= r["probescore_ci_high"]
            if r["beats_baselines"] is True:
                assert r["rank_best"] <= r["rank"] <= r["rank_worst"]
            else:  # listed after the ranked entries, unranked, with the reason
                assert r["rank"] is r["rank_best"] is r["rank_worst"] is None
                assert r["unranked"]
    index = (board / "index.html").read_text()
    for name in ("leaderboard.json", "leaderboard.csv", "leaderboard.schema.json"):
        assert f'href="{name}"' in index


def test_every_file_of_the_build_is_deterministic(tmp_path: Path) -> None:
    synthetic_registry(tmp_path / "registry", 5)
    catalog = TaskCatalog.default()
    for name in ("a", "b"):
        build_leaderboard(tmp_path / "registry", tmp_path / name, catalog=catalog,
                          n_resamples=20)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*")
                   if p.is_file())
    assert Path("leaderboard.json") in files and Path("leaderboard.csv") in files
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*")
                           if p.is_file())
    for rel in files:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_source_url_links_repository_files_there(built: tuple[Path, Path, BuildSummary],
                                                 tmp_path: Path) -> None:
    """With --source-url, repository files are linked under it (each to a file that
    exists at that path of the repository) and not copied; REPORT.md stays generated."""
    from probebench.cli import main
    from probebench.errors import InputError

    registry, _, _ = built
    base = "https://github.com/example/probebench/blob/0123456789abcdef"
    board = tmp_path / "board"
    assert main(["leaderboard", "build", "--registry", str(registry), "--out", str(board),
                 "--resamples", "10", "--top", "0", "--source-url", base]) == 0
    page = _parse(board / page_name(VERB))
    linked = [u for u in page.urls if u.startswith(base + "/")]
    assert len(linked) >= 10
    for url in linked:
        assert (registry.parent / unquote(url[len(base) + 1:])).is_file(), url
    assert any(u.endswith("results/probebench/verb-grammar-smollm2-135m-l15-v2/"
                          "verb_grammar.json") for u in linked)
    assert not list((board / "files").rglob("*.json"))  # nothing copied but the reports
    assert list((board / "files").rglob("REPORT.md"))
    with pytest.raises(InputError, match="source URL"):
        build_leaderboard(registry, tmp_path / "bad", catalog=TaskCatalog.for_repo(REPO),
                          n_resamples=10, source_url="javascript:alert(1)")


def test_hostile_fields_are_escaped_in_the_html(built: tuple[Path, Path, BuildSummary]) -> None:
    """No submitter-controlled text becomes a tag, an attribute or a link: the only
    scripts are the leaderboard's own, no element carries an event handler, no link is
    javascript:."""
    _, board, _ = built
    for page in pages(board):
        html = page.read_text()
        scripts = re.findall(r"<script\b[^>]*>", html, re.IGNORECASE)
        assert all(re.fullmatch(r'<script src="(\.\./)*static/app\.js">', s)
                   for s in scripts), (page, scripts)
        parsed = _parse(page)
        assert not {a for a in parsed.attributes if a.startswith("on")}, page
        assert not parsed.tags & {"iframe", "img", "style", "object", "embed", "form"}, page
        assert "javascript:" not in html.lower() or page.name.startswith("mallory__"), page
    hostile = (board / page_name(HOSTILE)).read_text()
    assert "&lt;script&gt;" in hostile and "javascript:" in hostile  # shown, as text
    assert 'href="javascript' not in hostile.lower()
    links = _parse(board / page_name(HOSTILE)).urls
    assert not [u for u in links if urlsplit(u).scheme not in ("", "http", "https")]


# --- in Debian's Chromium -------------------------------------------------------------

@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not (CHROMIUM and CHROMEDRIVER) and not REQUIRE:
        pytest.skip("Debian chromium and chromium-driver are not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1400,1000",
                 f"--user-data-dir={tmp_path_factory.mktemp('profile')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(CHROMEDRIVER or "/usr/bin/chromedriver"),
                              options=options)
    try:
        yield chrome
    finally:
        chrome.quit()


def _open(driver: WebDriver, page: Path, size: str = "desktop") -> None:
    driver.set_window_size(*SIZES[size])
    driver.get(page.as_uri())


def _errors(driver: WebDriver) -> list[dict[str, Any]]:
    logs: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return [e for e in logs if e.get("level") == "SEVERE"]


def _overflow(driver: WebDriver) -> int:
    """How far the page is wider than the window (0: no horizontal scrolling)."""
    return int(driver.execute_script(
        "var d = document.documentElement; return d.scrollWidth - d.clientWidth;"))


@browser
@pytest.mark.parametrize("size", list(SIZES))
def test_pages_fit_the_window_without_horizontal_scrolling(
        built: tuple[Path, Path, BuildSummary], driver: WebDriver, size: str) -> None:
    from selenium.webdriver.common.by import By

    _, board, _ = built
    for page in (board / "index.html", board / page_name(VERB), board / "tasks/verb_grammar.html",
                 board / "families/blimp.html", board / page_name(HOSTILE)):
        _open(driver, page, size)
        assert _overflow(driver) == 0, (size, page.name)
    _open(driver, board / "index.html", size)
    tables = driver.find_elements(By.CSS_SELECTOR, "table.leaderboard")
    assert len(tables) >= 5
    if size == "desktop":  # every default column is on screen, no table scrolls
        for table in tables:
            wrap = table.find_element(By.XPATH, "..")
            assert driver.execute_script("return arguments[0].scrollWidth <= "
                                         "arguments[0].clientWidth;", wrap)
        heads = [th.text for th in tables[0].find_elements(By.CSS_SELECTOR, "th")
                 if th.is_displayed()]
        assert heads == ["Rank", "Entry", "ProbeScore", "AUROC", "Baseline gap",
                         "Selectivity", "Model", "Site", "Task set"]
        for th in tables[0].find_elements(By.CSS_SELECTOR, "th"):
            assert len(th.get_attribute("title") or "") > 20  # its definition
    assert not _errors(driver)


@browser
def test_sorting_filters_and_axis_columns(built: tuple[Path, Path, BuildSummary],
                                          driver: WebDriver) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _, board, _ = built
    _open(driver, board / "index.html")

    def visible_rows() -> list[Any]:
        return [r for r in driver.find_elements(
            By.CSS_SELECTOR, "table.leaderboard tbody tr, table.filterable tbody tr")
            if r.is_displayed()]

    every = visible_rows()
    assert len(every) >= 14
    # sort the verb-grammar table by AUROC, both ways
    table = driver.find_element(By.CSS_SELECTOR, "table.leaderboard[data-tasks='verb_grammar']")
    header = table.find_element(By.XPATH, ".//th[normalize-space()='AUROC']")

    def column(n: int) -> list[float]:
        return [float(c.get_attribute("data-value") or "nan")
                for c in table.find_elements(By.CSS_SELECTOR, f"tbody td:nth-child({n})")]

    header.click()
    assert column(4) == sorted(column(4)) and len(set(column(4))) > 1
    header.click()
    assert column(4) == sorted(column(4), reverse=True)
    # the filters: family, task, model, status, and the free text; sections follow
    scope = Select(driver.find_element(By.CSS_SELECTOR, "select[data-filter='scope']"))
    scope.select_by_value("family:blimp")
    rows = visible_rows()
    assert rows and {r.get_attribute("data-family") for r in rows} == {"blimp"}
    assert not driver.find_element(By.ID, "family-verbs").is_displayed()
    assert driver.find_element(By.ID, "family-blimp").is_displayed()
    scope.select_by_value(f"task:{DET_TASK}")
    assert {r.get_attribute("data-entry") for r in visible_rows()} == {DET_SMOL, DET_MINI,
                                                                        HOSTILE}
    model = Select(driver.find_element(By.CSS_SELECTOR, "select[data-filter='model']"))
    model.select_by_visible_text("minilm-l6")
    assert [r.get_attribute("data-entry") for r in visible_rows()] == [DET_MINI]
    scope.select_by_value("")
    model.select_by_value("")
    status = Select(driver.find_element(By.CSS_SELECTOR, "select[data-filter='status']"))
    status.select_by_visible_text("pending_review")
    assert [r.get_attribute("data-entry") for r in visible_rows()] == [VERB_PENDING]
    status.select_by_visible_text("guard")
    assert [r.get_attribute("data-entry") for r in visible_rows()] == [GUARD]
    status.select_by_visible_text("live")
    assert all(r.get_attribute("data-status") == "live" for r in visible_rows())
    status.select_by_value("")
    text = driver.find_element(By.ID, "filter-text")
    text.send_keys("no entry is called this")
    assert not visible_rows() and driver.find_element(By.ID, "filter-empty").is_displayed()
    text.clear()
    text.send_keys(" ")  # clear() sends no input event; a space matches every row
    assert len(visible_rows()) == len(every)
    # the axis columns are hidden until asked for
    axis = table.find_element(By.CSS_SELECTOR, "th.axis-col")
    assert not axis.is_displayed()
    driver.find_element(By.ID, "show-axes").click()
    assert axis.is_displayed() and axis.text == "Eval-aware AUROC"
    assert not _errors(driver)


@browser
def test_entry_page_shows_baselines_provenance_and_working_links(
        built: tuple[Path, Path, BuildSummary], driver: WebDriver) -> None:
    from selenium.webdriver.common.by import By

    _, board, _ = built
    page = board / page_name(VERB)
    _open(driver, page)
    baselines = driver.find_element(By.CSS_SELECTOR, "#task-verb_grammar table.baselines")
    methods = [td.text.split("\n")[0] for td in
               baselines.find_elements(By.CSS_SELECTOR, "tbody td:first-child")]
    assert methods[0] == "this probe" and {"majority", "length", "random_features",
                                           "surprisal"} <= set(methods)
    provenance = driver.find_element(By.CSS_SELECTOR, "#task-verb_grammar table.provenance")
    labels = [th.text for th in provenance.find_elements(By.TAG_NAME, "th")]
    for label in ("evaluated", "probebench", "device / dtype", "hardware", "test set",
                  "artifact bundle"):
        assert label in labels
    assert "commit" in provenance.text and "sha256" in provenance.text
    assert "@misc{probebench:" in driver.find_element(By.ID, "bibtex").text
    command = driver.find_element(By.ID, "reproduce-cmd").text
    assert f"probebench registry evaluate {VERB} --no-store --seed 0" in command
    assert "git checkout" in command
    # every file link of the page opens the file it names
    hrefs = [a.get_attribute("href") or "" for a in driver.find_elements(
        By.CSS_SELECTOR, "#files a, .files-line a, #probe a")]
    files = [h for h in hrefs if "/files/" in h]
    assert len(files) >= 10
    for href in files:  # each is a file of the leaderboard (binary ones are not opened here)
        assert Path(unquote(urlsplit(href).path)).is_file(), href
    opened = [h for h in files if h.endswith((".json", ".md"))]
    assert any(h.endswith("REPORT.md") for h in opened)
    for href in opened:
        driver.get(href)
        body = driver.find_element(By.TAG_NAME, "body").text
        if href.endswith("REPORT.md"):
            assert "# probebench report: " in body and "verb_grammar" in body
        elif href.endswith("verb_grammar.json"):
            assert json.loads(body)["entry"] == VERB
        else:
            assert body.strip(), href
    assert not _errors(driver)


@browser
def test_no_page_logs_an_error_or_runs_a_hostile_payload(
        built: tuple[Path, Path, BuildSummary], driver: WebDriver) -> None:
    """Every page, in the browser: no console error, no payload ran (no alert, no
    window.__pwned, the title unchanged), and the hostile entry's text is shown as
    text."""
    from selenium.common.exceptions import UnexpectedAlertPresentException
    from selenium.webdriver.common.by import By

    _, board, _ = built
    visited = 0
    for page in pages(board):
        for size in (("desktop", "phone") if page.name in ("index.html",
                                                            page_name(HOSTILE)[8:])
                     else ("desktop",)):
            try:
                _open(driver, page, size)
                state = driver.execute_script("return [window.__pwned === undefined, "
                                              "document.title];")
            except UnexpectedAlertPresentException:  # pragma: no cover - a failure
                pytest.fail(f"{page}: a hostile payload opened an alert")
            assert state[0] and "PWNED" not in state[1], page
            assert state[1].endswith("· probebench"), page
            assert not _errors(driver), page
            visited += 1
    assert visited > 30
    _open(driver, board / page_name(HOSTILE))
    body = driver.find_element(By.TAG_NAME, "body").text
    assert HOSTILE_FIELDS["tagline"] in body and HOSTILE_FIELDS["author"] in body
    assert driver.find_element(By.TAG_NAME, "h1").text == HOSTILE_FIELDS["name"]
    handlers = driver.execute_script(
        "var n = 0; document.querySelectorAll('*').forEach(function (e) {"
        "  for (var a of e.attributes) { if (/^on/i.test(a.name)) n++; } }); return n;")
    assert handlers == 0
    assert not driver.find_elements(By.CSS_SELECTOR, "a[href^='javascript'], iframe, img, "
                                                     "style, object, embed")
    readme = driver.find_element(By.CSS_SELECTOR, "#readme .readme")
    assert "<script>" in readme.text and "javascript link" in readme.text
    notebook = readme.find_element(By.LINK_TEXT, "the notebook")
    assert (notebook.get_attribute("href") or "").endswith("/artifact/train.ipynb")
    # the unsafe paper link is shown, not linked
    paper = driver.find_element(By.XPATH, "//tr[th='paper']/td")
    assert not paper.find_elements(By.TAG_NAME, "a") and "not linked" in paper.text
    entry = yaml.safe_load(entry_path(built[0], HOSTILE).read_text())
    assert entry["paper"] == HOSTILE_FIELDS["paper"]  # the payload did reach the page


def test_the_documented_examples_hold() -> None:
    import doctest

    from probebench.leaderboard import charts, files, markdown

    for module in (charts, files, markdown):
        assert doctest.testmod(module).failed == 0
