"""Writing a trained probe as a complete artifact folder (spec v0.0.1).

The folder is built next to its destination and moved into place only after
``probebench validate`` passes on it, so a failure never leaves a half-written
artifact behind.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from probebench.errors import InputError
from probebench.tasks.catalog import TaskCatalog
from probebench.train.massmean import DEFAULT_METHOD
from probebench.train.notebooks import eval_notebook, train_notebook, write_notebook
from probebench.train.trainer import Trained

TEMPLATES = Path(__file__).with_name("templates")
FILES = ("probe.safetensors", "probe.json", "probe.joblib", "scaler.joblib", "meta.yaml",
         "README.md", "train.ipynb", "eval.ipynb")


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def meta_of(trained: Trained, *, author: str, contact: str, license: str,
            created_at: dt.date, paper: str | None = None) -> dict[str, Any]:
    """meta.yaml's fields. ``method`` is written only for a mass-mean probe: a logistic
    probe's meta.yaml (and so its bundle hash) is what it was before the field existed."""
    c, h = trained.config, trained.headline
    reported = {"test_sha256": trained.data.spec.test_sha256, **{
        k: _round(v) for k, v in h.printable().items() if v is not None}}
    how = {} if c.method == DEFAULT_METHOD else {"method": c.method}
    fitted = ("" if c.method == DEFAULT_METHOD
              else "difference of the class means, calibration ")
    return {
        "spec_version": "0.0.1",
        "probe_type": c.probe_type,
        **how,
        "model": c.model,
        "layer": c.site.layer,
        "position": c.site.position,
        "training_data": (f"probebench task {c.task} v{trained.data.spec.version}: "
                          f"{trained.n_train} train + {trained.n_val} validation prompts "
                          f"({trained.val_source}); {fitted}{c.grid_name} = "
                          f"{trained.chosen:g}"
                          + ("" if trained.chosen_hidden is None
                             else f", hidden = {trained.chosen_hidden}")
                          + f" chosen on validation; seed {c.seed}"),
        "license": license,
        "paper": paper,
        "author": author,
        "contact": contact,
        "created_at": created_at,
        "reported_metrics": {c.task: reported},
    }


def readme_of(trained: Trained, title: str) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False)
    return env.get_template("README.md.j2").render(
        title=title, config=trained.config, task_title=trained.data.spec.title,
        n_train=trained.n_train, n_val=trained.n_val, val_source=trained.val_source,
        grid=trained.grid, chosen=trained.chosen, head=trained.headline,
        test_sha256=trained.data.spec.test_sha256,
        accuracy_name=trained.data.format.accuracy_name, classes=trained.classes,
        packaged_task=trained.config.task in TaskCatalog.default().specs,
        chosen_hidden=trained.chosen_hidden)


def check_out(out: Path, *, force: bool) -> None:
    """Refuse a non-empty destination unless ``force`` (checked before any training)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise InputError(f"{out} exists and is not empty; choose another --out or pass --force")


#: meta.yaml fields ``train`` fills unless told otherwise
DEFAULT_AUTHOR = "probebench maintainers"
DEFAULT_CONTACT = "the probebench issue tracker"
DEFAULT_LICENSE = "Apache-2.0"


def write_artifact(trained: Trained, out: Path, *, author: str = DEFAULT_AUTHOR,
                   contact: str = DEFAULT_CONTACT, license: str = DEFAULT_LICENSE,
                   created_at: dt.date | None = None, title: str | None = None,
                   force: bool = False, catalog: TaskCatalog | None = None) -> Path:
    """Write every file of the artifact to ``out`` (atomically, validated first against
    ``catalog``, default the catalog ``trained`` was trained on, so that the test-set
    hash of an included task is known). Returns ``out``.

    ``author``, ``contact`` and ``license`` go into meta.yaml; ``force`` replaces an
    existing artifact folder (nothing else is ever replaced)."""
    import joblib

    from probebench.artifact.checks import validate
    from probebench.artifact.weights import sklearn_to_weights

    out = Path(out)
    check_out(out, force=force)
    c = trained.config
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        sklearn_to_weights(trained.probe, trained.scaler).save_native(staging)
        joblib.dump(trained.probe, staging / "probe.joblib")
        joblib.dump(trained.scaler, staging / "scaler.joblib")
        meta = meta_of(trained, author=author, contact=contact, license=license,
                       created_at=created_at or dt.date.today())
        (staging / "meta.yaml").write_text(yaml.safe_dump(meta, sort_keys=False,
                                                          allow_unicode=True), "utf-8")
        name = title or f"{c.task} {c.probe_type} probe, {c.model} layer {c.site.layer}"
        (staging / "README.md").write_text(readme_of(trained, name), "utf-8")
        write_notebook(train_notebook(task=c.task, model=c.model, site=str(c.site),
                                      probe_type=c.probe_type, seed=c.seed, hidden=c.hidden,
                                      bootstrap=c.bootstrap, artifact=".",
                                      multiclass=trained.classes is not None,
                                      method=c.method),
                       staging / "train.ipynb")
        write_notebook(eval_notebook(tasks=[c.task], seed=c.seed, bootstrap=c.bootstrap,
                                     artifact="."), staging / "eval.ipynb")
        report = validate(staging, catalog=catalog or trained.catalog)
        if not report.valid:
            failed = "; ".join(f"{r.name}: {r.message}" for r in report.failed())
            raise InputError(f"the trained artifact does not validate ({failed}); "
                             "nothing was written")
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out
