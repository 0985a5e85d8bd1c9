"""probebench train and sweep: real fits on registered tasks, real artifacts on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
import yaml

from probebench.artifact.checks import validate
from probebench.artifact.forms import detect_forms, load_forms
from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.reproducibility import VALUE_TOLERANCE
from probebench.models import Site
from probebench.tasks.catalog import TaskCatalog, effective_license
from probebench.train import TrainConfig, grid_search, train, train_val_items
from probebench.train.artifact import FILES, write_artifact

TASK = "eval_awareness"  # SentEval format, 360 short prompts: the cheapest real task

pytestmark = pytest.mark.usefixtures("share_module_cache")


@pytest.fixture(scope="module")
def trained(module_cache: Path) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROBEBENCH_ACTIVATION_CACHE", str(module_cache))
        return train(TrainConfig(task=TASK, site=Site(10, "last_token"), bootstrap=200),
                     progress=False)


def test_train_writes_a_valid_artifact_with_both_forms(trained: Any, tmp_path: Path) -> None:
    out = write_artifact(trained, tmp_path / "guard", created_at=None)
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    report = validate(out)
    assert report.valid, [(c.name, c.message) for c in report.failed()]
    forms = detect_forms({p.name for p in out.iterdir()})
    assert sorted(f.name for f in forms) == ["joblib", "native"]
    # each form alone gives the in-memory probe's probabilities
    x = trained.test_acts
    expected = trained.probe.predict_proba(trained.scaler.transform(x.astype(np.float64)))
    for form in forms:
        got = load_forms(out, [form]).predict_proba(x)
        assert np.abs(got - expected).max() < 1e-9
    meta = yaml.safe_load((out / "meta.yaml").read_text())
    reported = meta["reported_metrics"][TASK]
    assert reported["test_sha256"] == TaskCatalog.default().load(TASK).spec.test_sha256
    assert reported["auroc"] == pytest.approx(trained.headline.auroc.value, abs=VALUE_TOLERANCE)
    assert reported["auroc_ci_low"] <= reported["auroc"] <= reported["auroc_ci_high"]
    readme = (out / "README.md").read_text()
    assert "(chosen)" in readme and f"{trained.headline.auroc.value:.4f}" in readme


def test_the_guard_task_is_learnable(trained: Any) -> None:
    # benchmark-style prompts against ordinary requests: a clear signal at layer 10
    assert trained.headline.auroc.value > 0.9
    # 216 train lines, less the holdout carved out of them for re-evaluation
    holdout = TaskCatalog.default().reeval_set(TASK).data.test
    assert len(holdout) == 65 and trained.n_train == 216 - 65 and trained.n_val == 72
    assert trained.val_source == "the task's val split"


def test_submit_reproduces_the_reported_metrics(trained: Any, tmp_path: Path) -> None:
    from probebench.evaluation.session import SubmitOptions
    from probebench.evaluation.submit import submit

    out = write_artifact(trained, tmp_path / "a")
    result = submit(out, [TASK], SubmitOptions(bootstrap=200, progress=False,
                                               latency_prompts=3))
    task = result.tasks[0]
    h = trained.headline
    assert task.auroc.value == h.auroc.value
    assert (task.auroc.ci_low, task.auroc.ci_high) == (h.auroc.ci_low, h.auroc.ci_high)
    # the stored numbers are the headline's, to the contract's decimals
    assert task.ece == round(h.ece, 6) and task.fpr_at_99tpr == round(h.fpr_at_99tpr, 6)


def test_grid_ties_go_to_the_strongest_penalty() -> None:
    rng = np.random.default_rng(0)
    z = rng.normal(size=(100, 5))
    # a training set symmetric about 0 (each row and its negation, opposite labels)
    # gives every grid point intercept 0
    x = np.concatenate([z, -z])
    y = np.concatenate([(z[:, 0] > 0), (z[:, 0] <= 0)]).astype(int)
    config = TrainConfig(task=TASK, site=Site(1, "last_token"))
    # validation rows at the training mean then get P = 0.5 from every grid point, and
    # balanced labels make every log-loss log 2 and every accuracy 0.5: all tie
    x_val = np.zeros((50, 5))
    y_val = np.array([0, 1] * 25)
    points, chosen = grid_search(config, x, y, x_val, y_val)
    assert len({p.val_accuracy for p in points}) == 1
    assert all(abs(p.val_log_loss - np.log(2)) < 1e-12 for p in points)
    assert chosen == min(p.value for p in points)


def _separable(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(n, 4))
    return x, (x[:, 0] > 0).astype(int)


def test_a_choice_at_the_grids_edge_is_named_and_kept(
        capsys: pytest.CaptureFixture[str]) -> None:
    from probebench.cli.train import warn_grid_edges
    from probebench.evaluation.protocol import C_GRID, GridPoint
    from probebench.train.trainer import Trained, grid_edges

    rng = np.random.default_rng(0)
    config = TrainConfig(task=TASK, site=Site(1, "last_token"))
    # separable classes: validation log-loss falls as C grows, so the largest C wins
    (x, y), (x_val, y_val) = _separable(120, rng), _separable(60, rng)
    points, chosen = grid_search(config, x, y, x_val, y_val)
    losses = [p.val_log_loss for p in points]
    assert chosen == max(C_GRID) and losses == sorted(losses, reverse=True)
    (edge,) = grid_edges("C", points, chosen)
    assert (edge.name, edge.value, edge.end, edge.grid) == ("C", chosen, "highest",
                                                            tuple(sorted(C_GRID)))
    assert "the weakest regularisation" in edge.describe()
    # labels that are noise: every C overfits, the strongest penalty wins
    x_noise, x_val_noise = rng.normal(size=(60, 20)), rng.normal(size=(60, 20))
    noise_points, noise_chosen = grid_search(config, x_noise, rng.integers(0, 2, 60),
                                             x_val_noise, rng.integers(0, 2, 60))
    assert noise_chosen == min(C_GRID)
    (low,) = grid_edges("C", noise_points, noise_chosen)
    assert low.end == "lowest" and "the strongest regularisation" in low.describe()
    # inside the grid: nothing to say; alpha's ends mean the opposite of C's
    assert grid_edges("C", points, 1.0) == []
    alphas = [GridPoint(a, 1.0) for a in (1.0, 0.1, 0.01)]
    assert "the strongest" in grid_edges("alpha", alphas, 1.0)[0].describe()
    # a multi-class MLP grid also searches the hidden size: its ends count too
    sized = [GridPoint(a, 1.0, h) for a in (1.0, 0.1, 0.01) for h in (50, 100, 200)]
    assert [e.name for e in grid_edges("alpha", sized, 0.1, 200)] == ["hidden"]
    # the report and the CLI say it, and the choice is the one the grid made
    trained = Trained(config=config, data=cast(Any, None), probe=None, scaler=None,
                      grid=points, chosen=chosen, n_train=len(y), n_val=len(y_val),
                      val_source="a test", test_probs=np.zeros(1), test_acts=np.zeros(1),
                      headline=cast(Any, None))
    assert trained.grid_edges == [edge]
    assert f"at the grid's edge: {edge.describe()}" in trained.describe()
    assert f"refit on train + validation with C = {chosen:g}" in trained.describe()
    warn_grid_edges(trained)
    err = capsys.readouterr().err
    grid = ", ".join(f"{c:g}" for c in sorted(C_GRID))
    assert err.startswith(f"probebench: warning: C = {chosen:g} is the highest value of its "
                          f"grid ({grid})")
    assert "C_GRID in probebench/evaluation/protocol.py" in err
    warn_grid_edges(Trained(**{**trained.__dict__, "chosen": 1.0}))
    assert capsys.readouterr().err == ""
    import doctest

    from probebench.train import trainer

    assert doctest.testmod(trainer).failed == 0


def test_hashed_validation_split_when_a_task_has_none() -> None:
    data = TaskCatalog.default().load("blimp_determiner_noun_agreement_1")
    assert "val" not in data.splits
    fit, held, how = train_val_items(data)
    assert "hashed 20%" in how
    assert {i.id for i in fit}.isdisjoint({i.id for i in held})
    assert len(fit) + len(held) == len(data.splits["train"])
    assert 0.1 < len(held) / len(data.splits["train"]) < 0.3
    again = train_val_items(TaskCatalog.default().load("blimp_determiner_noun_agreement_1"))
    assert [i.id for i in again[1]] == [i.id for i in held]


def test_training_is_deterministic(trained: Any, tmp_path: Path) -> None:
    import datetime as dt

    day = dt.date(2026, 11, 1)
    again = train(trained.config, progress=False)
    a = write_artifact(trained, tmp_path / "a", created_at=day)
    b = write_artifact(again, tmp_path / "b", created_at=day)
    assert validate(a).bundle_sha256 == validate(b).bundle_sha256


def test_nothing_is_written_when_the_artifact_would_not_validate(trained: Any,
                                                                 tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not validate"):
        write_artifact(trained, tmp_path / "bad", license="NOT-A-LICENSE")
    assert list(tmp_path.iterdir()) == []  # no folder, no staging leftovers


def test_a_non_empty_out_is_refused_without_force(trained: Any, tmp_path: Path) -> None:
    out = tmp_path / "x"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty"):
        write_artifact(trained, out)
    assert (out / "keep.txt").read_text() == "mine"
    write_artifact(trained, out, force=True)
    assert not (out / "keep.txt").exists() and validate(out).valid


def test_bad_probe_type_and_task_are_clear_errors() -> None:
    with pytest.raises(InputError, match="--probe-type must be one of linear, mlp"):
        TrainConfig(task=TASK, site=Site(1, "last_token"), probe_type="forest")
    # ``kind`` is the old name, still read: published notebooks call it so
    assert TrainConfig(task=TASK, site=Site(1, "last_token"), kind="mlp").probe_type == "mlp"
    with pytest.raises(InputError, match="--probe-type"):
        TrainConfig(task=TASK, site=Site(1, "last_token"), kind="forest")
    with pytest.raises(InputError, match="unknown task"):
        train(TrainConfig(task="no_such_task", site=Site(1, "last_token")), progress=False)


def test_mlp_probe_trains_and_validates(tmp_path: Path) -> None:
    # the fixture's site: its activations come from the module's cache
    trained = train(TrainConfig(task=TASK, site=Site(10, "last_token"), probe_type="mlp",
                                hidden=16, bootstrap=100), progress=False)
    assert trained.config.grid_name == "alpha"
    out = write_artifact(trained, tmp_path / "mlp")
    report = validate(out)
    assert report.valid and report.meta is not None and report.meta.probe_type == "mlp"
    assert report.weights is not None and report.weights.hidden_sizes == [16]


def test_cli_train_then_notebooks_reproduce_the_metrics(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    from tests.notebooks import printed_metrics, run_notebook

    out = tmp_path / "cli-probe"
    code = main(["train", "--task", TASK, "--site", "8:last_token", "--out", str(out),
                 "--bootstrap", "200", "--created-at", "2026-11-01", "--quiet"])
    assert code == 0
    captured = capsys.readouterr()
    text = captured.out
    assert "<- chosen" in text and "validated" in text
    meta = yaml.safe_load((out / "meta.yaml").read_text())
    # no --author/--contact/--license: guessed, and said so (git config, the task's data)
    for field in ("author", "contact", "license"):
        assert f"warning: {field}" in captured.err and f"give --{field}" in captured.err
    assert meta["author"] != "probebench maintainers"
    assert meta["license"] == effective_license(TaskCatalog.default().spec(TASK))
    reported = meta["reported_metrics"][TASK]
    assert main(["train", "--task", TASK, "--site", "8:last_token", "--out", str(out)]) == 2
    for name in ("eval.ipynb", "train.ipynb"):
        lines = run_notebook(out / name, timeout=600, cwd=out)
        printed = printed_metrics(lines)[TASK]
        for key in ("auroc", "ece", "brier", "fpr_at_99tpr", "accuracy"):
            assert printed[key] == pytest.approx(reported[key], abs=VALUE_TOLERANCE), (name, key)
    assert any("max |P(published) - P(reproduced)|" in line for line in
               run_notebook(out / "train.ipynb", timeout=600, cwd=out))


def test_layer_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from probebench.train.sweep import read_sweep

    out = tmp_path / "sweep.json"
    md = tmp_path / "sweep.md"
    assert main(["sweep", "--task", TASK, "--layers", "0,4,10", "--bootstrap", "100",
                 "--out", str(out), "--markdown", str(md), "--quiet"]) == 0
    sweep = read_sweep(out)
    assert [r.layer for r in sweep.rows] == [0, 4, 10]
    by_layer = {r.layer: r for r in sweep.rows}
    assert by_layer[10].auroc is not None and by_layer[10].auroc > 0.85
    assert sweep.best().layer in (4, 10)
    table = md.read_text()
    assert table.count("\n") == 2 + 3 and "**best**" in table
    assert json.loads(out.read_text())["task"] == TASK
    captured = capsys.readouterr()
    printed = captured.out
    assert "best layer on test" in printed
    # the layer to read is chosen on validation only: the lowest validation log-loss
    chosen = sweep.chosen_on_validation()
    assert chosen is not None
    assert chosen.val_log_loss == min(r.val_log_loss for r in sweep.rows
                                      if r.val_log_loss is not None)
    assert f"layer chosen on validation data only (lowest validation log-loss " \
           f"{chosen.val_log_loss:.4f}): {chosen.layer}" in printed
    # a C chosen at an end of the protocol's grid is named per layer, in the JSON, the
    # table and a warning; one inside it is not
    from probebench.evaluation.protocol import C_GRID

    for row in sweep.rows:
        at_edge = row.chosen in (min(C_GRID), max(C_GRID))
        assert (row.grid_edge is not None) == at_edge, row
        if at_edge:
            assert f"C = {row.chosen:g} is the" in (row.grid_edge or "")
    assert table.count("(grid edge)") == sum(r.grid_edge is not None for r in sweep.rows)
    assert ("grid edge" in captured.err) == any(r.grid_edge for r in sweep.rows)


def test_sweep_warns_for_layers_chosen_at_a_grid_edge(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The warning lists exactly the layers whose C sits at an end of its grid (rows
    written by the real sweep code, the layer fits replaced by fixed choices)."""
    from probebench.train import sweep as sweep_mod

    def fake_sweep(*args: Any, **kwargs: Any) -> sweep_mod.Sweep:
        out = sweep_mod.Sweep(task=TASK, task_version=1, test_sha256="0" * 64, model="m",
                              model_sha256="0" * 64, position="last_token",
                              probe_type="linear", seed=0, bootstrap=10,
                              accuracy_name="accuracy")
        for layer, edge in ((1, None), (2, "C = 10 is the highest value of its grid"),
                            (3, "C = 0.001 is the lowest value of its grid")):
            out.rows.append(sweep_mod.LayerRow(
                layer=layer, chosen=1.0, val_accuracy=0.9, auroc=0.9, auroc_ci_low=0.8,
                auroc_ci_high=0.95, accuracy=0.9, accuracy_ci_low=0.8,
                accuracy_ci_high=0.95, val_log_loss=0.3, grid_edge=edge))
        return out

    monkeypatch.setattr(sweep_mod, "layer_sweep", fake_sweep)
    assert main(["sweep", "--task", TASK, "--out", str(tmp_path / "s.json"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "warning: at 2 of 3 layers (2, 3)" in err
    assert "C = 10 is the highest value of its grid" in err


def test_read_sweep_rejects_other_json(tmp_path: Path) -> None:
    from probebench.train.sweep import read_sweep

    bad = tmp_path / "x.json"
    bad.write_text('{"task": 1}')
    with pytest.raises(InputError, match="not a probebench layer sweep"):
        read_sweep(bad)


# --- --method mass-mean: the difference of the class means, calibrated ---------------
# (here, not in a file of their own, to read the activations this module has cached)


@pytest.fixture(scope="module")
def mass_mean(module_cache: Path) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROBEBENCH_ACTIVATION_CACHE", str(module_cache))
        return train(TrainConfig(task=TASK, site=Site(10, "last_token"), bootstrap=200,
                                 method="mass-mean"), progress=False)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_mass_mean_direction_is_the_class_mean_difference(mass_mean: Any, trained: Any,
                                                          tmp_path: Path) -> None:
    from probebench.train import split_activations

    out = write_artifact(mass_mean, tmp_path / "mm")
    report = validate(out)
    assert report.valid and report.weights is not None
    # the standardised train + validation activations, by hand (StandardScaler's rule:
    # population std, a constant feature keeps scale 1)
    site = mass_mean.config.site
    split = split_activations(mass_mean.data, mass_mean.config.model, [site], progress=False)
    x = np.concatenate([split.acts["train"][site], split.acts["val"][site]]).astype(np.float64)
    y = np.concatenate([split.y_train, split.y_val])
    std = x.std(axis=0)
    z = (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)
    diff = z[y == 1].mean(axis=0) - z[y == 0].mean(axis=0)
    # the stored weights act on standardised activations (the scaler is stored apart)
    assert np.allclose(report.weights.mean, x.mean(axis=0), rtol=1e-9, atol=1e-9)
    w = report.weights.weights[0][:, 0]
    assert _cosine(w, diff) > 0.9999
    scale = float(w @ diff / (diff @ diff))
    assert scale > 0 and np.allclose(w, scale * diff, rtol=1e-7, atol=1e-12)
    # a logistic probe on the same data points elsewhere: the check above can fail
    logistic = trained.probe.coef_[0]
    assert _cosine(logistic, diff) < 0.99
    # and the calibrated scale gives usable probabilities
    assert mass_mean.headline.auroc.value > 0.9 and mass_mean.headline.ece < 0.05


def test_mass_mean_artifact_is_read_like_any_linear_probe(mass_mean: Any,
                                                          tmp_path: Path) -> None:
    import datetime as dt

    import probebench
    from probebench.train import evaluate_weights

    out = write_artifact(mass_mean, tmp_path / "mm")
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    meta = yaml.safe_load((out / "meta.yaml").read_text())
    assert meta["method"] == "mass-mean" and meta["probe_type"] == "linear"
    probe = probebench.load_probe(out)
    assert probe.meta.method == "mass-mean" and probe.weights.probe_type == "linear"
    got = probe.weights.predict_proba(mass_mean.test_acts)[:, 1]
    assert np.abs(got - mass_mean.test_probs).max() < 1e-12
    # submit's scoring of the stored weights gives the reported metrics
    head = evaluate_weights(probe.weights, probe.meta.model, mass_mean.config.site, TASK,
                            bootstrap=200)
    assert meta["reported_metrics"][TASK]["auroc"] == pytest.approx(head.auroc.value,
                                                                    abs=VALUE_TOLERANCE)
    assert head.ece == pytest.approx(mass_mean.headline.ece, abs=1e-12)
    readme = (out / "README.md").read_text()
    assert "--method mass-mean" in readme and "(chosen)" in readme
    # deterministic: the same inputs give the same bytes
    day = dt.date(2026, 11, 1)
    first = write_artifact(mass_mean, tmp_path / "first", created_at=day)
    again = write_artifact(train(mass_mean.config, progress=False), tmp_path / "again",
                           created_at=day)
    assert validate(again).bundle_sha256 == validate(first).bundle_sha256


def test_mass_mean_train_notebook_reproduces_the_probe(mass_mean: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out = write_artifact(mass_mean, tmp_path / "mm")
    nb = json.loads((out / "train.ipynb").read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert "METHOD = 'mass-mean'" in code[0] and "method=METHOD" in code[1]
    # the cells, run here (the kernel run of a logistic notebook is a slow test)
    monkeypatch.chdir(out)
    scope: dict[str, Any] = {}
    for source in code:
        exec(compile(source, "train.ipynb", "exec"), scope)
    assert scope["trained"].config.method == "mass-mean"
    assert scope["diff"].max() < 1e-12


def test_a_logistic_artifact_is_unchanged_by_methods(trained: Any, tmp_path: Path) -> None:
    out = write_artifact(trained, tmp_path / "lr")
    meta = yaml.safe_load((out / "meta.yaml").read_text())
    assert "method" not in meta
    assert validate(out).meta.method is None  # type: ignore[union-attr]
    notebook = (out / "train.ipynb").read_text()
    assert "METHOD" not in notebook and "mass-mean" not in notebook
    assert "--method" not in (out / "README.md").read_text()
    # a reference artifact (no method field) still validates to the hash its registry
    # entry pins
    repo = Path(__file__).resolve().parents[2]
    name = "blimp-det-noun-smollm2-135m-l15-v1"
    folder = repo / "registry" / "artifacts" / name
    entry = yaml.safe_load((repo / "registry" / "probes" / "probebench" / f"{name}.yaml")
                           .read_text())
    report = validate(folder)
    assert report.valid and report.bundle_sha256 == entry["artifact_sha256"]
    assert report.meta is not None and report.meta.method is None


def test_mass_mean_is_for_linear_probes_and_binary_tasks(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from probebench.artifact.meta import parse_meta

    site = Site(10, "last_token")
    with pytest.raises(InputError, match=r"--method mass-mean fits a linear probe .* not "
                                         r"--probe-type mlp"):
        TrainConfig(task=TASK, site=site, probe_type="mlp", method="mass-mean")
    with pytest.raises(InputError, match="--method must be one of logistic, mass-mean"):
        TrainConfig(task=TASK, site=site, method="iid-mass-mean")
    out = tmp_path / "never"
    assert main(["train", "--task", TASK, "--site", "10:last_token", "--probe-type", "mlp",
                 "--method", "mass-mean", "--out", str(out), "--quiet"]) == 2
    assert "--method mass-mean fits a linear probe" in capsys.readouterr().err
    assert not out.exists()
    # meta.yaml: the field is optional, one of the two methods, and only for linear probes
    base = {"spec_version": "0.0.1", "probe_type": "linear", "model": "smollm2-135m",
            "layer": 10, "position": "last_token", "training_data": "x",
            "license": "MIT", "author": "a", "contact": "c", "created_at": "2026-11-01"}
    assert parse_meta(base, "meta.yaml").method is None
    assert parse_meta({**base, "method": "mass-mean"}, "meta.yaml").method == "mass-mean"
    with pytest.raises(InputError, match="field 'method'"):
        parse_meta({**base, "method": "pca"}, "meta.yaml")
    with pytest.raises(InputError, match="describes how a linear probe was fitted"):
        parse_meta({**base, "probe_type": "mlp", "method": "logistic"}, "meta.yaml")
    # a multi-class task is refused before any model is loaded
    repo = Path(__file__).resolve().parents[2]
    catalog = TaskCatalog.default().including([repo / "examples" / "senteval"])
    with pytest.raises(InputError, match="--method mass-mean needs a binary task"):
        train(TrainConfig(task="example_sentence_length", site=site, method="mass-mean"),
              catalog=catalog, progress=False)


def _catalog_including(task: str, folder: Path) -> tuple[TaskCatalog, Path]:
    """The packaged catalog with ``task`` moved into a tasks file of its own in
    ``folder``, as if it were a researcher's task added with --include."""
    packaged = TaskCatalog.default()
    spec = packaged.spec(task)
    folder.mkdir(parents=True)
    tasks_file = folder / "tasks.yaml"
    tasks_file.write_text(yaml.safe_dump({"version": 1, "tasks": [
        spec.model_dump(mode="json", exclude_defaults=True)]}, sort_keys=False))
    rest = {k: v for k, v in packaged.specs.items() if k != task}
    return TaskCatalog(packaged.path, rest, packaged=True).including([tasks_file]), tasks_file


def test_the_readme_of_an_included_task_names_its_tasks_file(
        trained: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import re

    catalog, tasks_file = _catalog_including(TASK, tmp_path / "mine")
    assert catalog.source_of(TASK) == tasks_file  # the task really is an included one
    mine = dataclasses.replace(trained, catalog=catalog)
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match="give --author"):
        out = write_artifact(mine, Path("work") / "probe")
    readme = (out / "README.md").read_text()
    commands = re.findall(r"`(probebench (?:validate|submit) \.[^`]*)`", readme)
    assert len(commands) == 2, readme
    for command in commands:
        (shown,) = re.findall(r"--include (\S+)", command)
        assert (out / shown).resolve() == tasks_file.resolve(), (command, shown)
        assert not Path(shown).is_absolute()  # relative to the artifact: it moves with both
    assert f"--tasks {TASK} --include" in commands[1]
    assert f"--include {shown} --out DIR" in readme  # the train command too
    # a packaged task's README has no such option
    plain = (write_artifact(trained, tmp_path / "plain", author="A", contact="a@example.org",
                            license="MIT") / "README.md").read_text()
    assert "`probebench validate .`" in plain and "--include" not in plain
