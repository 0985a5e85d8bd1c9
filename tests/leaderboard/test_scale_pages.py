"""Entry pages small enough for 10,000 entries: charts drawn with one path per grid and
axis, coordinates to 0.1 px, every data point where the chart's own scale puts it; metric
definitions given once for the site (``static/definitions.js``), not in every tooltip;
and the downloads carry the causal test's verdict.

A real build of a synthetic registry (``tests.registry_fixture``, results of a real stored
result's size) with causal records stored as ``registry evaluate --causal`` stores them.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from markupsafe import escape

from probebench.evaluation.results import CausalOut
from probebench.leaderboard.build import build_leaderboard, page_name
from probebench.leaderboard.charts import (
    SQUARE,
    Frame,
    bars_frame,
    bars_svg,
    control_band,
    dose_response_frame,
    dose_response_svg,
    reliability_svg,
    roc_points,
    roc_svg,
)
from probebench.leaderboard.columns import columns, moves_the_model
from probebench.leaderboard.downloads import csv_columns
from probebench.leaderboard.entry_page import (
    DEFINITIONS_JS,
    SITE_DEFINITIONS,
    definitions_script,
    site_definitions,
)
from probebench.leaderboard.probescore import load_probescore_spec
from probebench.tasks.catalog import TaskCatalog
from tests.leaderboard.test_causal_column import BLIMP, VERBS, _store
from tests.registry.test_causal_store import causal_block
from tests.registry_fixture import synthetic_registry

REPO = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
#: the largest entry page's budget: two tasks of 150 items with their slice charts and
#: the causal chart, its artifact's files listed (the whole leaderboard's aim is 85 KB an entry,
#: its stored results and downloads included)
ENTRY_PAGE_BYTES = 42_000
#: a coordinate is written to 0.1 px: within half of that of the scale's value
PX = 0.05 + 1e-9


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Three live entries: 0 (blimp) moves the model; 1 (verbs and blimp) n/a on blimp,
    nothing stored on verbs; 2 nothing stored."""
    root = tmp_path_factory.mktemp("pages")
    registry = root / "registry"
    ids = synthetic_registry(registry, 3, artifacts=True, n_items=150, history=3)
    _store(registry, ids[0], {BLIMP: causal_block(0.25)})
    _store(registry, ids[1], {BLIMP: CausalOut(applicable=False,
                                               reason="not a linear probe: an MLP")})
    build_leaderboard(registry, root / "site", catalog=TaskCatalog.default(), n_resamples=20)
    return {"site": root / "site", "ids": ids}


def _svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", html, re.DOTALL)]


def _pairs(points: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (p.split(",") for p in points.split())]


def _subpaths(d: str) -> list[tuple[float, float, str, float]]:
    """A grid or axis path's subpaths: (x, y, H or V, the other end's coordinate)."""
    found = re.findall(r"M(-?[\d.]+),(-?[\d.]+)([HV])(-?[\d.]+)", d)
    assert "".join(f"M{x},{y}{k}{e}" for x, y, k, e in found) == d, d  # nothing else in it
    return [(float(x), float(y), k, float(e)) for x, y, k, e in found]


def _one_path_per_kind(svg: ET.Element) -> dict[str, list[tuple[float, float, str, float]]]:
    """The grid's and the axes' paths (one each at most); no element per line is left."""
    assert not svg.findall(f".//{SVG}line[@class='grid']")
    assert not svg.findall(f".//{SVG}line[@class='axis']")
    out = {}
    for kind in ("grid", "axis"):
        paths = svg.findall(f"{SVG}path[@class='{kind}']")
        assert len(paths) <= 1, kind
        out[kind] = _subpaths(paths[0].get("d", "")) if paths else []
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= PX


def _check_grid(svg: ET.Element, f: Frame, x_ticks: list[float], y_ticks: list[float]) -> None:
    """One grid line per tick and one tick mark per tick, where the frame puts them."""
    kinds = _one_path_per_kind(svg)
    x0, x1, y0, y1 = f.left, f.width - f.right, f.height - f.bottom, f.top
    horizontal = sorted(y for x, y, k, e in kinds["grid"] if k == "H" and x == x0 and e == x1)
    vertical = sorted(x for x, y, k, e in kinds["grid"] if k == "V" and y == y1 and e == y0)
    assert len(horizontal) == len(y_ticks) and len(vertical) == len(x_ticks)
    assert all(_close(a, b) for a, b in zip(horizontal, sorted(f.y(t) for t in y_ticks),
                                            strict=True))
    assert all(_close(a, b) for a, b in zip(vertical, sorted(f.x(t) for t in x_ticks),
                                            strict=True))
    marks = [x for x, y, k, e in kinds["axis"] if k == "V" and y == y0 and e == y0 + 4]
    assert sorted(marks) == sorted(vertical)
    assert (float(x0), float(y0), "H", float(x1)) in kinds["axis"]  # the x axis line


def test_roc_and_reliability_keep_every_point_to_a_tenth_of_a_pixel() -> None:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 250).tolist()
    probs = np.clip(rng.random(250) * 0.7 + np.asarray(labels) * 0.3, 0, 1).tolist()
    f = Frame(*SQUARE, (0.0, 1.0), (0.0, 1.0))
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    roc = ET.fromstring(roc_svg(labels, probs, "ROC of a probe"))
    assert roc.findtext(f"{SVG}title") == "ROC of a probe" == roc.get("aria-label")
    _check_grid(roc, f, ticks, ticks)
    fpr, tpr = roc_points(labels, probs)
    assert len(fpr) <= 300  # drawn unthinned: every point
    curve = _pairs(roc.findall(f"{SVG}polyline[@class='curve']")[0].get("points", ""))
    assert len(curve) == len(fpr)
    for (x, y), a, b in zip(curve, fpr, tpr, strict=True):
        assert _close(x, f.x(float(a))) and _close(y, f.y(float(b)))
    rel = ET.fromstring(reliability_svg(labels, probs, "Reliability"))
    _check_grid(rel, f, ticks, ticks)
    bars = rel.findall(f"{SVG}rect[@class='bar']")
    idx = np.minimum((np.asarray(probs) * 15).astype(int), 14)
    filled = [b for b in range(15) if (idx == b).any()]
    assert len(bars) == len(filled)
    for rect, b in zip(bars, filled, strict=True):
        rate = float(np.asarray(labels)[idx == b].mean())
        assert _close(float(rect.get("x", "")), f.x(b / 15) + 0.5)
        assert _close(float(rect.get("y", "")), f.y(rate))
        assert _close(float(rect.get("height", "")), f.y(0) - f.y(rate))
        assert f"{int((idx == b).sum())} prompts" in (rect.findtext(f"{SVG}title") or "")


def test_bars_keep_their_values_and_whiskers() -> None:
    rows = [("present", 0.71, 0.62, 0.8), ("past tense", 0.55, 0.41, 0.66), ("x", 0.9, 0.85,
                                                                               0.97)]
    svg = ET.fromstring(bars_svg(rows, "Accuracy by tense"))
    f = bars_frame(rows)
    _check_grid(svg, f, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], [])
    ordered = sorted(rows, key=lambda r: -r[1])
    rects = svg.findall(f"{SVG}rect[@class='bar']")
    whiskers = svg.findall(f"{SVG}path[@class='whisker']")
    assert len(rects) == len(whiskers) == len(rows)
    for rect, whisker, (label, value, low, high) in zip(rects, whiskers, ordered, strict=True):
        assert _close(float(rect.get("width", "")), f.x(value) - f.left)
        assert (rect.findtext(f"{SVG}title") or "").startswith(f"{label}: {value:.3f}")
        ends = [float(v) for v in re.findall(r"M(-?[\d.]+),", whisker.get("d", ""))]
        assert len(ends) == 3 and _close(ends[0], f.x(low)) and _close(ends[1], f.x(low))
        assert _close(ends[2], f.x(high))
    assert [t.text for t in svg.findall(f"{SVG}g[@class='blabel']/{SVG}text")] == [
        r[0] for r in ordered]


def test_the_dose_response_chart_keeps_its_curve_and_band() -> None:
    alphas = [-4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0]
    curve = [0.3 * a - 0.02 * a * a for a in alphas]
    controls = [-0.05, 0.02, 0.04, 0.1]
    svg = ET.fromstring(dose_response_svg(alphas, curve, controls, "Dose-response, t"))
    assert svg.findtext(f"{SVG}title") == "Dose-response, t"
    f, x_step, y_step = dose_response_frame(alphas, curve, controls)
    x_ticks = [float(t) for t in np.arange(f.x_range[0], f.x_range[1] + x_step / 2, x_step)]
    y_ticks = [float(t) for t in np.arange(f.y_range[0], f.y_range[1] + y_step / 2, y_step)]
    _check_grid(svg, f, x_ticks, y_ticks)
    line = _pairs(svg.findall(f"{SVG}polyline[@class='series s1']")[0].get("points", ""))
    dots = [(float(c.get("cx", "")), float(c.get("cy", "")))
            for c in svg.findall(f"{SVG}circle")]
    for points in (line, dots):
        assert len(points) == len(alphas)
        for (x, y), a, v in zip(points, alphas, curve, strict=True):
            assert _close(x, f.x(a)) and _close(y, f.y(v))
    band = _pairs(svg.findall(f"{SVG}polygon[@class='band controls']")[0].get("points", ""))
    lows, highs = control_band(alphas, controls)
    edge = list(zip(alphas, highs, strict=True)) + list(zip(alphas, lows, strict=True))[::-1]
    assert len(band) == len(edge)
    for (x, y), (a, v) in zip(band, edge, strict=True):
        assert _close(x, f.x(a)) and _close(y, f.y(v))


def _definitions(site: Path) -> dict[str, str]:
    text = (site / "static" / "definitions.js").read_text("utf-8")
    body = text[text.index("window.PROBEBENCH_DEFINITIONS = ") + 31:].rstrip().rstrip(";")
    loaded: dict[str, str] = json.loads(body)
    return loaded


def test_definitions_are_the_columns_and_the_script_is_current() -> None:
    """The script holds each metric's column definition, the same under every ProbeScore
    spec (so the site may give it once, whatever spec a build uses), and the file in the
    package is what the code generates (else: python -m probebench.leaderboard.entry_page)."""
    assert DEFINITIONS_JS.read_text("utf-8") == definitions_script(), (
        f"{DEFINITIONS_JS} is out of date: run python -m probebench.leaderboard.entry_page")
    defs = site_definitions()
    assert list(defs) == list(SITE_DEFINITIONS)
    specs = sorted(p.stem.removeprefix("v") for p in
                   (REPO / "probebench" / "leaderboard" / "specs").glob("v*.yaml"))
    assert len(specs) >= 2
    for version in specs:
        cols = columns(load_probescore_spec(version))
        for key in SITE_DEFINITIONS:
            if key != "transfer":
                assert cols[key].definition == defs[key], (version, key)


def test_the_entry_page_names_each_definition_once_for_the_site(site: dict[str, Any]) -> None:
    folder = site["site"]
    page = (folder / page_name(site["ids"][1])).read_text("utf-8")  # two tasks
    defs = _definitions(folder)
    assert defs == site_definitions()
    named = re.findall(r'data-def="([^"]+)"', page)
    assert set(named) == set(SITE_DEFINITIONS) - {"recall"}  # no control set declared
    assert len(named) == 2 * len(set(named))  # each task's table names them
    for key in set(named):
        assert str(escape(defs[key])) not in page, key  # named, never repeated
    # the page loads the script before app.js, which fills the titles
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert scripts.index("../static/definitions.js") < scripts.index("../static/app.js")
    # without scripts: a link to the methodology page's list, which holds each definition
    assert 'href="../methodology.html#columns"' in page
    methodology = (folder / "methodology.html").read_text("utf-8")
    assert 'id="columns"' in methodology
    for key in set(named) - {"transfer"}:
        assert f"<dd>{escape(defs[key])}</dd>" in methodology, key
    # the ProbeScore axes' definitions (with the spec's weights) stay on the page, once
    spec = load_probescore_spec()
    cols = columns(spec)
    for axis in spec.axes:
        assert page.count(f'title="{escape(cols["axis:" + axis.name].definition)}"') == 1


def test_entry_pages_are_small_and_their_charts_are_paths(site: dict[str, Any]) -> None:
    folder = site["site"]
    sizes = {}
    for entry_id in site["ids"]:
        page = (folder / page_name(entry_id)).read_text("utf-8")
        sizes[entry_id] = len(page.encode("utf-8"))
        charts = _svgs(page)
        assert charts
        for svg in charts:
            _one_path_per_kind(svg)
            assert svg.findtext(f"{SVG}title") and svg.get("role") == "img"
    assert max(sizes.values()) <= ENTRY_PAGE_BYTES, sizes
    # the causal entry's page holds the dose-response chart, styled as the controls' band
    causal = (folder / page_name(site["ids"][0])).read_text("utf-8")
    assert 'class="band controls"' in causal and 'class="legend controls"' in causal
    assert '<td class="causal causal-yes">' in causal
    css = (folder / "static" / "style.css").read_text("utf-8")
    for selector in ("svg .band.controls", "svg .legend.controls", "td.causal-yes",
                     "td.causal-no", "td.causal-na", "td.causal-not-measured"):
        assert selector in css, selector


def test_the_downloads_carry_the_causal_verdict(site: dict[str, Any]) -> None:
    folder, ids = site["site"], site["ids"]
    board = json.loads((folder / "leaderboard.json").read_text("utf-8"))
    rows = {(r["entry_id"], r["task"]): r for r in board["results"]}
    with (folder / "leaderboard.csv").open(encoding="utf-8", newline="") as f:
        table = {(r["entry_id"], r["task"]): r for r in csv.DictReader(f)}
    assert set(table) == set(rows)
    block = causal_block(0.25)
    assert block.ci is not None
    expected = {
        (ids[0], BLIMP): ("yes", block.effect, block.ci[0], block.ci[1],
                          block.control_percentile),
        (ids[1], BLIMP): ("n/a", None, None, None, None),
        (ids[1], VERBS): ("not measured", None, None, None, None),
        (ids[2], BLIMP): ("not measured", None, None, None, None),
    }
    fields = ("moves_the_model", "causal_effect", "causal_ci_low", "causal_ci_high",
              "causal_control_percentile")
    assert set(fields) <= set(csv_columns())
    for key, want in expected.items():
        row = rows[key]
        assert tuple(row[f] for f in fields) == want, key
        # the CSV: the same, numbers as text, None as an empty cell
        assert tuple(table[key][f] for f in fields) == tuple(
            "" if v is None else str(v) for v in want), key
    assert rows[(ids[0], BLIMP)]["causal_note"] == moves_the_model(block).detail
    assert rows[(ids[1], BLIMP)]["causal_note"] == "not a linear probe: an MLP"
    assert rows[(ids[2], BLIMP)]["causal_note"] == (
        "no causal test stored for the entry's current artifact")
    schema = json.loads((folder / "leaderboard.schema.json").read_text("utf-8"))
    described = schema["$defs"]["ResultRow"]["properties"]
    assert all(described[f].get("description") for f in ("moves_the_model", "causal_effect"))
