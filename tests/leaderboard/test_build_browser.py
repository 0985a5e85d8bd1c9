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
no page logs a console error or runs a hostile payload. On a phone (390 x 844): a ranked
table's rank, entry and ProbeScore stay in view while it scrolls sideways, a task id
breaks only after an underscore, a column's definition opens on a tap and closes on the
next; the BibTeX names where the entry is (its page's address, served over http).
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

from probebench.hashing import sha256_bytes
from probebench.leaderboard.build import BuildSummary, build_leaderboard, page_name
from probebench.leaderboard.downloads import csv_columns
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.mirror import blob_path
from probebench.registry.store import latest_results
from probebench.tasks.catalog import TaskCatalog
from tests.leaderboard.test_ranks import (
    DET_MINI,
    DET_SMOL,
    DET_TASK,
    GUARD,
    REPO,
    VERB_PENDING,
    _copy_entry,
    _match_stored_results,
)
from tests.registry_fixture import synthetic_registry

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
REQUIRE = os.environ.get("PROBEBENCH_REQUIRE_BROWSER") == "1"
browser = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER) and not REQUIRE,
                             reason="Debian chromium and chromium-driver are not installed")
RESAMPLES = 30
VERB = "probebench/verb-grammar-smollm2-135m-l15-v3"
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
    _copy_entry(root, "probebench/verb-grammar-smollm2-135m-l8-v3", VERB_PENDING,
                tasks={"verb_grammar_v2": "probebench/verb-grammar-smollm2-135m-l8-v3"},
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
    # the files behind the numbers are among the targets: results, reports, notebooks,
    # each repository file as the one blob the registry mirror stores it under
    names = {t.relative_to(board.resolve()).as_posix() for t in targets}
    verb = "files/probebench__verb-grammar-smollm2-135m-l15-v3"
    stored = REPO / "registry"
    folder = stored / "artifacts" / "verb-grammar-smollm2-135m-l15-v3"
    for path in (folder / "train.ipynb", folder / "eval.ipynb", folder / "probe.safetensors",
                 entry_path(stored, VERB)):
        assert blob_path(sha256_bytes(path.read_bytes())) in names, path
    for expected in (f"{verb}/reports/verb_grammar_v2/REPORT.md", "leaderboard.json",
                     "leaderboard.csv", "leaderboard.schema.json"):
        assert expected in names, expected
    report = (board / verb / "reports/verb_grammar_v2/REPORT.md").read_text()
    assert report.startswith("# probebench report: ") and "| verb_grammar_v2 | 2 |" in report
    # an artifact folder cannot put a page or an SVG on the leaderboard's origin
    assert not list((board / "files").rglob("*.html")) and not list(board.rglob("*.svg"))
    assert not (board / "files" / HOSTILE.replace("/", "__") / "artifact").exists()
    readme = (REPO / "registry/artifacts/blimp-det-noun-smollm2-135m-l15-v1/README.md")
    assert readme.is_file()


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
    stored = latest_results(registry, VERB)["verb_grammar_v2"].result
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
    assert any(u.endswith("results/probebench/verb-grammar-smollm2-135m-l15-v3/"
                          "verb_grammar_v2.json") for u in linked)
    assert not list((board / "files").rglob("*.json"))  # nothing copied but the reports
    assert list((board / "files").rglob("REPORT.md"))
    # the citation's url: the artifact's folder in the repository at that commit
    assert _bibtex_url((board / page_name(VERB)).read_text()) == (
        f"{base}/registry/artifacts/verb-grammar-smollm2-135m-l15-v3")
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
                   or (page.name == "index.html" and s == '<script src="entries.js">')
                   # an entry page's rank script, named by its id's hash, and the
                   # site's metric definitions its tooltips read
                   or (page.parent.name == "entries"
                       and re.fullmatch(r'<script src="\.\./ranks/[0-9a-f]{2}\.js">', s))
                   or (page.parent.name == "entries"
                       and s == '<script src="../static/definitions.js">')
                   # a family or task page's entry list, named by the page
                   or (page.parent.name in ("families", "tasks")
                       and s == f'<script src="{page.stem}.data.js">')
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


def _bibtex_url(html: str) -> str | None:
    """The url field of the entry page's BibTeX (as the HTML holds it, unescaped)."""
    import html as html_lib

    block = re.search(r'<pre id="bibtex">(.*?)</pre>', html, re.DOTALL)
    assert block, "no BibTeX block"
    field = re.search(r"^\s*url\s*=\s*\{([^{}\s]+)\},?$", html_lib.unescape(block.group(1)),
                      re.MULTILINE)
    return field.group(1) if field else None


def test_task_ids_may_break_after_underscores_only(
        built: tuple[Path, Path, BuildSummary]) -> None:
    """A task id offers a line break after each underscore (<wbr>) wherever it is a
    title or sits in a narrow cell; no stylesheet rule lets a task id break anywhere."""
    _, board, _ = built
    long_id = "blimp_irregular_plural_subject_verb_agreement_1"
    breakable = long_id.replace("_", "_<wbr>")
    task = (board / "tasks" / f"{long_id}.html").read_text()
    assert f"<h1>Task {breakable}</h1>" in task
    index = (board / "index.html").read_text()
    assert f">{breakable}</a>}}:" in index  # a task set's heading
    assert re.search(rf'<td class="taskset">[^<]*<a [^>]*>{re.escape(breakable)}</a>', index)
    assert f">{breakable}</a>" in (board / "tasks.html").read_text()
    css = re.sub(r"/\*.*?\*/", "", (board / "static" / "style.css").read_text(), flags=re.DOTALL)
    rules = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", css))
    for selector, body in rules.items():
        if "taskset" in selector or selector.strip().startswith("h1"):
            assert "anywhere" not in body and "break-all" not in body, selector


def test_the_bibtex_has_a_url(built: tuple[Path, Path, BuildSummary]) -> None:
    """Without a site address, the citation's url is the artifact's (here its folder in
    the repository); a field the submitter wrote cannot end the url field."""
    _, board, _ = built
    assert _bibtex_url((board / page_name(VERB)).read_text()) == (
        "registry/artifacts/verb-grammar-smollm2-135m-l15-v3")
    hostile = (board / page_name(HOSTILE)).read_text()
    assert _bibtex_url(hostile) == f"registry/artifacts/{HOSTILE_FOLDER}"
    assert "javascript" not in (_bibtex_url(hostile) or "")


# --- the site does not contradict itself -----------------------------------------------

def _ranking_rows(table: str) -> list[tuple[str, bool]]:
    """(short name, ranked) of each row of a ranked table's HTML, in order."""
    import html as html_lib

    out = []
    for row in re.findall(r"<tr data-entry=[^>]*>(.*?)</tr>", table, re.DOTALL):
        name = re.search(r'<td class="entry" data-value="([^"]*)"', row)
        assert name, row
        out.append((html_lib.unescape(name.group(1)), "unranked-rank" not in row))
    return out


def _family_parts(board: Path) -> list[tuple[Path, str]]:
    """Each family's part of the site: its section of the index and its own page."""
    index = (board / "index.html").read_text()
    parts = [(board / "index.html", s) for s in
             re.findall(r'<section class="family".*?</section>', index, re.DOTALL)]
    parts += [(p, p.read_text()) for p in sorted((board / "families").glob("*.html"))]
    assert len(parts) >= 6
    return parts


def test_the_score_chart_draws_the_ranked_entries_only(
        built: tuple[Path, Path, BuildSummary]) -> None:
    """The chart captioned "ProbeScore of each ranked entry" draws exactly the ranked
    rows of its tables, in their order; an entry that does not beat its baselines (the
    npi-orc reference entry, the highest ProbeScore of its family) is in its table, not
    in the chart, and a task set without a ranked entry is named in the caption."""
    import html as html_lib

    _, board, _ = built
    npi = "syntaxgym-npi-orc-l15-v2"
    seen_unranked = False
    for page, part in _family_parts(board):
        tables = re.findall(r'<table class="sortable ranked leaderboard".*?</table>', part,
                            re.DOTALL)
        rows = [r for t in tables for r in _ranking_rows(t)]
        figure = re.search(r'<figure class="group scores">(.*?)</figure>', part, re.DOTALL)
        ranked = [name for name, is_ranked in rows if is_ranked]
        if not ranked:
            assert figure is None, page
            continue
        assert figure is not None, page
        drawn = [html_lib.unescape(t) for t in
                 re.findall(r'class="point"><title>(.*?): [0-9.]+ \[', figure.group(1))]
        assert drawn == ranked, (page, drawn, ranked)
        caption = figure.group(1).split("<figcaption")[1]
        assert "ProbeScore of each ranked entry" in caption
        if any(not is_ranked for _, is_ranked in rows):
            seen_unranked = True
            assert "not ranked" in caption and "not drawn" in caption, page
        if npi in (name for name, _ in rows):
            assert npi not in drawn
            assert "task set {syntaxgym_npi_orc_any} has no ranked entry" in caption, page
    assert seen_unranked


def _count(text: str) -> tuple[int, int]:
    """(entries, ranked) from the one wording every page uses."""
    if text.startswith("no entry in its ranking"):
        return 0, 0
    found = re.match(r"(\d+) (?:entry|entries), (\d+) ranked", text)
    assert found, text
    return int(found.group(1)), int(found.group(2))


def test_every_count_of_entries_agrees_with_its_ranking(
        built: tuple[Path, Path, BuildSummary]) -> None:
    """A group's heading, a family page's task list and the tasks index count the
    entries and the ranked entries alike, and as the ranking's own table has them: the
    SyntaxGym page no longer says "1 ranked entry" of a task whose one entry is not
    ranked ("1 entry, 0 ranked")."""
    _, board, _ = built

    def task_ranking(task: str) -> tuple[int, int]:
        html = (board / "tasks" / f"{task}.html").read_text()
        table = re.search(r'<table class="sortable ranked" id="task-ranking".*?</table>',
                          html, re.DOTALL)
        rows = _ranking_rows(table.group(0)) if table else []
        return len(rows), sum(ranked for _, ranked in rows)

    headings = 0
    for page, part in _family_parts(board):
        for heading, table in re.findall(
                r"<h3>Task set \{.*?\}: ([^<]*)</h3>.*?"
                r'(<table class="sortable ranked leaderboard".*?</table>)', part, re.DOTALL):
            rows = _ranking_rows(table)
            assert _count(heading) == (len(rows), sum(r for _, r in rows)), (page, heading)
            headings += 1
    assert headings >= 12
    listed: dict[str, tuple[int, int]] = {}
    for page in sorted((board / "families").glob("*.html")):
        for task, text in re.findall(r'<li><a href="\.\./tasks/([^"]+)\.html">.*?</a> '
                                     r'<span class="note">([^<]*) on this task alone</span>',
                                     page.read_text()):
            listed[task] = _count(text)
    for task, text in re.findall(r'<li><a href="tasks/([^"]+)\.html">.*?</a>: [^<]* '
                                 r'<span class="note">([^<]*)</span>',
                                 (board / "tasks.html").read_text()):
        assert listed.setdefault(task, _count(text)) == _count(text), task
    assert len(listed) >= 8
    for task, counted in listed.items():
        assert counted == task_ranking(task), task
    assert listed["syntaxgym_npi_orc_any"] == (1, 0)


def test_the_key_to_a_mark_sits_under_the_table_that_uses_it(
        built: tuple[Path, Path, BuildSummary]) -> None:
    """The key to † (a contribution capped at the spec's cap) follows each ranked table
    that shows a †, before anything else that is not that table's own note, and no
    page keeps one at its foot, far from the first table that needs it."""
    _, board, _ = built
    key = "† contribution capped at 30% of the entry's total"
    uses = 0
    for page in [board / "index.html", *sorted((board / "families").glob("*.html"))]:
        html = page.read_text()
        pieces = re.split(r'(<table class="sortable ranked leaderboard".*?</table>)', html,
                          flags=re.DOTALL)
        keys = 0
        for k in range(1, len(pieces), 2):
            table, after = pieces[k], pieces[k + 1]
            # what follows the table up to the next heading, figure or table
            own = re.split(r"<h[1-4]|<figure|<table|<section", after)[0]
            if "†" in table:
                assert key in own, (page, k)
                uses += 1
            else:
                assert key not in own, (page, k)
            keys += own.count(key)
        assert html.count(key) == keys, page  # no key anywhere else
    assert uses >= 8


def test_the_roc_curve_and_the_auroc_agree_with_the_stored_predictions(
        built: tuple[Path, Path, BuildSummary]) -> None:
    """Every entry page's ROC legend gives the AUROC of the stored per-prompt
    probabilities it draws (scikit-learn's, recomputed here), and where that differs
    from the stored AUROC (the probabilities were rounded to 6 decimals after the AUROC
    was computed: the deprecated irregular-plural v1 and verb layer-8 v1 entries, whose
    probabilities saturate) the page says so and gives both."""
    from sklearn.metrics import roc_auc_score

    from probebench.leaderboard.entry_page import AUROC_AGREES

    registry, board, _ = built
    notes = {}
    for page in sorted((board / "entries").glob("*.html")):
        html = page.read_text()
        entry_id = page.stem.replace("__", "/", 1)
        for task, record in latest_results(registry, entry_id).items():
            if f'id="task-{task}"' not in html:
                continue
            pred = record.result.predictions
            recomputed = float(roc_auc_score(pred.labels, pred.probs))
            legend = re.search(rf'aria-label="ROC curve, {task}".*?probe \(AUROC ([0-9.]+)\)',
                               html, re.DOTALL)
            assert legend and legend.group(1) == f"{recomputed:.3f}", (page, task)
            note = re.search(rf'<p class="notice predictions-note" id="predictions-{task}">'
                             r"([^<]*)</p>", html)
            stored = record.result.auroc.value
            assert stored is not None
            if abs(recomputed - stored) > AUROC_AGREES:
                assert note, (page, task)
                notes[entry_id] = note.group(1)
            else:
                assert note is None, (page, task)
    irregular = notes["probebench/blimp-irregular-sv-smollm2-135m-l15-v1"]
    assert "is 0.7455, where the stored AUROC, 0.7458," in irregular
    assert "is 0.617, where the stored AUROC, 0.616," in (
        notes["probebench/verb-grammar-smollm2-135m-l8-v1"])
    assert "rounded to 6 decimals" in irregular and "same evaluation" in irregular


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
    for page in (board / "index.html", board / page_name(VERB),
                 board / "tasks/verb_grammar_v2.html",
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
    table = driver.find_element(By.CSS_SELECTOR, "table.leaderboard[data-tasks='verb_grammar_v2']")
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
    baselines = driver.find_element(By.CSS_SELECTOR, "#task-verb_grammar_v2 table.baselines")
    methods = [td.text.split("\n")[0] for td in
               baselines.find_elements(By.CSS_SELECTOR, "tbody td:first-child")]
    assert methods[0] == "this probe" and {"majority", "length", "random_features",
                                           "surprisal"} <= set(methods)
    provenance = driver.find_element(By.CSS_SELECTOR, "#task-verb_grammar_v2 table.provenance")
    labels = [th.text for th in provenance.find_elements(By.TAG_NAME, "th")]
    for label in ("evaluated", "probebench", "device / dtype", "hardware", "test set",
                  "artifact bundle"):
        assert label in labels
    assert "commit" in provenance.text and "sha256" in provenance.text
    assert "@misc{probebench:" in driver.find_element(By.ID, "bibtex").text
    command = driver.find_element(By.ID, "reproduce-cmd").text
    assert f"probebench registry evaluate {VERB} --no-store --seed 0" in command
    assert "git checkout" in command
    # every file link of the page leads to the file it names: a generated REPORT.md
    # under files/, a repository file as its blob, saved under its own name
    links = [(a.get_attribute("href") or "", a.get_attribute("download") or "")
             for a in driver.find_elements(By.CSS_SELECTOR, "#files a, .files-line a, #probe a")]
    blobs = [(h, name) for h, name in links if "/registry/blobs/" in h]
    assert len(blobs) >= 8
    for href, name in blobs:
        path = Path(unquote(urlsplit(href).path))
        assert path.is_file() and name, href
        assert sha256_bytes(path.read_bytes()) == path.name, href  # stored by content
    results = [h for h, name in blobs if name == "verb_grammar_v2.json"]
    assert len(results) == 1
    assert json.loads(Path(unquote(urlsplit(results[0]).path)).read_text())["entry"] == VERB
    reports = [h for h, _ in links if h.endswith("REPORT.md")]
    assert reports and not [h for h, _ in links if "/files/" in h and h not in reports]
    for href in reports:
        driver.get(href)
        body = driver.find_element(By.TAG_NAME, "body").text
        assert "# probebench report: " in body and "verb_grammar_v2" in body
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
    # the notebook's one copy, the registry mirror's blob of its bytes
    train = REPO / "registry/artifacts/blimp-det-noun-smollm2-135m-l15-v1/train.ipynb"
    assert (notebook.get_attribute("href") or "").endswith(
        "/" + blob_path(sha256_bytes(train.read_bytes())))
    # the unsafe paper link is shown, not linked
    paper = driver.find_element(By.XPATH, "//tr[th='paper']/td")
    assert not paper.find_elements(By.TAG_NAME, "a") and "not linked" in paper.text
    entry = yaml.safe_load(entry_path(built[0], HOSTILE).read_text())
    assert entry["paper"] == HOSTILE_FIELDS["paper"]  # the payload did reach the page


#: where a text wraps: (the text before each line break, the text after), from the
#: boxes of its characters (a break is where a character starts below the one before)
LINE_BREAKS = """
var el = arguments[0], walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
var text = "", boxes = [], node;
while ((node = walker.nextNode())) {
  for (var i = 0; i < node.data.length; i++) {
    var range = document.createRange();
    range.setStart(node, i); range.setEnd(node, i + 1);
    var rects = range.getClientRects();
    if (rects.length && rects[0].width > 0) {
      boxes.push([text.length + i, rects[0].top, rects[0].bottom]);
    }
  }
  text += node.data;
}
var breaks = [];
for (var k = 1; k < boxes.length; k++) {
  if (boxes[k][1] >= boxes[k - 1][2] - 2) {
    breaks.push([text.slice(0, boxes[k - 1][0] + 1), text.slice(boxes[k - 1][0] + 1)]);
  }
}
return breaks;
"""


def _mid_word(breaks: list[list[str]]) -> list[list[str]]:
    """The line breaks that split a word: not at a space, nor after an underscore."""
    return [b for b in breaks if not (b[0].endswith("_") or b[0][-1:].isspace()
                                      or b[1][:1].isspace())]


def _in_view(driver: WebDriver, cell: Any) -> bool:
    """Whether all of ``cell`` is inside the window and inside its table's scroll box,
    and nothing covers it (the element at its middle is the cell or inside it)."""
    return bool(driver.execute_script("""
        var cell = arguments[0], r = cell.getBoundingClientRect();
        var wrap = cell.closest('.table-wrap').getBoundingClientRect();
        var width = Math.min(window.innerWidth, document.documentElement.clientWidth);
        if (r.width === 0 || r.left < 0 || r.right > width + 0.5 || r.top < 0
            || r.bottom > window.innerHeight) return false;
        if (r.left < wrap.left - 0.5 || r.right > wrap.right + 0.5) return false;
        var hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
        return cell.contains(hit);""", cell))


@browser
def test_a_phone_keeps_rank_entry_and_probescore_in_view(
        built: tuple[Path, Path, BuildSummary], driver: WebDriver) -> None:
    """At 390 x 844 the rank, entry and ProbeScore of every ranked table's first row are
    on screen, and stay there while the table scrolls sideways to its last column."""
    from selenium.webdriver.common.by import By

    _, board, _ = built
    for page in (board / "index.html", board / "families/blimp.html",
                 board / "tasks/verb_grammar_v2.html"):
        _open(driver, page, "phone")
        tables = driver.find_elements(By.CSS_SELECTOR, "table.ranked")
        assert tables, page.name
        for table in tables:
            row = table.find_element(By.CSS_SELECTOR, "tbody tr")
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", row)
            cells = row.find_elements(By.CSS_SELECTOR, "td")[:3]
            assert "score" in (cells[2].get_attribute("class") or "")
            assert cells[2].is_displayed() and cells[2].text.split("\n")[0] == (
                f"{float(cells[2].get_attribute('data-value') or 'nan'):.3f}")
            for cell in cells:
                assert _in_view(driver, cell), (page.name, cell.text)
            wrap = table.find_element(By.XPATH, "..")
            scrolled = driver.execute_script(
                "var w = arguments[0]; w.scrollLeft = w.scrollWidth; return w.scrollLeft;", wrap)
            assert scrolled > 100, page.name  # the table does scroll on a phone
            for cell in cells:
                assert _in_view(driver, cell), (page.name, "scrolled", cell.text)
            last = row.find_elements(By.CSS_SELECTOR, "td")[-1]
            assert driver.execute_script(  # the last column came into view beside them
                "return arguments[0].getBoundingClientRect().right"
                " <= arguments[1].getBoundingClientRect().right + 1;", last, wrap)
            driver.execute_script("arguments[0].scrollLeft = 0;", wrap)
    assert not _errors(driver)


@browser
def test_a_long_task_id_wraps_only_after_underscores(
        built: tuple[Path, Path, BuildSummary], driver: WebDriver) -> None:
    from selenium.webdriver.common.by import By

    _, board, _ = built
    long_id = "blimp_irregular_plural_subject_verb_agreement_1"
    _open(driver, board / "tasks" / f"{long_id}.html", "phone")
    h1 = driver.find_element(By.TAG_NAME, "h1")
    assert h1.text == f"Task {long_id}"
    breaks = driver.execute_script(LINE_BREAKS, h1)
    assert breaks, "the title fits one line: nothing was checked"
    assert not _mid_word(breaks), breaks
    _open(driver, board / "index.html", "phone")
    checked = 0
    for element in driver.find_elements(By.CSS_SELECTOR, "td.taskset, .group h3"):
        if long_id in element.text:
            assert not _mid_word(driver.execute_script(LINE_BREAKS, element)), element.text
            checked += 1
    assert checked >= 2


@browser
def test_a_tap_opens_a_column_definition_and_the_next_closes_it(
        built: tuple[Path, Path, BuildSummary], driver: WebDriver) -> None:
    """Every column header with a definition has a button beside its name: a tap shows the
    definition (the header's title) on screen without sorting the column, a second tap or
    a tap elsewhere hides it; from the keyboard, Enter opens it and Escape closes it."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    _, board, _ = built

    def tap(element: Any) -> None:  # a finger, not a mouse
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
        finger = PointerInput(interaction.POINTER_TOUCH, "finger")  # type: ignore[no-untyped-call]
        actions = ActionBuilder(driver, mouse=finger)
        actions.pointer_action.move_to(element).pointer_down().pointer_up()  # type: ignore[no-untyped-call]
        actions.perform()

    def shown() -> str | None:
        pops = driver.find_elements(By.ID, "definition-pop")
        return pops[0].text if pops and pops[0].is_displayed() else None

    _open(driver, board / "index.html", "phone")
    table = driver.find_element(By.CSS_SELECTOR, "table.leaderboard")
    heads = [th for th in table.find_elements(By.CSS_SELECTOR, "th") if th.is_displayed()]
    assert all(th.find_elements(By.CSS_SELECTOR, "button.defn") for th in heads)
    score = next(th for th in heads if th.text == "ProbeScore")
    button = score.find_element(By.CSS_SELECTOR, "button.defn")
    definition = score.get_attribute("title") or ""
    assert len(definition) > 20 and shown() is None
    assert button.get_attribute("aria-expanded") == "false"
    tap(button)
    assert shown() == definition
    assert button.get_attribute("aria-expanded") == "true"
    assert "asc" not in (score.get_attribute("class") or "")  # the tap did not sort
    pop = driver.find_element(By.ID, "definition-pop")
    assert driver.execute_script(  # all of it is on screen, at a phone's width
        "var r = arguments[0].getBoundingClientRect(); return r.left >= 0 && "
        "r.right <= document.documentElement.clientWidth;", pop)
    tap(button)
    assert shown() is None and button.get_attribute("aria-expanded") == "false"
    # another header's button moves the popover there; a tap elsewhere closes it
    auroc = next(th for th in heads if th.text == "AUROC")
    tap(auroc.find_element(By.CSS_SELECTOR, "button.defn"))
    assert shown() == auroc.get_attribute("title")
    tap(driver.find_element(By.TAG_NAME, "h1"))
    assert shown() is None
    # the keyboard: Enter on the focused button, Escape to close (focus stays there)
    driver.execute_script("arguments[0].focus();", button)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    assert shown() == definition
    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    assert shown() is None
    assert driver.execute_script("return document.activeElement === arguments[0];", button)
    # the entry page's metric names open theirs too
    _open(driver, board / page_name(VERB), "phone")
    th = driver.find_element(By.CSS_SELECTOR, "#task-verb_grammar_v2 table.metrics th")
    tap(th.find_element(By.CSS_SELECTOR, "button.defn"))
    assert shown() == th.get_attribute("title") and len(shown() or "") > 20
    assert not _errors(driver)


@browser
def test_the_bibtex_cites_the_page_it_is_on(built: tuple[Path, Path, BuildSummary],
                                           driver: WebDriver) -> None:
    """From file:// the BibTeX's url is the artifact's; served over http, the entry
    page's own address."""
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from selenium.webdriver.common.by import By

    _, board, _ = built
    _open(driver, board / page_name(VERB), "phone")
    text = driver.find_element(By.ID, "bibtex").text
    assert re.search(r"^\s*url\s*=\s*\{registry/artifacts/verb-grammar-smollm2-135m-l15-v3\}$",
                     text, re.MULTILINE), text

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(board)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{page_name(VERB)}"
        driver.get(url)
        text = driver.find_element(By.ID, "bibtex").text
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    fields = re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?$", text, re.MULTILINE)
    assert ("url", url) in fields, text
    assert [k for k, _ in fields].count("url") == 1
    # the site has no favicon; a browser asks for one over http
    assert not [e for e in _errors(driver) if "favicon.ico" not in e.get("message", "")]


def test_the_documented_examples_hold() -> None:
    import doctest

    from probebench.leaderboard import charts, entry_page, files, markdown

    for module in (charts, entry_page, files, markdown):
        assert doctest.testmod(module).failed == 0
