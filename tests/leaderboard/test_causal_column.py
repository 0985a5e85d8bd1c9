"""The "moves the model" column: a synthetic registry (``tests.registry_fixture``) with
causal records written through the store as ``registry evaluate --causal`` writes them,
built into a real leaderboard; no model runs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from probebench.evaluation.results import CausalOut, Submission
from probebench.leaderboard.build import build_leaderboard, page_name
from probebench.leaderboard.charts import control_band
from probebench.leaderboard.columns import CAUSAL_DEFINITION, columns, moves_the_model
from probebench.leaderboard.downloads import causal_fields
from probebench.leaderboard.probescore import load_probescore_spec
from probebench.registry.store import causal_path, latest_results, store_causal
from probebench.tasks.catalog import TaskCatalog
from tests.registry.test_causal_store import causal_block
from tests.registry_fixture import synthetic_registry

RESAMPLES = 20
#: the ProbeScore spec the causal column must leave unchanged
SPEC = "0.2.0"
BLIMP, VERBS = "blimp_passive_1", "verb_grammar"


def _not_linear() -> CausalOut:
    return CausalOut(applicable=False, reason="not a linear probe: an MLP has no direction")


def test_the_verdicts() -> None:
    yes = causal_block(0.25)        # interval [0.15, 0.35], above all four controls
    assert yes.control_percentile == 100.0
    cell = moves_the_model(yes)
    assert (cell.verdict, cell.effect) == ("yes", 0.25)
    assert cell.detail == "effect 0.250 [0.150, 0.350], control percentile 100 of 4"
    # the interval reaches 0: no, whatever the controls
    crossing = yes.model_copy(update={"ci": (-0.01, 0.5)})
    assert moves_the_model(crossing).verdict == "no"
    # above 0 but not above every control (percentile 75): no
    beaten = causal_block(0.08)
    assert beaten.control_percentile == 75.0 and beaten.ci is not None
    assert beaten.ci[0] is not None and beaten.ci[0] < 0
    assert moves_the_model(beaten.model_copy(update={"ci": (0.01, 0.2)})).verdict == "no"
    na = moves_the_model(_not_linear())
    assert (na.verdict, na.detail) == ("n/a", "not a linear probe: an MLP has no direction")
    assert moves_the_model(None).verdict == "not measured"
    assert "arXiv:2310.06824" in CAUSAL_DEFINITION and "arXiv:2406.11717" in CAUSAL_DEFINITION
    assert columns(load_probescore_spec())["causal"].definition == CAUSAL_DEFINITION


def test_the_control_band_holds_every_controls_line() -> None:
    controls = [0.1, -0.3, 0.05]
    lows, highs = control_band([-2.0, 0.0, 1.0], controls)
    for a, low, high in zip([-2.0, 0.0, 1.0], lows, highs, strict=True):
        lines = [c * a for c in controls]
        assert low == pytest.approx(min(lines)) and high == pytest.approx(max(lines))


def _store(registry: Path, entry_id: str, block: dict[str, CausalOut],
           bundle: str | None = None) -> None:
    """``block`` stored for ``entry_id`` as ``registry evaluate --causal`` stores it: with
    the provenance of the entry's stored results."""
    records = latest_results(registry, entry_id)
    first = next(iter(records.values()))
    probe = first.probe if bundle is None else first.probe.model_copy(
        update={"bundle_sha256": bundle})
    submission = Submission(
        spec_version="0.3.0", probebench_version="0.1.0", probe=probe, model=first.model,
        device=first.device, seed=first.seed, bootstrap_resamples=first.bootstrap_resamples,
        versions=first.versions, definitions={}, tasks=[r.result for r in records.values()],
        run=first.run, causal=block)
    assert store_causal(registry, entry_id, submission) == [causal_path(registry, entry_id)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Four live entries: 0 (blimp) yes; 1 (verbs and blimp) no on verbs, n/a on blimp;
    2 none stored; 3 a record of another artifact."""
    root = tmp_path_factory.mktemp("causal")
    registry = root / "registry"
    ids = synthetic_registry(registry, 4, n_items=12)
    _store(registry, ids[0], {BLIMP: causal_block(0.25)})
    _store(registry, ids[1], {VERBS: causal_block(0.08), BLIMP: _not_linear()})
    _store(registry, ids[3], {BLIMP: causal_block(0.25)}, bundle="9" * 64)
    catalog = TaskCatalog.default()
    summary = build_leaderboard(registry, root / "site", catalog=catalog,
                                n_resamples=RESAMPLES, spec_version=SPEC)
    return {"root": root, "registry": registry, "ids": ids, "catalog": catalog,
            "summary": summary}


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html.replace("<wbr>", "")).split())


def _task_cells(page: str) -> dict[str, str]:
    """Entry id -> the text of its "moves the model" cell in a task page's tables."""
    out = {}
    for entry, row in re.findall(r'<tr data-entry="([^"]+)">(.*?)</tr>', page, re.DOTALL):
        cell = re.search(r'<td class="causal"[^>]*>(.*?)</td>', row, re.DOTALL)
        assert cell is not None, entry
        out[entry] = _text(cell.group(1))
    return out


def test_task_pages_show_the_column(world: dict[str, Any]) -> None:
    ids, site = world["ids"], world["root"] / "site"
    blimp = (site / "tasks" / f"{BLIMP}.html").read_text("utf-8")
    assert f'title="{escape(CAUSAL_DEFINITION)}"' in blimp  # the column's tooltip
    cells = _task_cells(blimp)
    assert cells[ids[0]] == "yes effect 0.250 [0.150, 0.350], control percentile 100 of 4"
    assert cells[ids[1]] == "n/a"
    assert cells[ids[2]] == "not measured"
    assert cells[ids[3]] == "not measured"  # the record is of another artifact
    verbs = _task_cells((site / "tasks" / f"{VERBS}.html").read_text("utf-8"))
    assert verbs[ids[1]] == "no effect 0.080 [-0.020, 0.180], control percentile 75 of 4"
    assert verbs[ids[2]] == "not measured"


def test_the_entry_page_shows_the_verdict_and_the_chart(world: dict[str, Any]) -> None:
    ids, site = world["ids"], world["root"] / "site"
    page = (site / page_name(ids[0])).read_text("utf-8")
    assert "moves the model" in page
    assert "<strong>yes</strong>" in page
    start = page.index(f'id="causal-{BLIMP}"')
    svg = page[page.index("<svg", start):page.index("</svg>", start)]
    assert f"Dose-response of the causal test, {BLIMP}" in svg
    assert 'class="band controls"' in svg and 'class="series s1"' in svg
    # one point per alpha, each titled with the curve's value there
    dots = re.findall(r"<title>alpha (-?[\d.]+): (-?[\d.]+)</title>", svg)
    assert [(float(a), float(v)) for a, v in dots] == [(a, round(0.25 * a, 3))
                                                       for a in causal_block().alphas]
    assert "readout accuracy 0.800 -&gt; 0.600" in page
    # n/a with its reason, and no chart, where the test does not apply
    other = (site / page_name(ids[1])).read_text("utf-8")
    assert "not a linear probe: an MLP has no direction" in other
    assert f'id="causal-{BLIMP}"' not in other and f'id="causal-{VERBS}"' in other
    none = (site / page_name(ids[2])).read_text("utf-8")
    assert "<strong>not measured</strong>" in none and "<svg" in none
    assert 'id="causal-' not in none


@pytest.mark.slow
def test_probescore_and_ranks_ignore_the_causal_records(world: dict[str, Any]) -> None:
    """The same registry without its causal records builds the same leaderboard.json
    (a second build: slow)."""
    root = world["root"]
    bare = root / "bare"
    shutil.copytree(world["registry"], bare)
    assert sorted(bare.rglob("_causal.json"))
    for path in sorted(bare.rglob("_causal.json")):
        path.unlink()
    build_leaderboard(bare, root / "bare-site", catalog=world["catalog"],
                      n_resamples=RESAMPLES, spec_version=SPEC)
    with_records = json.loads((root / "site" / "leaderboard.json").read_text("utf-8"))
    without = json.loads((root / "bare-site" / "leaderboard.json").read_text("utf-8"))
    assert with_records["spec_version"] == SPEC and with_records["probescores"]
    # every score, interval, rank and result the same; the rows differ only in the
    # causal fields themselves (which the records fill in)
    assert with_records["probescores"] == without["probescores"]
    assert with_records["rankings"] == without["rankings"]
    causal = set(causal_fields(None))
    assert any(row["moves_the_model"] != "not measured" for row in with_records["results"])
    assert all(row["moves_the_model"] == "not measured" for row in without["results"])

    def strip(doc: dict[str, Any]) -> dict[str, Any]:
        return {**doc, "results": [{k: v for k, v in row.items() if k not in causal}
                                   for row in doc["results"]]}

    assert strip(with_records) == strip(without)


def test_an_incremental_build_rerenders_the_entry_whose_record_changed(
        world: dict[str, Any]) -> None:
    ids, registry, site = world["ids"], world["registry"], world["root"] / "site"
    before = {i: (site / page_name(i)).read_text("utf-8") for i in ids}
    _store(registry, ids[0], {BLIMP: causal_block(-0.2)})  # a new record: no
    summary = build_leaderboard(registry, site, catalog=world["catalog"],
                                n_resamples=RESAMPLES, spec_version=SPEC)
    assert (summary.rendered, summary.reused) == (1, len(ids) - 1)
    page = (site / page_name(ids[0])).read_text("utf-8")
    assert page != before[ids[0]] and "<strong>no</strong>" in page
    assert all((site / page_name(i)).read_text("utf-8") == before[i] for i in ids[1:])
