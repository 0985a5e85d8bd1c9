"""One ``MetricDef`` per metric: the definitions block, the column headers, the marks and
METHODOLOGY.md all read from it, so changing a fact there changes every place it shows."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from probebench.errors import InputError
from probebench.evaluation import definitions
from probebench.evaluation.definitions import (
    METRICS,
    Direction,
    headline_metrics,
    metric_definitions,
)
from probebench.evaluation.headline import headline, metric_interval
from probebench.evaluation.marks import mark_definitions
from probebench.evaluation.metrics import (
    MetricError,
    brier_score_loss,
    expected_calibration_error,
    item_bootstrap,
    weighted_auroc,
)
from probebench.leaderboard.columns import columns
from probebench.leaderboard.methodology import definitions_list, marks_table, render
from probebench.leaderboard.probescore import load_probescore_spec
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families import get_format
from probebench.yamlsafe import load_yaml

ROOT = Path(__file__).resolve().parents[2]
METHODOLOGY = ROOT / "METHODOLOGY.md"
#: metric -> the key of its column on the leaderboard
COLUMN_OF = {"auroc": "auroc", "selectivity": "selectivity", "accuracy": "accuracy",
             "ece": "ece", "brier": "brier", "fpr_at_99tpr": "fpr", "cost": "cost",
             "latency_ms": "latency", "distshift_auroc": "distshift",
             "evalaware_auroc": "evalaware", "marks": "marks"}
FLIPPED = {Direction.HIGHER: Direction.LOWER, Direction.LOWER: Direction.HIGHER,
           Direction.NONE: Direction.LOWER}


def _line(text: str, name: str) -> str:
    """The line of METHODOLOGY.md's definitions list for ``name``."""
    found = [line for line in text.splitlines() if line.startswith(f"- **{name}**")]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def _marks_row(text: str, name: str) -> str:
    """The row of METHODOLOGY.md's marks table (or of ``marks_table()``) for ``name``."""
    if "<!-- generated:marks -->" in text:
        text = text.split("<!-- generated:marks -->")[1].split("<!-- /generated:marks")[0]
    found = [line for line in text.splitlines() if line.startswith(f"| {name} |")]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def test_one_direction_changes_the_header_the_marks_and_methodology(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ECE made higher-is-better in its MetricDef alone: its column's tooltip, the mark a
    value receives and its METHODOLOGY.md lines all follow; the text submission.json
    carries does not name the direction, so it stays."""
    spec = load_probescore_spec()
    committed = METHODOLOGY.read_text("utf-8")
    block = metric_definitions()
    header = columns(spec)["ece"]
    assert header.label == "ECE"
    assert header.definition.startswith("Expected calibration error (lower is better): 15 ")
    ece = mark_definitions()["ece"]
    assert [ece.mark(v, v, v)[0] for v in (0.03, 0.07, 0.15, 0.25)] == ["A", "B", "C", "D"]
    assert _line(committed, "ece").startswith("- **ece** (lower is better): 15 equal-width")
    assert _marks_row(committed, "ece") == ("| ece | lower is better | [0.00, 0.05) | "
                                            "[0.05, 0.10) | [0.10, 0.20) | [0.20, 1.00] |")

    monkeypatch.setitem(METRICS, "ece", replace(METRICS["ece"], direction=Direction.HIGHER))

    flipped = columns(spec)["ece"]
    assert flipped.label == "ECE"
    assert flipped.definition.startswith("Expected calibration error: 15 ")
    assert "lower is better" not in flipped.definition
    ece = mark_definitions()["ece"]
    assert [ece.mark(v, v, v)[0] for v in (0.03, 0.07, 0.15, 0.25)] == ["D", "C", "B", "A"]
    # the worst range the interval reaches is now the lower one
    assert ece.mark(0.08, 0.04, 0.12) == ("D", ["B", "C", "D"])
    rendered = render(committed)
    assert rendered != committed
    assert _line(rendered, "ece").startswith("- **ece** (higher is better): 15 equal-width")
    assert _marks_row(rendered, "ece") == ("| ece | higher is better | [0.20, 1.00] | "
                                           "[0.10, 0.20) | [0.05, 0.10) | [0.00, 0.05) |")
    # every other line is as committed
    changed = [a for a, b in zip(rendered.splitlines(), committed.splitlines(), strict=True)
               if a != b]
    assert len(changed) == 2 and all("ece" in line for line in changed)
    assert metric_definitions() == block

    monkeypatch.undo()
    assert render(committed) == committed


@pytest.mark.parametrize("name", list(METRICS))
def test_every_direction_is_read_where_it_shows(name: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """For every metric: flipping its direction changes its column's tooltip, its
    METHODOLOGY.md line and, where it has marks, the mark of some value."""
    spec = load_probescore_spec()
    metric = METRICS[name]
    before_cols = columns(spec)
    before_list = definitions_list()
    before_marks = mark_definitions()
    before_table = marks_table()
    flipped = replace(metric, direction=FLIPPED[metric.direction])
    monkeypatch.setitem(METRICS, name, flipped)

    if name in COLUMN_OF:
        key = COLUMN_OF[name]
        assert columns(spec)[key].definition != before_cols[key].definition
        assert columns(spec)[key].label == before_cols[key].label == metric.label
    if metric.part_of is None:
        assert _line(definitions_list(), name) != _line(before_list, name)
    else:
        assert f"**{name}**" not in definitions_list()
    if metric.marks is not None:
        grid = np.linspace(0, 1, 101)
        old, new = before_marks[name], mark_definitions()[name]
        assert [old.range_of(v) for v in grid] != [new.range_of(v) for v in grid]
        # the ranges of METHODOLOGY.md's marks table, not only its direction column
        ranges_before = _marks_row(before_table, name).split(" | ")[2:]
        assert _marks_row(marks_table(), name).split(" | ")[2:] != ranges_before


def test_marks_are_the_ranges_marks_yaml_had() -> None:
    """Bounds in marks.yaml and the direction in the MetricDef give the A-D ranges that
    marks.yaml used to spell out with a direction of its own."""
    got = {name: m.ranges for name, m in mark_definitions().items()}
    assert got == {
        "auroc": {"A": (0.90, 1.0), "B": (0.80, 0.90), "C": (0.65, 0.80), "D": (0.0, 0.65)},
        "mc_accuracy": {"A": (0.90, 1.0), "B": (0.75, 0.90), "C": (0.55, 0.75),
                        "D": (0.0, 0.55)},
        "ece": {"A": (0.0, 0.05), "B": (0.05, 0.10), "C": (0.10, 0.20), "D": (0.20, 1.0)},
        "fpr_at_99tpr": {"A": (0.0, 0.20), "B": (0.20, 0.50), "C": (0.50, 0.80),
                         "D": (0.80, 1.0)}}
    auroc, ece = mark_definitions()["auroc"], mark_definitions()["ece"]
    # a value on a bound belongs to the range above it, as [low, high) said
    assert auroc.range_of(0.90) == "A" and auroc.range_of(0.8999) == "B"
    assert ece.range_of(0.05) == "B" and ece.range_of(0.0499) == "A"
    assert auroc.range_of(1.0) == "A" and ece.range_of(1.0) == "D"
    with pytest.raises(InputError, match="do not cover nan"):
        auroc.mark(float("nan"), 0.5, 0.6)


def test_each_fact_has_one_home() -> None:
    """marks.yaml holds bounds only; no direction is typed into the columns, the
    methodology renderer or the metrics' prose; the AUROC is defined once."""
    data = load_yaml(ROOT / "probebench" / "evaluation" / "marks.yaml")
    for name, bounds in data["marks"].items():
        assert isinstance(bounds, list) and len(bounds) == 3, name
    package = ROOT / "probebench"
    for path in [package / "leaderboard" / "columns.py",
                 package / "leaderboard" / "methodology.py",
                 package / "evaluation" / "metrics.py",
                 package / "evaluation" / "marks.py",
                 *(package / "leaderboard" / "templates").glob("*.j2")]:
        text = path.read_text("utf-8")
        assert not re.search(r"(lower|higher) is better", text), path
    sources = [p.read_text("utf-8") for p in (package / "evaluation").glob("*.py")]
    assert sum(s.count("roc_auc_score over") for s in sources) == 1
    assert list(metric_definitions()) == [
        "auroc", "ci", "ece", "brier", "fpr_at_99tpr", "recall_at_1pct_fpr", "latency_ms",
        "distshift_auroc", "evalaware_auroc", "transfer", "cost", "selectivity", "baselines",
        "accuracy", "marks"]


def test_compute_names_say_the_direction_and_compute_the_metric() -> None:
    """scikit-learn's habit: ``*_score`` is better when higher, ``*_error``/``*_loss``
    when lower. The AUROC's compute is the function the bootstrap's point value uses."""
    computed = {name: m for name, m in METRICS.items() if m.compute is not None}
    assert set(computed) >= {"auroc", "ece", "brier", "fpr_at_99tpr"}
    for name, metric in computed.items():
        assert metric.compute is not None
        fn = metric.compute.__name__
        if fn.endswith("_score"):
            assert metric.direction is Direction.HIGHER, (name, fn)
        else:
            assert fn.endswith(("_error", "_loss")), (name, fn)
            assert metric.direction is Direction.LOWER, (name, fn)
    y = np.array([0, 0, 1, 1, 0, 1])
    s = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9])
    auroc = METRICS["auroc"].compute
    assert auroc is not None
    assert auroc(y, s) == item_bootstrap(auroc(y, s), partial(weighted_auroc, y, s),
                                         np.arange(6), n_resamples=10).value
    brier = METRICS["brier"].compute
    assert brier is not None and brier(np.array([0, 1]), np.array([0.25, 0.5])) == 0.15625


def test_citations_where_one_paper_defines_the_metric() -> None:
    cited = {name: m.citation.short for name, m in METRICS.items() if m.citation}
    assert cited == {"ece": "Guo et al. (2017)", "brier": "Brier (1950)",
                     "recall_at_1pct_fpr": "Goldowsky-Dill et al. (2025)",
                     "selectivity": "Hewitt and Liang (2019)"}
    # the definition's own citation is the MetricDef's, not a second copy
    assert metric_definitions()["selectivity"].startswith(f"{cited['selectivity']}: ")


def test_marks_yaml_is_checked(tmp_path: Path) -> None:
    def load(body: str) -> dict[str, definitions.MetricDef]:
        path = tmp_path / "marks.yaml"
        path.write_text(body, "utf-8")
        return definitions._with_marks(definitions._DEFS, path)

    assert load("version: 2\nmarks:\n  brier: [0.1, 0.2, 0.3]\n")["brier"].marks == (
        0.1, 0.2, 0.3)
    with pytest.raises(InputError, match=r"marks.yaml: marks for 'brierr', which is no "
                                         r"metric; metrics: auroc, ci"):
        load("version: 2\nmarks:\n  brierr: [0.1, 0.2, 0.3]\n")
    with pytest.raises(InputError, match=r"marks\.yaml: metric ci: marks need a direction"):
        load("version: 2\nmarks:\n  ci: [0.1, 0.2, 0.3]\n")
    with pytest.raises(InputError, match=r"metric ece: mark bounds must be three ascending "
                                         r"numbers inside \(0, 1\); found \[0.2, 0.1, 0.3\]"):
        load("version: 2\nmarks:\n  ece: [0.2, 0.1, 0.3]\n")
    with pytest.raises(InputError, match=r"marks\.ece: expected three numbers"):
        load("version: 2\nmarks:\n  ece: {direction: lower_is_better}\n")
    with pytest.raises(InputError, match="expected 'version: 2'"):
        load("version: 1\nmarks:\n  ece: [0.1, 0.2, 0.3]\n")


def _pairs(n: int = 40) -> tuple[list[Item], np.ndarray]:
    """``n`` BLiMP-style minimal pairs (good, bad) and a P(positive) for each prompt."""
    items = [Item(f"p{i}", (Prompt(f"Good {i}.", label=1), Prompt(f"Bad {i}.", label=0)))
             for i in range(n)]
    return items, np.random.default_rng(0).random(2 * n)


def test_headline_computes_what_the_definitions_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """The definition is the dispatch: ``headline`` calls each listed MetricDef's
    ``compute``. Remove ECE's and the headline has no ECE (every other metric unchanged);
    swap it and the headline's ECE is the new function's number."""
    items, probs = _pairs()
    blimp = get_format("blimp")
    head = headline("pairs", blimp, items, probs, n_resamples=50)
    assert list(head.values) == [d.name for d in headline_metrics()] == [
        "auroc", "ece", "brier", "fpr_at_99tpr", "accuracy"]
    y = np.tile([1, 0], 40)
    assert head.ece == expected_calibration_error(y, probs)

    monkeypatch.setitem(METRICS, "ece", replace(METRICS["ece"], compute=None))
    without = headline("pairs", blimp, items, probs, n_resamples=50)
    assert "ece" not in without.values
    with pytest.raises(MetricError, match="the headline has no ece: its MetricDef has no "
                                          "compute"):
        _ = without.ece
    assert without.values == {k: v for k, v in head.values.items() if k != "ece"}

    monkeypatch.setitem(METRICS, "ece", replace(METRICS["ece"], compute=brier_score_loss))
    swapped = headline("pairs", blimp, items, probs, n_resamples=50)
    assert swapped.ece == head.brier == brier_score_loss(y, probs) != head.ece


def test_an_interval_is_the_definitions_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The item bootstrap resamples the definition's ``weighted`` form: without it a
    headline metric is a point value, and ``metric_interval`` (``Session.ci``) refuses."""
    items, probs = _pairs()
    y, s, item_of = np.tile([1, 0], 40), probs, np.repeat(np.arange(40), 2)
    shifted = metric_interval("distshift_auroc", y, s, item_of=item_of, seed=0,
                              n_resamples=50, parts=("pairs", "distshift"))
    compute = METRICS["auroc"].compute
    assert compute is not None and shifted.value == compute(y, s)
    monkeypatch.setitem(METRICS, "auroc", replace(METRICS["auroc"], weighted=None))
    point = headline("pairs", get_format("blimp"), items, probs, n_resamples=50)
    assert point.values["auroc"] == shifted.value
    monkeypatch.setitem(METRICS, "distshift_auroc",
                        replace(METRICS["distshift_auroc"], compute=None))
    with pytest.raises(MetricError, match="metric distshift_auroc: its MetricDef has no "
                                          "compute"):
        metric_interval("distshift_auroc", y, s, item_of=item_of, seed=0, n_resamples=50,
                        parts=("pairs", "distshift"))


#: the AUROC's rank statistic and scikit-learn's ROC functions: imported only by metrics.py
RANK_FUNCTIONS = {"roc_auc_score", "roc_curve", "auc", "mannwhitneyu", "rankdata"}


def test_auroc_has_few_names_and_one_home() -> None:
    """``grep -rhoE 'def [A-Za-z_]*auroc[A-Za-z_]*' probebench`` lists at most 5 names
    (functions that are no AUROC statistic are named for what they are), and no module
    but ``evaluation/metrics.py`` imports a rank statistic to compute an AUROC."""
    package = ROOT / "probebench"
    sources = {path: path.read_text("utf-8") for path in package.rglob("*.py")}
    names = {name for text in sources.values()
             for name in re.findall(r"def [A-Za-z_]*auroc[A-Za-z_]*", text)}
    assert len(names) <= 5, sorted(names)
    importers = {path.relative_to(package).as_posix()
                 for path, text in sources.items()
                 for node in ast.walk(ast.parse(text))
                 if isinstance(node, ast.ImportFrom)
                 and {a.name for a in node.names} & RANK_FUNCTIONS}
    assert importers == {"evaluation/metrics.py"}
