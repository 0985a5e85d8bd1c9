"""Cross-model transfer through a ridge map fitted on the neutral corpus
(``probebench.evaluation.transfer``): the map and the ratio on synthetic arrays, the
results and ProbeScore's axes, then the real embedded SmolLM2 and MiniLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.artifact.forms import load_weights
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError
from probebench.evaluation.deployment import measure_transfer, transfer_to
from probebench.evaluation.headline import Flat
from probebench.evaluation.metrics import auroc_score
from probebench.evaluation.results import (
    FlaggedOut,
    IntervalOut,
    Submission,
    TaskResult,
    TransferOut,
)
from probebench.evaluation.session import Session, SubmitError, SubmitOptions
from probebench.evaluation.submit import submit
from probebench.evaluation.transfer import (
    ALPHAS,
    CORPUS_FILE,
    CORPUS_SHA256,
    CORPUS_SIZE,
    TransferTarget,
    corpus_prompts,
    corpus_sentences,
    fit_transfer_map,
    held_out,
    map_r2,
    parse_targets,
    transfer_ratio,
)
from probebench.leaderboard.probescore import axis_values, load_probescore_spec, probescore
from probebench.registry.entry import Entry, entry_files, read_entry
from probebench.registry.store import read_history
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog
from tests.artifacts import make_artifact
from tests.registry_fixture import synthetic_record, synthetic_result

REPO = Path(__file__).resolve().parents[2]
MINILM_PROBE = REPO / "registry" / "artifacts" / "blimp-det-noun-minilm-l6-l4-v1"
SMOLLM_PROBE = REPO / "registry" / "artifacts" / "blimp-det-noun-smollm2-135m-l15-v1"
BLIMP = "blimp_determiner_noun_agreement_1"


# --- the target's syntax -----------------------------------------------------------

def test_a_target_is_model_at_site() -> None:
    target = TransferTarget.parse("minilm-l6@4:token_avg")
    assert target == TransferTarget("minilm-l6", Site(4, "token_avg"))
    assert str(target) == "minilm-l6@4:token_avg"
    # a folder or hub id is a model too; the site follows the last "@"
    assert TransferTarget.parse("/models/a@b/smollm@15:last_token").model == "/models/a@b/smollm"
    assert [str(t) for t in parse_targets(["minilm-l6@4:token_avg",
                                           "smollm2-135m@15:token_avg"])] == [
        "minilm-l6@4:token_avg", "smollm2-135m@15:token_avg"]


@pytest.mark.parametrize(("text", "message"), [
    ("minilm-l6", r"expected MODEL@LAYER:POSITION \(e\.g\. minilm-l6@4:token_avg\)"),
    ("minilm-l6@", "expected MODEL@LAYER:POSITION"),
    ("@4:token_avg", "expected MODEL@LAYER:POSITION"),
    ("minilm-l6@four:token_avg", "expected LAYER:POSITION"),
    ("minilm-l6@4:middle", "site position must be one of"),
    ("minilm-l6@4:end_answer", "'answer' span, which the transfer corpus's sentences do not "
                               "have; use one of last_token, token_avg, attention_weighted"),
    ("minilm-l6@blocks.3.hook_resid_post", r"write 4:<position>"),
])
def test_a_malformed_target_is_refused_with_the_form(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        TransferTarget.parse(text)


def test_a_target_declared_twice_is_refused() -> None:
    with pytest.raises(InputError, match="declared twice"):
        parse_targets(["minilm-l6@4:token_avg", " minilm-l6 @ 4:token_avg"])
    with pytest.raises(InputError, match=r"found the string 'minilm-l6@4:token_avg' \(write"):
        parse_targets("minilm-l6@4:token_avg")


def test_the_documented_examples_hold() -> None:
    import doctest

    from probebench.evaluation import transfer

    assert doctest.testmod(transfer).failed == 0


def test_entries_check_their_targets() -> None:
    entries = [read_entry(p) for p in entry_files(REPO / "registry")]
    # every reference entry declares the other embedded model
    assert {e.model: tuple(e.transfer_targets) for e in entries} == {
        "smollm2-135m": ("minilm-l6@4:token_avg",), "minilm-l6": ("smollm2-135m@15:token_avg",)}
    data = entries[0].model_dump()
    with pytest.raises(ValueError, match="expected MODEL@LAYER:POSITION"):
        Entry.model_validate({**data, "transfer_targets": ["minilm-l6"]})


# --- the map and the ratio, on synthetic arrays ----------------------------------

class _Correlated:
    """Rows with correlated features of different scales (as hidden states have), all
    drawn from one distribution."""

    def __init__(self, d: int, rng: np.random.Generator) -> None:
        self.d, self.rng = d, rng
        self.mix, self.scale = rng.normal(size=(d, d)), rng.uniform(0.1, 30, d)

    def __call__(self, n: int) -> np.ndarray:
        return (self.rng.normal(size=(n, self.d)) @ self.mix) * self.scale + 5


def test_the_ridge_map_recovers_an_affine_map_between_widths() -> None:
    rng = np.random.default_rng(0)
    rows = _Correlated(12, rng)
    x = rows(500)                           # the target: 12 features
    a, b = rng.normal(size=(12, 7)), rng.normal(size=7) * 10
    y = x @ a + b                            # the probe's model: 7
    mean, scale = y.mean(0), y.std(0)
    x = x + rng.normal(0, 1e-3, x.shape)
    fit = fit_transfer_map(x, y, mean, scale, seed=0)
    assert fit.r2 > 0.999 and fit.alpha <= 1.0
    assert len(fit.r2_by_alpha) == len(ALPHAS) and fit.r2 >= max(fit.r2_by_alpha) - 1e-4
    new = rows(50)
    truth = new @ a + b
    assert fit.fitted(new).shape == (50, 7)
    assert map_r2(truth, fit.fitted(new), mean, scale) > 0.999
    # the shuffled-pair control knows nothing of which row is which
    assert fit.control_r2 < 0.1 < fit.r2
    assert len(fit.controls) == 10 and all(c.coef.shape == (12, 7) for c in fit.controls)
    # each control's output has the fitted map's variance (in the scaler's coordinates)
    var = float((fit.fitted(x) / scale).var(0).sum())
    for c in fit.controls:
        assert float((c(x) / scale).var(0).sum()) == pytest.approx(var, rel=1e-9)


def test_alpha_is_chosen_on_the_held_out_fifth() -> None:
    rng = np.random.default_rng(1)
    x = _Correlated(40, rng)(300)
    a = rng.normal(size=(40, 5))
    clean = x @ a
    noisy = clean + rng.normal(0, 3 * clean.std(), clean.shape)
    ones, zeros = np.ones(5), np.zeros(5)
    calm = fit_transfer_map(x, clean, zeros, ones, seed=0)
    rough = fit_transfer_map(x, noisy, zeros, ones, seed=0)
    assert rough.alpha > calm.alpha  # noise calls for more shrinkage
    assert held_out(300).sum() == 60 and held_out(300)[4] and not held_out(300)[0]
    # the reported R² is the held-out one of the chosen alpha
    assert rough.r2 == rough.r2_by_alpha[ALPHAS.index(rough.alpha)]
    assert rough.r2 < 0.5 and calm.r2 > 0.99


def test_a_space_mapped_onto_itself_is_the_identity() -> None:
    rng = np.random.default_rng(2)
    rows = _Correlated(20, rng)
    x = rows(400)
    fit = fit_transfer_map(x, x, x.mean(0), x.std(0), seed=0)
    new = rows(30)
    # up to the shrinkage of the chosen alpha
    assert (np.abs(fit.fitted(new) - new) / x.std(0)).max() < 0.05
    assert map_r2(new, fit.fitted(new), x.mean(0), x.std(0)) > 0.9999
    assert fit.r2 > 0.9999 and fit.control_r2 < 0


def test_the_map_is_deterministic_and_the_control_follows_the_seed() -> None:
    rng = np.random.default_rng(3)
    x, y = _Correlated(9, rng)(200), _Correlated(6, rng)(200)
    one, two = (fit_transfer_map(x, y, np.zeros(6), np.ones(6), seed=7) for _ in range(2))
    assert one.fitted.coef.tobytes() == two.fitted.coef.tobytes()
    assert [c.coef.tobytes() for c in one.controls] == [c.coef.tobytes() for c in two.controls]
    other = fit_transfer_map(x, y, np.zeros(6), np.ones(6), seed=8)
    assert other.fitted.coef.tobytes() == one.fitted.coef.tobytes()
    assert other.controls[0].coef.tobytes() != one.controls[0].coef.tobytes()


def test_map_r2_in_the_probe_coordinates() -> None:
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(4)
    y, noise = rng.normal(size=(40, 3)) * [1, 10, 100], rng.normal(size=(40, 3))
    mean, scale = np.array([0.0, 1.0, 2.0]), np.array([1.0, 10.0, 100.0])
    pred = y + noise * scale
    expected = r2_score((y - mean) / scale, (pred - mean) / scale,
                        multioutput="variance_weighted")
    assert map_r2(y, pred, mean, scale) == pytest.approx(expected, rel=1e-12)


def test_transfer_ratio_and_its_clamp() -> None:
    assert transfer_ratio(0.75, 1.0) == pytest.approx(0.5)
    assert transfer_ratio(0.9, 0.9) == 1.0
    assert transfer_ratio(0.95, 0.9) == 1.0       # better than the source: clamped to 1
    assert transfer_ratio(0.3, 0.9) == 0.0        # below chance: clamped to 0
    assert transfer_ratio(0.8, 0.5) is None       # nothing to transfer
    assert transfer_ratio(0.8, 0.45) is None
    assert transfer_ratio(None, 0.9) is None


def test_a_probe_read_through_the_map_keeps_its_auroc() -> None:
    """Source and target are two linear views of one latent: the probe trained on the
    source reads the mapped target nearly as well; through a control map it is lost."""
    rng = np.random.default_rng(5)
    latent_corpus, latent_test = rng.normal(size=(600, 10)), rng.normal(size=(400, 10))
    to_source, to_target = rng.normal(size=(10, 16)), rng.normal(size=(10, 11))
    labels = (latent_test[:, 0] > 0).astype(int)
    source_test = latent_test @ to_source
    direction = np.linalg.lstsq(to_source, np.eye(10)[:, :1], rcond=None)[0][:, 0]
    weights = ProbeWeights(mean=np.zeros(16), scale=np.ones(16), weights=(direction[:, None],),
                           biases=(np.zeros(1),), activation="identity", classes=(0, 1),
                           probe_type="linear")
    source_auroc = auroc_score(labels, weights.predict_proba(source_test)[:, 1])
    fit = fit_transfer_map(latent_corpus @ to_target + rng.normal(0, 0.05, (600, 11)),
                           latent_corpus @ to_source, np.zeros(16), np.ones(16), seed=0)
    target_test = latent_test @ to_target
    target_auroc = auroc_score(labels, weights.predict_proba(fit.fitted(target_test))[:, 1])
    control = np.mean([auroc_score(labels, weights.predict_proba(c(target_test))[:, 1])
                       for c in fit.controls])
    ratio, control_ratio = (transfer_ratio(target_auroc, source_auroc),
                            transfer_ratio(float(control), source_auroc))
    assert source_auroc > 0.99 and ratio is not None and ratio > 0.95
    assert control_ratio is not None and control_ratio < 0.5 < ratio


# --- the corpus --------------------------------------------------------------------

def test_the_corpus_is_pinned(tmp_path: Path) -> None:
    sentences = corpus_sentences()
    assert len(sentences) == CORPUS_SIZE == len(set(sentences))
    assert all(3 <= len(s.split()) <= 20 for s in sentences)
    assert [p.text for p in corpus_prompts()] == list(sentences)
    edited = tmp_path / "neutral_sentences.txt"
    edited.write_bytes(CORPUS_FILE.read_bytes().replace(b"kettle", b"kettles"))
    with pytest.raises(InputError, match=f"not the pinned {CORPUS_SHA256}"):
        corpus_sentences(edited)


# --- results, stored results and ProbeScore --------------------------------------

def _transfer_out(target: str, ratio: float | None, auroc: float = 0.7) -> TransferOut:
    iv = IntervalOut(value=auroc, ci_low=auroc - 0.05, ci_high=auroc + 0.05, resamples=100,
                     dropped=0)
    return TransferOut(target=target, auroc=iv, source_auroc=0.9, transfer=ratio, map_r2=0.5,
                       alpha=316.227766, control_auroc=0.51, control_transfer=0.025,
                       control_r2=-0.2, corpus_sha256=CORPUS_SHA256, note="synthetic")


def _with_transfer(transfer: dict[str, Any]) -> TaskResult:
    base = synthetic_result("blimp_passive_1", 0.3, np.random.default_rng(0))
    return base.model_copy(update={"transfer": transfer})


def test_results_hold_the_new_transfer_and_read_the_old() -> None:
    new = _with_transfer({"minilm-l6@4:token_avg": _transfer_out("minilm-l6@4:token_avg", 0.4)})
    back = TaskResult.model_validate_json(new.model_dump_json())
    assert isinstance(back.transfer["minilm-l6@4:token_avg"], TransferOut) and back == new
    old = {**new.model_dump(mode="json"), "transfer": {"undeclared": {
        "value": 0.5, "ci_low": None, "ci_high": None, "imputed": True,
        "note": "no transfer target declared"}}}
    assert isinstance(TaskResult.model_validate(old).transfer["undeclared"], FlaggedOut)
    # the stored registry histories hold both: records written before the map (a
    # FlaggedOut) and since (a TransferOut), and both read
    stored = sorted(p for p in (REPO / "registry" / "results").rglob("*.json")
                    if not p.name.startswith("_"))  # _generalisation.json: not results
    assert stored
    kinds = {type(v) for path in stored for record in read_history(path)
             for v in record.result.transfer.values()}
    assert kinds == {FlaggedOut, TransferOut}


def test_probescore_reads_the_ratio_from_0_2_0_and_old_specs_compute_as_before() -> None:
    old = synthetic_record(_with_transfer({"undeclared": FlaggedOut(
        value=0.5, imputed=True, note="no transfer target declared")}))
    new = synthetic_record(_with_transfer({
        "minilm-l6@4:token_avg": _transfer_out("minilm-l6@4:token_avg", 0.3),
        "other@2:token_avg": _transfer_out("other@2:token_avg", 0.5)}))
    pearson = synthetic_record(_with_transfer({"twin": FlaggedOut(
        value=0.8, imputed=False, note="Pearson r of logits over the test prompts")}))
    unmeasurable = synthetic_record(_with_transfer({
        "minilm-l6@4:token_avg": _transfer_out("minilm-l6@4:token_avg", None, auroc=0.6)}))
    v010, v020 = load_probescore_spec("0.1.0"), load_probescore_spec("0.2.0")

    values = axis_values({"t": old}, "MIT")
    assert values["transfer"].imputed and values["transfer"].value == 0.5
    # no target declared: 0 from 0.2.0 on (not declaring must not pay), 0.5 before
    assert values["mapped_transfer"].imputed and values["mapped_transfer"].value == 0.0
    assert values["mapped_transfer"].note == "no transfer target declared"
    assert probescore(v020, values).total < probescore(v010, values).total

    values = axis_values({"t": new}, "MIT")
    assert not values["mapped_transfer"].imputed
    assert values["mapped_transfer"].value == pytest.approx(0.4)  # mean over the targets
    assert "minilm-l6@4:token_avg" in values["mapped_transfer"].note
    assert values["transfer"].imputed and values["transfer"].value == 0.5  # old: as before
    assert probescore(v020, values).values["cross_model_transfer"].value == pytest.approx(0.4)

    values = axis_values({"t": pearson}, "MIT")
    assert values["transfer"].value == pytest.approx(0.8)  # an old Pearson r, as before
    assert values["mapped_transfer"].imputed  # not a transfer ratio

    values = axis_values({"t": unmeasurable}, "MIT")
    assert values["mapped_transfer"].imputed and values["mapped_transfer"].value == 0.0
    assert "no transfer measured" in values["mapped_transfer"].note


def test_report_and_entry_page_show_the_transfer() -> None:
    from probebench.evaluation.definitions import metric_definitions
    from probebench.evaluation.report import render_report
    from probebench.leaderboard.entry_page import transfer_view

    result = _with_transfer({"minilm-l6@4:token_avg": _transfer_out("minilm-l6@4:token_avg",
                                                                    0.4)})
    record = synthetic_record(result)
    submission = Submission(spec_version="0.0.1", probebench_version="test",
                            probe=record.probe, model={
                                "name": "smollm2-135m", "model_type": "llama",
                                "num_layers": 30, "hidden_size": 576, "dtype": "float32",
                                "weights_sha256": "ab" * 32},
                            device="cpu", seed=0, bootstrap_resamples=100, versions={},
                            definitions=metric_definitions(), tasks=[result])
    text = render_report(submission)
    assert "## Cross-model transfer" in text
    assert ("| blimp_passive_1 | minilm-l6@4:token_avg | 0.500 | -0.200 | 316.228 | "
            "0.700 [0.650, 0.750] | 0.900 | 0.400 | 0.510 | 0.025 |") in text
    assert "minilm-l6@4:token_avg: 0.400 (target AUROC 0.700" in text
    none = render_report(submission.model_copy(update={"tasks": [_with_transfer({})]}))
    assert "no target declared" in none and "## Cross-model transfer" not in none
    view = transfer_view(result)
    assert view["rows"][0]["transfer"] == "0.400" and view["rows"][0]["map_r2"] == "0.500"
    assert view["rows"][0]["control_transfer"] == "0.025"
    assert "control 0.025" in view["summary"]
    older = transfer_view(_with_transfer({"undeclared": FlaggedOut(
        value=0.5, imputed=True, note="no transfer target declared")}))
    assert older["rows"] == [] and "stored before" in older["summary"]


def test_the_leaderboard_shows_a_stored_transfer(tmp_path: Path) -> None:
    """A stored result with a measured transfer: the entry page's table and ProbeScore
    0.2.0's axis; an entry whose results predate the map keeps the imputed 0.5."""
    from probebench.leaderboard.build import build_leaderboard, page_name
    from probebench.registry.store import ResultHistory, result_path
    from tests.registry_fixture import synthetic_registry

    registry = tmp_path / "registry"
    ids = synthetic_registry(registry, 2)
    path = result_path(registry, ids[0], "blimp_passive_1")
    history = ResultHistory.model_validate_json(path.read_text())
    record = history.history[-1]
    target = "minilm-l6@4:token_avg"
    history.history[-1] = record.model_copy(update={"result": record.result.model_copy(
        update={"transfer": {target: _transfer_out(target, 0.4)}})})
    path.write_text(history.to_json())
    build_leaderboard(registry, tmp_path / "board", catalog=TaskCatalog.default(),
                      n_resamples=20)
    page = (tmp_path / "board" / page_name(ids[0])).read_text()
    assert '<h3 id="transfer-blimp_passive_1">Cross-model transfer</h3>' in page
    assert "<strong>0.400</strong>" in page and "alpha 316.228" in page
    assert f"mean credited transfer ratio to {target}" in page  # the axis note, 0.3.0
    other = (tmp_path / "board" / page_name(ids[1])).read_text()
    assert "Cross-model transfer</h3>" not in other
    assert "stored before transfer was measured through a map" in other


# --- the real embedded models ------------------------------------------------------

def _session(lm: Any, *others: Any, targets: list[str], limit: int) -> Session:
    session = Session(TaskCatalog.default(), SubmitOptions(
        progress=False, bootstrap=200, limit=limit, transfer_targets=targets))
    for model in (lm, *others):  # the loaded fixtures, not a second copy
        name = {"llama": "smollm2-135m", "bert": "minilm-l6"}[model.resolved.identity.model_type]
        session.resolved[name] = model.resolved
        session.loaded[name] = model
    return session


def test_minilm_mapped_onto_itself_transfers_whole(minilm: Any) -> None:
    """The reference MiniLM probe, MiniLM as its own target at its own site: the map
    fitted on the corpus (854 sentences, more than 384 features) is the identity."""
    weights = load_weights(MINILM_PROBE)
    site = Site(4, "token_avg")
    session = _session(minilm, targets=["minilm-l6@4:token_avg"], limit=40)
    flat = Flat.of(session.task(BLIMP).test)
    acts = session.activations("minilm-l6", f"{BLIMP}/test", flat.prompts, site)
    out = measure_transfer(session, "minilm-l6", weights, BLIMP, flat, site, acts)
    same = out["minilm-l6@4:token_avg"]
    assert isinstance(same, TransferOut)
    assert same.source_auroc is not None and same.source_auroc > 0.6
    assert same.transfer is not None and same.transfer > 0.97
    assert same.map_r2 is not None and same.map_r2 > 0.999
    assert same.control_r2 is not None and same.control_r2 < 0 < same.map_r2
    assert same.control_transfer is not None and same.control_transfer < 0.5 < same.transfer
    assert same.corpus_sha256 == CORPUS_SHA256 and "854 neutral sentences" in same.note
    # the corpus went through the session's activation cache like any prompts
    assert session.activations("minilm-l6", "transfer corpus", corpus_prompts(),
                               site).shape == (CORPUS_SIZE, 384)


def test_a_probe_transfers_across_hidden_sizes(smollm: Any, minilm: Any) -> None:
    """The reference SmolLM2 probe (576 features, 15:last_token) read from MiniLM (384,
    4:token_avg) through a map fitted on the first 150 corpus sentences."""
    weights = load_weights(SMOLLM_PROBE)
    site = Site(15, "last_token")
    target = TransferTarget.parse("minilm-l6@4:token_avg")
    session = _session(smollm, minilm, targets=[str(target)], limit=30)
    flat = Flat.of(session.task(BLIMP).test)
    idx, y = flat.labelled()
    acts = session.activations("smollm2-135m", f"{BLIMP}/test", flat.prompts, site)
    source_auroc = auroc_score(y, weights.predict_proba(acts)[idx, 1])
    out = transfer_to(session, "smollm2-135m", weights, BLIMP, flat, site, target,
                      source_auroc, corpus=corpus_prompts()[:150])
    assert out.auroc is not None and out.auroc.value is not None
    assert 0.0 <= out.auroc.value <= 1.0 and out.auroc.resamples == 200
    assert out.map_r2 is not None and out.control_r2 is not None
    assert out.map_r2 > out.control_r2 and out.map_r2 > 0.1
    assert "(384 features) to smollm2-135m at 15:last_token (576)" in out.note
    assert "fitted on 150 neutral sentences; alpha and R² on 30 held out" in out.note
    assert out.corpus_sha256 != CORPUS_SHA256  # a corpus of its own, hashed
    if out.transfer is not None:
        assert 0.0 <= out.transfer <= 1.0


def test_a_target_the_model_cannot_read_is_refused_before_model_work(tmp_path: Path) -> None:
    folder, *_ = make_artifact(tmp_path / "a")
    for targets, message in ((["minilm-l6@9:token_avg"], "layer 9 is out of range; "
                                                         "minilm-l6 has layers 0..6"),
                             (["minilm-l6"], "expected MODEL@LAYER:POSITION")):
        with pytest.raises(SubmitError, match=message):
            submit(folder, [BLIMP], SubmitOptions(progress=False, transfer_targets=targets))
