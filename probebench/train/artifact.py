"""Writing a trained probe as a complete artifact folder (spec v0.0.1).

The folder is built next to its destination and moved into place only after
``probebench validate`` passes on it, so a failure never leaves a half-written
artifact behind.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from probebench.errors import InputError
from probebench.tasks.catalog import TaskCatalog, effective_license, packaged_tasks_file
from probebench.tasks.spec import TaskSpec
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
    probe's meta.yaml (and so its bundle hash) is what it was before the field existed.
    ``training_data`` names the value chosen on validation, and says so when it is at an
    end of its grid (``Trained.grid_edges``)."""
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
                          + " chosen on validation"
                          + "".join(f"; at the grid's edge: {e.describe()}"
                                    for e in trained.grid_edges)
                          + f"; seed {c.seed}"),
        "license": license,
        "paper": paper,
        "author": author,
        "contact": contact,
        "created_at": created_at,
        "reported_metrics": {c.task: reported},
    }


def _shown_path(path: Path, folder: Path) -> str:
    """``path`` as a command run inside ``folder`` reaches it: relative when the two
    share a root, else absolute."""
    target = Path(path).resolve()
    try:
        return os.path.relpath(target, Path(folder).resolve())
    except ValueError:  # another drive (Windows): no relative path exists
        return str(target)


def task_options(trained: Trained, catalog: TaskCatalog, folder: Path) -> str:
    """The workspace options a command run inside the artifact ``folder`` needs to know
    the probe's task: ``--include FILE`` for an included task, ``--tasks-file FILE`` for
    a task of another catalog than the packaged one (when the packaged one lacks it or
    pins another test set), else nothing. FILE is relative to ``folder`` when possible."""
    task = trained.config.task
    source = catalog.source_of(task)
    if source != catalog.path:
        return f" --include {_shown_path(source, folder)}"
    packaged = TaskCatalog.default().specs.get(task)
    if catalog.packaged or Path(source).resolve() == packaged_tasks_file() or (
            packaged is not None
            and packaged.test_sha256 == trained.data.spec.test_sha256):
        return ""
    return f" --tasks-file {_shown_path(source, folder)}"


def readme_of(trained: Trained, title: str, *, catalog: TaskCatalog | None = None,
              folder: Path | None = None) -> str:
    """The artifact's README.md; its commands name the tasks file of the probe's task
    (``task_options``) as seen from ``folder``, where the artifact will be."""
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
        task_options=task_options(trained, catalog or trained.catalog or TaskCatalog.default(),
                                  folder or Path.cwd()),
        chosen_hidden=trained.chosen_hidden, edges=trained.grid_edges)


def check_out(out: Path, *, force: bool) -> None:
    """Refuse a non-empty destination unless ``force`` (checked before any training)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise InputError(f"{out} exists and is not empty; choose another --out or pass --force")


#: meta.yaml's author and contact when neither the caller nor git config gives one
UNKNOWN_AUTHOR = "unknown (give --author)"
UNKNOWN_CONTACT = "unknown (give --contact)"
#: the longest git config value taken (a name or an e-mail address, never a text)
_MAX_GIT_VALUE = 200


def git_config(key: str, *, cwd: Path | None = None) -> str | None:
    """``git config --get KEY`` (run without a shell, from ``cwd`` so that a checkout's
    own config counts), its first line stripped; None when git is absent, fails, takes
    over 10 s or has no value."""
    try:
        done = subprocess.run(["git", "config", "--get", key], cwd=cwd, capture_output=True,
                              text=True, errors="replace", timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.splitlines() if done.returncode == 0 else []
    value = lines[0].strip() if lines else ""
    return value[:_MAX_GIT_VALUE] if value else None


@dataclass(frozen=True)
class Authorship:
    """meta.yaml's author, contact and license, and a warning for each one guessed."""

    author: str
    contact: str
    license: str
    #: one sentence per guessed field: where it came from and the option that sets it
    guessed: tuple[str, ...] = ()


def _existing(folder: Path) -> Path | None:
    """``folder`` or its nearest existing ancestor (git reads a checkout's config there)."""
    for candidate in (Path(folder).resolve(), *Path(folder).resolve().parents):
        if candidate.is_dir():
            return candidate
    return None


def authorship(spec: TaskSpec, *, author: str | None = None, contact: str | None = None,
               license: str | None = None, near: Path | None = None) -> Authorship:
    """Fill what the caller left out: author and contact from git config (``user.name``,
    ``user.email``, read from ``near``, e.g. the artifact's folder, else the current
    one), else ``UNKNOWN_AUTHOR``/``UNKNOWN_CONTACT``; the license from the task's data
    (``effective_license``: a probe fitted on CC-BY-4.0 data is offered under it). A
    value given wins; each guessed one has its sentence in ``guessed``."""
    guessed = []
    cwd = _existing(near) if near is not None else None
    for field, given, key, unknown in (("author", author, "user.name", UNKNOWN_AUTHOR),
                                       ("contact", contact, "user.email", UNKNOWN_CONTACT)):
        if given is not None:
            continue
        found = git_config(key, cwd=cwd)
        if found is None:
            guessed.append(f"{field}: no git config {key} found, so meta.yaml says "
                           f"{unknown!r}; give --{field} to set it")
        else:
            guessed.append(f"{field} taken from git config {key}: {found}; give --{field} "
                           "to set it")
        if field == "author":
            author = found or unknown
        else:
            contact = found or unknown
    if license is None:
        license = effective_license(spec)
        guessed.append(f"license taken from task {spec.id}'s data license: "
                       f"{license}; give --license to set it")
    assert author is not None and contact is not None
    return Authorship(author, contact, license, tuple(guessed))


def write_artifact(trained: Trained, out: Path, *, author: str | None = None,
                   contact: str | None = None, license: str | None = None,
                   created_at: dt.date | None = None, title: str | None = None,
                   force: bool = False, catalog: TaskCatalog | None = None) -> Path:
    """Write every file of the artifact to ``out`` (atomically, validated first against
    ``catalog``, default the catalog ``trained`` was trained on, so that the test-set
    hash of an included task is known). Returns ``out``.

    ``author``, ``contact`` and ``license`` go into meta.yaml; each left out is guessed
    by ``authorship`` (git config, the task's data license) with a ``UserWarning``
    saying so. ``force`` replaces an existing artifact folder (nothing else is ever
    replaced)."""
    import joblib

    from probebench.artifact.checks import validate
    from probebench.artifact.weights import sklearn_to_weights

    out = Path(out)
    check_out(out, force=force)
    who = authorship(trained.data.spec, author=author, contact=contact, license=license,
                     near=out)
    for sentence in who.guessed:
        warnings.warn(sentence, UserWarning, stacklevel=2)
    c = trained.config
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        sklearn_to_weights(trained.probe, trained.scaler).save_native(staging)
        joblib.dump(trained.probe, staging / "probe.joblib")
        joblib.dump(trained.scaler, staging / "scaler.joblib")
        meta = meta_of(trained, author=who.author, contact=who.contact, license=who.license,
                       created_at=created_at or dt.date.today())
        (staging / "meta.yaml").write_text(yaml.safe_dump(meta, sort_keys=False,
                                                          allow_unicode=True), "utf-8")
        name = title or f"{c.task} {c.probe_type} probe, {c.model} layer {c.site.layer}"
        (staging / "README.md").write_text(
            readme_of(trained, name, catalog=catalog or trained.catalog, folder=out), "utf-8")
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
