"""ProbeScore: spec loading, axis maps, the 30% cap and imputation flags."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probebench.errors import InputError
from probebench.evaluation.results import (
    BaselineGapOut,
    FlaggedOut,
    HoldoutOut,
    IntervalOut,
    PromptScores,
    SelectivityOut,
    TransferOut,
)
from probebench.leaderboard.probescore import (
    CLOSED_LICENSE_CEILING,
    MIN_ITEMS_PER_CLASS,
    AxisValue,
    apply_cap,
    available_specs,
    axis_values,
    cost_axis,
    ece_axis,
    efficiency_axis,
    evalaware_items_per_class,
    license_score,
    load_probescore_spec,
    parse_spec,
    probescore,
    probescore_batch,
    selectivity_judgment,
    transfer_judgment,
)
from probebench.registry.store import ResultRecord
from tests.registry_fixture import synthetic_record, synthetic_result


def test_specs_load_and_normalise() -> None:
    assert available_specs() == ["0.0.1", "0.0.2", "0.1.0", "0.2.0", "0.3.0"]
    assert load_probescore_spec().version == "0.3.0"
    v5 = load_probescore_spec("0.3.0")
    assert {a.name: a.source for a in v5.axes} == {
        "auroc": "auroc", "auroc_evalaware": "evalaware_min_items",
        "distshift_robustness": "distshift_auroc", "ece_calibration": "ece",
        "cross_model_transfer": "transfer_above_control", "inference_efficiency": "flops",
        "license_score": "license", "goodhart_resistance": "goodhart_shown"}
    assert v5.normalised() == load_probescore_spec("0.2.0").normalised()
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
    contributions, capped = apply_cap(np.array([[0.5, 0.4, 0.1, 0.1, 0.1]]),
                                      np.full(5, 0.3))
    total = contributions[0].sum()
    assert capped[0].tolist() == [True, True, False, False, False]
    assert contributions[0, 0] == pytest.approx(0.3 * total)
    assert (contributions <= 0.3 * total + 1e-12).all()
    assert total == pytest.approx(0.3 / 0.4)


def test_cap_by_hand_over_two_passes() -> None:
    """Capping one axis lowers the total, which pushes a second over its cap:
    raw (0.6, 0.25, 0.1, 0.05), cap 0.3 each.
    Pass 1: total 1.0; 0.6 > 0.3 caps axis 0.
    Pass 2: total = (0.25 + 0.1 + 0.05) / (1 - 0.3) = 0.571...; 0.25 > 0.3 x 0.571 = 0.171
    caps axis 1.
    Pass 3: total = (0.1 + 0.05) / (1 - 0.6) = 0.375; 0.1 <= 0.3 x 0.375 = 0.1125: done.
    Axes 0 and 1 contribute 0.1125 each, and 0.1125 + 0.1125 + 0.1 + 0.05 = 0.375."""
    contributions, capped = apply_cap(np.array([[0.6, 0.25, 0.1, 0.05]]), np.full(4, 0.3))
    assert capped[0].tolist() == [True, True, False, False]
    assert contributions[0] == pytest.approx([0.1125, 0.1125, 0.1, 0.05])
    assert contributions[0].sum() == pytest.approx(0.375)


def test_a_closed_license_is_capped_by_its_own_ceiling_by_hand() -> None:
    """raw (0.1, 0.1, 0.1, 0.1, 0.05), caps 0.3 but the license's 0.01: total 0.45, each
    0.1 is 22% of it, the license's 0.05 is over 0.01 x 0.45. Capped: total = 0.4 / 0.99
    = 0.404 (each 0.1 still under 0.3 x 0.404 = 0.121), the license 0.01 of it."""
    contributions, capped = apply_cap(np.array([[0.1, 0.1, 0.1, 0.1, 0.05]]),
                                      np.array([0.3] * 4 + [CLOSED_LICENSE_CEILING]))
    assert capped[0].tolist() == [False] * 4 + [True]
    assert contributions[0] == pytest.approx([0.1] * 4 + [0.01 * 0.4 / 0.99])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6), min_size=1,
                max_size=8),
       st.lists(st.sampled_from([0.3, 0.25, CLOSED_LICENSE_CEILING]), min_size=6,
                max_size=6))
def test_the_cap_holds(rows: list[list[float]], caps: list[float]) -> None:
    """On any batch: no axis above its cap share of its row's total; a capped axis at
    exactly its share, the others as they came; each row as if it were alone."""
    raw, share = np.array(rows), np.array(caps)
    contributions, capped = apply_cap(raw, share)
    totals = contributions.sum(axis=1, keepdims=True)
    assert (contributions <= share * totals + 1e-12).all()
    assert np.allclose(np.where(capped, contributions, 0.0),
                       np.where(capped, share * totals, 0.0))
    assert (np.where(capped, 0.0, contributions) == np.where(capped, 0.0, raw)).all()
    for b, row in enumerate(raw):
        alone, alone_capped = apply_cap(row[None, :], share)
        assert (alone[0] == contributions[b]).all()
        assert (alone_capped[0] == capped[b]).all()


def test_a_batch_scores_each_value_set_as_the_point_score_does() -> None:
    """``probescore`` (the point value, a batch of one) and ``probescore_batch`` (the rank
    intervals' resamples) give the same float and the same capped axes, bit for bit."""
    rng = np.random.default_rng(0)
    for version in available_specs():
        spec = load_probescore_spec(version)
        values = {a.source: rng.uniform(0, 1, 50) for a in spec.axes}
        values["auroc"][:10] = 1.0  # capped
        for closed in (False, True):
            batch = probescore_batch(spec, values, closed_license=closed)
            for b in range(50):
                one = probescore(spec, {k: AxisValue(float(v[b])) for k, v in values.items()},
                                 closed_license=closed)
                assert batch.totals[b] == one.total
                assert one.total == sum(one.contributions.values())
                assert [a.name for k, a in enumerate(spec.axes) if batch.capped[b, k]] == \
                    sorted(one.capped, key=[a.name for a in spec.axes].index)


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

    path = Path(__file__).resolve().parents[2] / "METHODOLOGY.md"
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


def _iv(value: float, low: float | None = None, high: float | None = None) -> IntervalOut:
    return IntervalOut(value=value, ci_low=low, ci_high=high, resamples=100, dropped=0)


def _transfer(auroc: float, low: float, high: float, control: float,
              source: float = 0.8) -> TransferOut:
    return TransferOut(target="minilm-l6@4:token_avg", auroc=_iv(auroc, low, high),
                       source_auroc=source, transfer=max(0.0, (auroc - 0.5) / (source - 0.5)),
                       map_r2=0.4, alpha=10.0, control_auroc=control, control_transfer=0.0,
                       control_r2=-0.5, corpus_sha256="ef" * 32, note="measured")


def test_transfer_counts_only_when_its_interval_lies_above_the_control() -> None:
    """The ratio when the target AUROC's interval lies strictly above the control's
    AUROC; 0 with the reason when it reaches it (low bound equal or below); not judged
    from fewer than 10 items of a class."""
    above = _transfer(0.65, 0.6, 0.7, control=0.5)
    credit, why = transfer_judgment(above, 40)
    assert credit == pytest.approx(0.5) and why is None
    reaching = _transfer(0.537, 0.498, 0.578, control=0.501)   # verb l15-v2's numbers
    credit, why = transfer_judgment(reaching, 100)
    assert credit == 0.0 and why is not None and "does not lie above" in why
    equal = _transfer(0.523, 0.504, 0.542, control=0.504)      # det-noun's: low = control
    assert transfer_judgment(equal, 100)[0] == 0.0
    assert transfer_judgment(above, MIN_ITEMS_PER_CLASS - 1)[0] is None
    # the axis: the mean of the judged targets over the tasks, the reason when it is 0
    rec = _record(0.8)
    with_reaching = rec.model_copy(update={"result": rec.result.model_copy(
        update={"transfer": {"t": reaching}})})
    with_above = rec.model_copy(update={"result": rec.result.model_copy(
        update={"transfer": {"t": above}})})
    values = axis_values({"a": with_reaching}, "MIT")
    assert values["transfer_above_control"].value == 0.0
    assert "does not lie above" in values["transfer_above_control"].note
    assert values["mapped_transfer"].value == pytest.approx(reaching.transfer)  # 0.2.0
    both = axis_values({"a": with_reaching, "b": with_above}, "MIT")
    assert both["transfer_above_control"].value == pytest.approx(0.25)


def test_the_eval_aware_axis_needs_ten_items_of_each_class_in_the_stratum() -> None:
    """A measured eval-aware AUROC from a stratum of 2 items per class (8 minimal pairs:
    a quarter is 2) is imputed 0.85 x AUROC with the count; from 60 pairs (15 per class)
    it counts."""
    rec = _record(0.7, evalaware=1.0)
    assert evalaware_items_per_class(rec.result.predictions) == {0: 15, 1: 15}
    assert axis_values({"a": rec}, "MIT")["evalaware_min_items"].value == 1.0
    pairs = 8
    small = rec.result.model_copy(update={"predictions": PromptScores(
        prompt_ids=[f"p{i}" for i in range(2 * pairs)], items=[i // 2 for i in range(2 * pairs)],
        labels=[1, 0] * pairs, probs=[0.6, 0.4] * pairs)})
    few = rec.model_copy(update={"result": small})
    value = axis_values({"a": few}, "MIT")["evalaware_min_items"]
    assert value.imputed and value.value == pytest.approx(0.85 * 0.7)
    assert "holds 2 items of its smaller class, fewer than 10" in value.note
    assert axis_values({"a": few}, "MIT")["evalaware_auroc"].value == 1.0  # 0.2.0's source


def _held(record: ResultRecord, holdout: float, *, selectivity: float | None,
          baseline: float) -> ResultRecord:
    auroc = record.result.auroc.value
    assert auroc is not None
    none = IntervalOut(value=None, ci_low=None, ci_high=None, resamples=0, dropped=0)
    sel = SelectivityOut(  # selectivity None: a degenerate control, as stored
        accuracy=_iv(0.8, 0.75, 0.85), control_positive_rate=0.5, note="",
        control_accuracy=none if selectivity is None else _iv(0.8 - selectivity),
        selectivity=none if selectivity is None else _iv(
            selectivity, selectivity - 0.05, selectivity + 0.05))
    gap = BaselineGapOut(value=auroc - baseline, ci_low=auroc - baseline - 0.05,
                         ci_high=auroc - baseline + 0.05, resamples=100, dropped=0,
                         baseline="random_features", baseline_auroc=baseline)
    held = HoldoutOut(generation=1, commitment="ab" * 32, n_items=120, n_labelled_prompts=240,
                      auroc=_iv(holdout, holdout - 0.05, holdout + 0.05), test_auroc=auroc,
                      retention=(holdout - 0.5) / (auroc - 0.5), minimum_detectable_drop=None)
    return record.model_copy(update={"holdout": held, "result": record.result.model_copy(
        update={"selectivity": sel, "baseline_gap": gap})})


def test_goodhart_gains_nothing_from_a_degenerate_control_or_a_failed_baseline() -> None:
    """0.3.0: retention x the least of the selectivity and baseline shares. A degenerate
    control (no selectivity) counts 0 (0.2.0 gave retention alone), and so does a best
    baseline at or above the probe's AUROC (npi-orc's case)."""
    base = _record(0.9)
    good = _held(base, 0.8, selectivity=0.2, baseline=0.6)
    v = axis_values({"a": good}, "MIT")
    retained = (0.8 - 0.5) / (0.9 - 0.5)
    share = min(0.2 / (0.8 - 0.5), (0.9 - 0.6) / (0.9 - 0.5))
    assert v["goodhart_shown"].value == pytest.approx(retained * share)
    assert not v["goodhart_shown"].imputed
    degenerate = _held(base, 0.8, selectivity=None, baseline=0.6)
    v = axis_values({"a": degenerate}, "MIT")
    assert v["goodhart_shown"].value == 0.0 and v["goodhart_shown"].imputed
    assert "degenerate control" in v["goodhart_shown"].note
    assert v["holdout_goodhart"].value == pytest.approx(retained)  # 0.2.0: retention alone
    failing = _held(base, 0.8, selectivity=0.2, baseline=0.95)
    assert axis_values({"a": failing}, "MIT")["goodhart_shown"].value == 0.0
    # no selectivity at all (no train split, an older result): 0 too, said so
    unmeasured = good.model_copy(update={"result": good.result.model_copy(
        update={"selectivity": None})})
    shown = axis_values({"a": unmeasured}, "MIT")["goodhart_shown"]
    assert shown.value == 0.0 and shown.imputed and "selectivity not measured" in shown.note


def test_selectivity_is_shown_only_when_every_interval_lies_above_zero() -> None:
    base = _record(0.9)
    shown = _held(base, 0.8, selectivity=0.2, baseline=0.6)      # [0.15, 0.25]
    unshown = _held(base, 0.8, selectivity=0.03, baseline=0.6)   # [-0.02, 0.08]
    none = _held(base, 0.8, selectivity=None, baseline=0.6)
    assert selectivity_judgment({"a": shown}) == (True, "")
    judged, why = selectivity_judgment({"a": shown, "b": unshown})
    assert judged is False and why.startswith("selectivity interval not above 0 on b 0.030")
    assert selectivity_judgment({"a": none})[0] is None
    assert selectivity_judgment({"a": shown, "b": none})[0] is True


def test_a_task_with_too_few_items_counts_zero_transfer_flagged_on_a_multi_task_entry(
        ) -> None:
    """Two tasks: one of 60 pairs credited 0.5, one of 8 pairs (below 10 per class) whose
    target is not judged: the axis is their mean with the small task at 0, flagged
    imputed, and the note names the task; a target stored without its interval's upper
    bound is refused credit with a reason, not a crash."""
    big = _record(0.8)
    big = big.model_copy(update={"result": big.result.model_copy(
        update={"transfer": {"t": _transfer(0.65, 0.6, 0.7, control=0.5)}})})
    pairs = 8
    small_result = big.result.model_copy(update={
        "id": "blimp_small", "predictions": PromptScores(
            prompt_ids=[f"p{i}" for i in range(2 * pairs)],
            items=[i // 2 for i in range(2 * pairs)], labels=[1, 0] * pairs,
            probs=[0.6, 0.4] * pairs)})
    small = big.model_copy(update={"result": small_result})
    value = axis_values({"a": big, "b": small}, "MIT")["transfer_above_control"]
    assert value.value == pytest.approx(0.25) and value.imputed
    assert "blimp_small to minilm-l6@4:token_avg: 8 test items" in value.note
    open_ended = _transfer(0.65, 0.6, 0.7, control=0.5)
    assert open_ended.auroc is not None
    open_ended = open_ended.model_copy(update={"auroc": open_ended.auroc.model_copy(
        update={"ci_high": None})})
    credit, why = transfer_judgment(open_ended, 40)
    assert credit == 0.0 and why is not None and "no target AUROC interval" in why


def test_the_transfer_rule_applies_on_every_draw_and_at_zero_gives_the_point() -> None:
    """A target whose interval reaches its control: 0 at the point, credited on the draws
    that move its interval above the control (so the axis varies), never above the ratio
    of the interval's top; a target well above its control is credited on every draw."""
    from probebench.leaderboard.ranks import Scored, draw_scores

    spec = load_probescore_spec("0.3.0")
    name = "cross_model_transfer"

    def entry(entry_id: str, transfer: TransferOut) -> Scored:
        rec = _record(0.8)
        rec = rec.model_copy(update={"result": rec.result.model_copy(
            update={"transfer": {"t": transfer}})})
        records = {"blimp_passive_1": rec}
        return Scored(entry_id, records, axis_values(records, "MIT"), closed=False,
                      beats=True)

    reaching = entry("o/reach-m-l1-v1", _transfer(0.537, 0.498, 0.578, control=0.501))
    above = entry("o/above-m-l1-v1", _transfer(0.65, 0.6, 0.7, control=0.5))
    draws = draw_scores([reaching, above], spec, n_resamples=400)
    r, a = draws.axis_draws[0]["transfer_above_control"], draws.axis_draws[1][
        "transfer_above_control"]
    assert reaching.values["transfer_above_control"].value == 0.0
    assert 0 < (r > 0).mean() < 1 and r.max() <= (0.578 - 0.5) / (0.8 - 0.5) + 0.05
    assert (a > 0).all()
    interval = draws.axes[0][name]
    assert interval.varies and interval.ci_low <= 0.0 <= interval.ci_high
