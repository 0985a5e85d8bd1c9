"""ProbeScore: spec loading, axis maps, the 30% cap and imputation flags."""

from __future__ import annotations

import math
from typing import Any

import pytest

from probebench.errors import InputError
from probebench.evaluation.results import FlaggedOut, IntervalOut, PromptScores
from probebench.leaderboard.probescore import (
    AxisValue,
    apply_cap,
    available_specs,
    axis_values,
    cost_axis,
    ece_axis,
    efficiency_axis,
    license_score,
    load_probescore_spec,
    parse_spec,
    probescore,
)
from probebench.registry.store import ResultRecord
from tests.registry_fixture import synthetic_record, synthetic_result


def test_specs_load_and_normalise() -> None:
    assert available_specs() == ["0.0.1", "0.0.2", "0.1.0", "0.2.0"]
    assert load_probescore_spec().version == "0.2.0"
    v4 = load_probescore_spec("0.2.0")
    assert {a.name: a.source for a in v4.axes}["cross_model_transfer"] == "mapped_transfer"
    v3 = load_probescore_spec("0.1.0")
    assert {a.name: a.source for a in v3.axes}["inference_efficiency"] == "flops"
    assert "latency_ms" not in {a.source for a in v3.axes}
    v1, v2 = load_probescore_spec("0.0.1"), load_probescore_spec("0.0.2")
    assert v1.weight_sum == pytest.approx(0.90) and v2.weight_sum == pytest.approx(1.0)
    assert v1.normalised()["auroc"] == pytest.approx(0.25 / 0.90)
    assert sum(v1.normalised().values()) == pytest.approx(1.0)
    assert "goodhart_resistance" in v2.normalised() and "goodhart_resistance" not in \
        v1.normalised()


def test_a_weight_above_30_percent_does_not_load() -> None:
    with pytest.raises(InputError, match=r"weight 0\.35"):
        parse_spec({"version": "x", "cap": 0.3,
                    "axes": {"auroc": {"weight": 0.35, "source": "auroc"}}}, "spec.yaml")
    with pytest.raises(InputError, match=r"unknown ProbeScore spec '9\.9'"):
        load_probescore_spec("9.9")


def test_axis_maps_by_hand() -> None:
    assert ece_axis(0.0) == 1.0 and ece_axis(0.1) == pytest.approx(0.8) and ece_axis(0.7) == 0
    assert efficiency_axis(1.0) == 1.0
    assert efficiency_axis(100.0) == pytest.approx(0.5)
    assert efficiency_axis(20000.0) == 0.0
    assert efficiency_axis(0.5) == 1.0  # clamped
    assert cost_axis(1e6) == 1.0 and cost_axis(1e9) == pytest.approx(0.5)
    assert cost_axis(1e12) == 0.0 and cost_axis(1e15) == 0.0 and cost_axis(10.0) == 1.0
    assert [license_score(x) for x in ("Apache-2.0", "MIT", "BSD-3-Clause", "CC-BY-4.0",
                                       "custom", "closed")] == [1.0, 0.95, 0.9, 0.85, 0.5, 0.2]
    # non-commercial and no-derivatives terms never score like the open CC-BY
    assert [license_score(x) for x in ("CC-BY-NC-4.0", "CC-BY-ND-4.0", "CC-BY-NC-SA-4.0",
                                       "OpenRAIL")] == [0.4] * 4
    assert license_score("CC-BY-SA-4.0") == 0.85


def test_every_known_license_has_one_class() -> None:
    from probebench.licenses import (
        OPEN_CONTENT,
        OSI_APPROVED,
        RESTRICTED,
        known_license_ids,
        license_kind,
    )

    known = known_license_ids()
    assert known >= OSI_APPROVED | OPEN_CONTENT | RESTRICTED  # no table names a stray id
    assert not (OSI_APPROVED & OPEN_CONTENT or OSI_APPROVED & RESTRICTED
                or OPEN_CONTENT & RESTRICTED)
    assert len(known) > 500  # the SPDX index, not a hand-kept list
    kinds = {key: license_kind(key) for key in known}
    assert set(kinds.values()) == {"osi", "open-content", "restricted"}
    assert all(kinds[k] == "osi" for k in OSI_APPROVED)
    assert all(kinds[k] == "restricted" for k in RESTRICTED)


def test_expressions_score_by_their_operators() -> None:
    # OR: the user picks the better license; AND: both bind, the worse one counts
    assert license_score("MIT OR Apache-2.0") == 1.0
    assert license_score("CC-BY-NC-4.0 OR MIT") == 0.95
    assert license_score("MIT AND CC-BY-NC-4.0") == 0.4
    assert license_score("Apache-2.0 AND (MIT OR CC-BY-NC-4.0)") == 0.95
    assert license_score("GPL-2.0-only WITH Classpath-exception-2.0") == 0.8


def _record(auroc: float, *, ece: float = 0.05, latency: float = 10.0,
            distshift: float | None = 0.7, evalaware: float | None = None) -> ResultRecord:
    """A stored record whose axis inputs are the given numbers."""
    import numpy as np

    base = synthetic_result("blimp_passive_1", 0.3, np.random.default_rng(0))
    ea = (FlaggedOut(value=0.85 * auroc, imputed=True, note="no guard") if evalaware is None
          else FlaggedOut(value=evalaware, imputed=False, note="measured"))
    result = base.model_copy(update={
        "auroc": IntervalOut(value=auroc, ci_low=None, ci_high=None, resamples=0, dropped=0),
        "ece": ece, "evalaware_auroc": ea,
        "distshift_auroc": FlaggedOut(value=distshift, imputed=False, note="")})
    return synthetic_record(result, latency_ms=latency)


def test_axis_values_and_imputation_flags() -> None:
    values = axis_values({"a": _record(0.9, distshift=None), "b": _record(0.7, ece=0.15)},
                         "MIT")
    assert values["auroc"].value == pytest.approx(0.8)
    assert values["evalaware_auroc"].imputed and values["evalaware_auroc"].value == \
        pytest.approx(0.85 * 0.8)
    # task a's shift was not measurable: 0.7 x its AUROC, flagged
    assert values["distshift_auroc"].imputed
    assert values["distshift_auroc"].value == pytest.approx((0.7 * 0.9 + 0.7) / 2)
    assert values["ece"].value == pytest.approx(1 - 2 * 0.10)
    assert values["transfer"].imputed and values["transfer"].value == 0.5
    assert values["goodhart"].imputed and values["goodhart"].value == 0.5
    assert values["latency_ms"].value == pytest.approx(0.75)
    assert not values["auroc"].imputed and not values["ece"].imputed


def test_balanced_entry_is_the_weighted_mean() -> None:
    spec = load_probescore_spec("0.0.1")
    values = {s: AxisValue(0.8) for s in ("auroc", "evalaware_auroc", "distshift_auroc",
                                          "ece", "transfer", "latency_ms", "license")}
    result = probescore(spec, values)
    assert result.total == pytest.approx(0.8) and result.capped == []


def test_cap_worked_example() -> None:
    """METHODOLOGY.md's worked example: an entry strong only in AUROC."""
    spec = load_probescore_spec("0.0.2")
    values = {s: AxisValue(0.8) for s in ("evalaware_auroc", "distshift_auroc", "ece",
                                          "transfer", "latency_ms", "license", "goodhart")}
    values["auroc"] = AxisValue(1.0)
    values["evalaware_auroc"] = AxisValue(0.3)
    values["distshift_auroc"] = AxisValue(0.3)
    result = probescore(spec, values)
    # uncapped: auroc 0.25 of 0.25 + 0.054 + 0.036 + 0.4 x 0.8 = 0.66 -> 37.9% > 30%
    free = 0.18 * 0.3 + 0.12 * 0.3 + (0.10 + 0.10 + 0.10 + 0.05 + 0.10) * 0.8
    assert result.capped == ["auroc"]
    assert result.total == pytest.approx(free / 0.7)
    assert result.contributions["auroc"] == pytest.approx(0.3 * result.total)
    for name, c in result.contributions.items():
        assert c <= 0.3 * result.total + 1e-12, name


def test_entry_maximising_only_auroc_gets_nothing() -> None:
    spec = load_probescore_spec("0.0.1")
    values = {s: AxisValue(0.0) for s in ("evalaware_auroc", "distshift_auroc", "ece",
                                          "transfer", "latency_ms", "license")}
    values["auroc"] = AxisValue(1.0)
    result = probescore(spec, values)
    # alone, AUROC would be 100% of the total: the cap leaves nothing to rank by
    assert result.total == 0.0 and result.capped == ["auroc"]


def test_cap_fixed_point_with_several_axes() -> None:
    contributions, capped = apply_cap({"a": 0.5, "b": 0.4, "c": 0.1, "d": 0.1, "e": 0.1},
                                      dict.fromkeys("abcde", 0.3))
    total = sum(contributions.values())
    assert capped == ["a", "b"]
    assert contributions["a"] == pytest.approx(0.3 * total)
    assert all(v <= 0.3 * total + 1e-12 for v in contributions.values())
    assert total == pytest.approx(0.3 / 0.4)


def test_closed_license_ceiling() -> None:
    spec = load_probescore_spec("0.0.1")
    values = {s: AxisValue(0.8) for s in ("auroc", "evalaware_auroc", "distshift_auroc",
                                          "ece", "transfer", "latency_ms")}
    values["license"] = AxisValue(license_score("closed"))
    result = probescore(spec, values, closed_license=True)
    assert result.contributions["license_score"] <= 0.01 * result.total + 1e-12
    assert "license_score" in result.capped
    assert not math.isnan(result.total)


def _scored(entry_id: str, probs: list[float], labels: list[int]) -> Any:
    import numpy as np

    from probebench.evaluation.metrics import auroc_score
    from probebench.leaderboard.ranks import Scored

    items = sorted(list(range(len(probs) // 2)) * 2)
    a = auroc_score(np.array(labels), np.array(probs))
    record = _record(a)
    predictions = PromptScores(prompt_ids=[str(i) for i in range(len(probs))], items=items,
                               labels=labels, probs=[float(p) for p in probs])
    record = record.model_copy(update={"result": record.result.model_copy(
        update={"predictions": predictions})})
    values = axis_values({"t": record}, "MIT")
    return Scored(entry_id, {"t": record}, values, closed=False)


def test_rank_intervals_tied_entries_share_their_interval() -> None:
    import numpy as np

    from probebench.leaderboard.ranks import rank_intervals

    rng = np.random.default_rng(0)
    n = 200
    labels = [1, 0] * (n // 2)
    labels_arr = np.array(labels)
    good = list(np.clip(0.5 + 0.3 * (labels_arr - 0.5) + rng.normal(0, 0.2, n), 0, 1))
    weak = list(np.clip(0.5 + 0.02 * (labels_arr - 0.5) + rng.normal(0, 0.2, n), 0, 1))
    entries = [_scored("org/a-m-l1-v1", good, labels), _scored("org/b-m-l1-v1", list(good),
                                                                labels),
               _scored("org/c-m-l1-v1", weak, labels)]
    ranks = rank_intervals(entries, load_probescore_spec("0.0.2"), n_resamples=200)
    a, b, c = (ranks[e] for e in ("org/a-m-l1-v1", "org/b-m-l1-v1", "org/c-m-l1-v1"))
    # identical predictions: statistically tied, both [1, 1] under the paired bootstrap
    assert (a.rank, a.best, a.worst) == (b.rank, b.best, b.worst) == (1, 1, 1)
    assert (c.rank, c.best, c.worst) == (3, 3, 3)
    assert a.auroc_low < a.auroc_high


def test_rank_intervals_overlap_for_close_entries() -> None:
    import numpy as np

    from probebench.leaderboard.ranks import rank_intervals

    rng = np.random.default_rng(1)
    n = 120
    labels = [1, 0] * (n // 2)
    la = np.array(labels)
    base = 0.5 + 0.15 * (la - 0.5)
    x = list(np.clip(base + rng.normal(0, 0.2, n), 0, 1))
    y = list(np.clip(base + rng.normal(0, 0.2, n), 0, 1))
    ranks = rank_intervals([_scored("org/x-m-l1-v1", x, labels),
                            _scored("org/y-m-l1-v1", y, labels)], load_probescore_spec("0.0.2"))
    rx, ry = ranks["org/x-m-l1-v1"], ranks["org/y-m-l1-v1"]
    # two noisy probes of equal quality: neither is reliably first
    assert (rx.best, rx.worst) == (1, 2) and (ry.best, ry.worst) == (1, 2)


def test_methodology_tables_are_generated_from_the_code() -> None:
    from pathlib import Path

    from probebench.leaderboard.methodology import render

    path = Path(__file__).resolve().parents[1] / "METHODOLOGY.md"
    committed = path.read_text()
    assert render(committed) == committed, \
        "run `python -m probebench.leaderboard.methodology METHODOLOGY.md` and commit"
    # the rendered text follows the code: a changed constant changes the document
    assert "**imputed 0.85 × AUROC**" in committed and "closed 0.2" in committed
    with pytest.raises(InputError, match="no <!-- generated:axes -->"):
        render("# no markers here\n")


def test_a_spec_holds_weights_and_sources_only() -> None:
    with pytest.raises(InputError, match="takes 'weight' and 'source' only"):
        parse_spec({"version": "x", "axes": {"ece": {"weight": 0.1, "source": "ece",
                                                     "map": "1 - 2 x ECE"}}}, "s.yaml")
    with pytest.raises(InputError, match="known sources: auroc, evalaware_auroc"):
        parse_spec({"version": "x", "axes": {"ece": {"weight": 0.1, "source": "calib"}}},
                   "s.yaml")
