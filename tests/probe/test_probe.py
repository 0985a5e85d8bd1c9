"""``probebench.load_probe``: a registered probe by id (or an artifact folder), which
scores texts exactly as ``submit`` does, on the repository's own registry."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import probebench
from probebench import NoDirectionError, Probe, Submission, SubmitOptions, load_probe, submit
from probebench.errors import InputError
from probebench.evaluation.headline import Flat
from probebench.evaluation.reproducibility import VALUE_TOLERANCE, rounded
from probebench.registry.store import latest_results
from probebench.tasks.catalog import TaskCatalog
from tests.catalogs import copy_catalog

REPO = Path(__file__).resolve().parents[2]
REGISTRY = REPO / "registry"
LINEAR = "probebench/blimp-det-noun-smollm2-135m-l15-v1"
MLP = "probebench/verb-grammar-mlp-smollm2-135m-l20-v1"
#: a registered BLiMP task cut to its first pairs, so a full ``submit`` takes seconds
SMALL = "blimp_det_noun_small"
SMALL_PAIRS = 40


def _small_catalog(root: Path) -> TaskCatalog:
    """The packaged catalog plus SMALL: the first SMALL_PAIRS lines of
    determiner_noun_agreement_1 under the same spec, its hashes pinned as they are."""
    catalog = copy_catalog(root)
    source = root / "data" / "blimp" / "determiner_noun_agreement_1.jsonl"
    lines = source.read_text("utf-8").splitlines(keepends=True)[:SMALL_PAIRS]
    (root / "data" / "blimp" / "small.jsonl").write_text("".join(lines), "utf-8")
    doc = yaml.safe_load(catalog.path.read_text("utf-8"))
    spec = next(t for t in doc["tasks"] if t["id"] == "blimp_determiner_noun_agreement_1")
    small = {**copy.deepcopy(spec), "id": SMALL, "files": {"data": "data/blimp/small.jsonl"},
             "files_sha256": {"data/blimp/small.jsonl": "0" * 64}, "test_sha256": "0" * 64}
    small.pop("holdouts", None)
    doc["tasks"].append(small)
    catalog.path.write_text(yaml.safe_dump(doc, sort_keys=False), "utf-8")
    files, test = TaskCatalog.from_file(catalog.path).current_hashes(SMALL)
    small["files_sha256"], small["test_sha256"] = files, test
    catalog.path.write_text(yaml.safe_dump(doc, sort_keys=False), "utf-8")
    return TaskCatalog.from_file(catalog.path)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[TaskCatalog, Probe, Submission]:
    catalog = _small_catalog(tmp_path_factory.mktemp("catalog"))
    probe = load_probe(LINEAR, registry=REGISTRY)
    assert probe.entry is not None
    result = submit(probe.folder, [SMALL],
                    SubmitOptions(bootstrap=100, latency_prompts=1, progress=False,
                                  device="cpu"),
                    catalog=catalog, expected_sha256=probe.entry.artifact_sha256)
    return catalog, probe, result


def test_a_registered_probe_scores_texts_as_submit_does(
        small_run: tuple[TaskCatalog, Probe, Submission]) -> None:
    catalog, probe, result = small_run
    flat = Flat.of(catalog.load(SMALL).test)
    # cache=False: the model runs again here, rather than reading submit's activations
    probs = probe.score_texts(flat.prompts, device="cpu", cache=False)
    assert probs.shape == (len(flat.prompts),) and probs.dtype == np.float64
    idx, _ = flat.labelled()
    predictions = result.tasks[0].predictions
    assert predictions.prompt_ids == [flat.prompts[i].id for i in idx.tolist()]
    # the same prompts in the same batches through the same extraction and forward give
    # bit-identical float32 activations, hence the same probabilities: submit stores them
    # rounded to the reproducibility contract's decimals, so they are equal once rounded
    assert [rounded(float(p)) for p in probs[idx]] == predictions.probs
    assert np.abs(probs[idx] - np.array(predictions.probs)).max() <= 5e-7
    # a bare string and a Prompt score the same; activations from elsewhere too
    first = flat.prompts[idx[0]]
    assert probe.score_texts([first.text], device="cpu")[0] == pytest.approx(
        probs[idx[0]], abs=1e-6)  # another batch: float rounding of the activations
    acts = probe.activations(flat.prompts, device="cpu")
    assert np.array_equal(probe.score_activations(acts), probs)


def test_a_linear_probe_has_a_direction(small_run: tuple[TaskCatalog, Probe, Submission]
                                        ) -> None:
    catalog, probe, _ = small_run
    acts = probe.activations(Flat.of(catalog.load(SMALL).test).prompts, device="cpu")
    direction, bias = probe.direction, probe.bias
    assert direction.shape == (576,) and isinstance(bias, float)
    # the scaler folded in: one dot product reproduces the decision function and score
    logits = acts.astype(np.float64) @ direction + bias
    assert np.abs(logits - probe.decision_function(acts)).max() < 1e-9
    assert np.abs(1 / (1 + np.exp(-logits)) - probe.score_activations(acts)).max() < 1e-12
    assert np.allclose(direction, probe.weights.weights[0][:, 0] / probe.weights.scale)


def test_the_reference_mlp_by_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry of the enclosing checkout by default; the stored predictions of the
    entry reproduce on a few verb-grammar prompts."""
    monkeypatch.chdir(REPO / "registry" / "probes")
    probe = load_probe(MLP)
    assert probe.entry is not None and probe.entry.id == MLP
    assert probe.bundle_sha256 == probe.entry.artifact_sha256
    assert (probe.model, str(probe.site)) == ("smollm2-135m", "20:token_avg")
    assert probe.meta.probe_type == "mlp" and probe.weights.hidden_sizes == [64]
    assert probe.folder.resolve() == (REPO / probe.entry.artifact_url).resolve()
    assert repr(probe) == ("Probe('probebench/verb-grammar-mlp-smollm2-135m-l20-v1', mlp "
                           f"576 -> 64 -> 1, reads smollm2-135m at 20:token_avg, bundle "
                           f"{probe.bundle_sha256[:12]})")
    flat = Flat.of(TaskCatalog.for_repo(REPO).load("verb_grammar").test)
    prompts = flat.prompts[:24]
    probs = probe.score_texts(prompts, device="cpu")
    stored = latest_results(REGISTRY, MLP)["verb_grammar"].result.predictions
    by_id = dict(zip(stored.prompt_ids, stored.probs, strict=True))
    # stored by another process (and maybe another machine) over the whole test set:
    # equal within the reproducibility contract
    diffs = [abs(p - by_id[str(q.id)]) for p, q in zip(probs, prompts, strict=True)]
    assert len(diffs) == 24 and max(diffs) <= VALUE_TOLERANCE
    with pytest.raises(NoDirectionError, match=r"not linear .*no single direction"):
        _ = probe.direction
    with pytest.raises(InputError, match=r"shape \(n, 576\); found \(576,\)"):
        probe.score_activations(np.zeros(576))
    with pytest.raises(InputError, match=r"give \[text\] for one text"):
        probe.score_texts("She walks.")


def test_an_unknown_id_suggests_close_ones(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match=r"unknown probe id .*did you mean "
                                         r"probebench/verb-grammar-mlp-smollm2-135m-l20-v1"):
        load_probe("probebench/verb-grammar-mlp-smollm2-135m-l21-v1", registry=REGISTRY)
    with pytest.raises(InputError, match=r"it holds \d+ entries: probebench/blimp"):
        load_probe("acme/nothing-like-it", registry=REGISTRY)
    monkeypatch.chdir(tmp_path)  # no checkout, no registry: the published one, offline here
    monkeypatch.delenv("PROBEBENCH_REGISTRY", raising=False)
    monkeypatch.setenv("PROBEBENCH_MIRROR_CACHE", str(tmp_path / "mirrors"))
    with pytest.raises(InputError, match=r"the published registry .*no copy of that "
                                         r"registry index is cached.*pass registry="):
        load_probe(MLP)
    with pytest.raises(InputError, match="neither an artifact folder nor a registry id"):
        load_probe("no/such/folder")


def test_an_artifact_folder_still_loads(tmp_path: Path) -> None:
    folder = REPO / "registry" / "artifacts" / "blimp-det-noun-smollm2-135m-l15-v1"
    by_id = load_probe(LINEAR, registry=REGISTRY)
    for ref in (folder, str(folder)):
        probe = load_probe(ref)
        assert probe.entry is None and probe.id == folder.name
        assert probe.bundle_sha256 == by_id.bundle_sha256
        assert np.array_equal(probe.direction, by_id.direction)
    # the weights-only loader, under the name published reproducer notebooks import
    from probebench.artifact import forms

    old_name = "load_probe"  # kept for the notebooks only: in no namespace listing
    weights = getattr(forms, old_name)(folder)
    assert old_name not in vars(forms) and old_name not in dir(forms)
    assert np.array_equal(weights.weights[0], by_id.weights.weights[0])
    assert probebench.load_weights(folder).classes == weights.classes
    # an artifact that fails a check is refused, naming it
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    (broken / "README.md").write_text("")
    with pytest.raises(InputError, match=r"does not validate .*README\.md is empty"):
        load_probe(broken)


def test_submission_to_dict_is_the_json_written(
        small_run: tuple[TaskCatalog, Probe, Submission], tmp_path: Path) -> None:
    _, _, result = small_run
    path = tmp_path / "submission.json"
    path.write_text(result.to_json(), "utf-8")
    as_dict = result.to_dict()
    assert as_dict == json.loads(path.read_text("utf-8"))
    assert Submission.model_validate(as_dict) == result
    assert as_dict["tasks"][0]["predictions"]["probs"] == result.tasks[0].predictions.probs


def test_importing_probebench_stays_cheap() -> None:
    code = ("import sys, probebench; print(sorted(m for m in ('torch', 'transformers', "
            "'sklearn') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == "[]"
    assert {"Probe", "load_probe", "load_weights"} <= set(probebench.__all__)
