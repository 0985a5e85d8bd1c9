"""``probebench export``: a trusted local scikit-learn probe to the native, pickle-free form.

Run by a probe's author on their own files, so the estimator is loaded with joblib
(or skops) as written: export trusts its inputs, and must never be run on someone
else's pickle. The probe may be a bare ``LogisticRegression`` or ``MLPClassifier``
(with ``--scaler``), or a ``Pipeline`` of a ``StandardScaler`` and one of them, which
is split into the spec's scaler and probe.

The output folder receives ``probe.safetensors``, ``probe.json`` and ``meta.yaml``
(validated), plus ``README.md``, ``train.ipynb`` and ``eval.ipynb`` when they lie
beside ``meta.yaml``, and every file the notebooks name that lies there too (a
reproducer notebook runs with the artifact folder as its working directory, so a data
file left behind breaks it). A notebook naming one of the spec's probe files
(``probe.joblib`` + ``scaler.joblib``, or the ``.skops`` pair) gets that form written
from the same estimator and scaler. A data file a notebook names that is not there
is an error naming it, unless ``allow_missing`` (files the notebook writes itself).
It is built in a temporary sibling folder and renamed into place, so a failed export
leaves nothing behind.
"""

from __future__ import annotations

import ast
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from probebench.artifact import bundle
from probebench.artifact.meta import COMPANION_FILES, read_meta
from probebench.artifact.unsupported import explain_estimator
from probebench.artifact.weights import ProbeWeights, sklearn_to_weights
from probebench.errors import InputError
from probebench.jsonsafe import load_json

_ESTIMATORS = ("LogisticRegression", "MLPClassifier")
#: the files export writes itself
_NATIVE_FILES = ("probe.safetensors", "probe.json", "meta.yaml")
#: the spec's pickled forms, written from the trusted objects when a notebook names them
_PICKLED_FORMS = {"probe.joblib": "joblib", "scaler.joblib": "joblib",
                  "probe.skops": "skops", "scaler.skops": "skops"}
#: suffixes of the data files a notebook reads; one named but absent is an error
DATA_SUFFIXES = frozenset({
    ".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".txt", ".yaml", ".yml", ".parquet",
    ".arrow", ".feather", ".npy", ".npz", ".safetensors", ".pt", ".pth", ".h5", ".hdf5",
    ".pkl", ".pickle", ".joblib", ".skops",
})
_QUOTED = re.compile(r"""(['"])([^'"\n]{1,255})\1""")


def _load_trusted(path: Path) -> Any:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.suffix == ".skops":
        import skops.io as sio

        return sio.load(path, trusted=sio.get_untrusted_types(file=path))
    import joblib

    return joblib.load(path)


def split_pipeline(probe: Any, scaler: Any | None, source: Path) -> tuple[Any, Any | None]:
    """(estimator, scaler) of a probe object: a bare estimator with its scaler, or a
    ``Pipeline`` of at most one ``StandardScaler`` and a LogisticRegression or
    MLPClassifier (``None``/``"passthrough"`` steps ignored)."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    if isinstance(probe, Pipeline):
        steps = [step for _, step in probe.steps if step is not None and step != "passthrough"]
        names = ", ".join(type(s).__name__ for s in steps) or "no steps"
        if not steps or len(steps) > 2 or (
                len(steps) == 2 and type(steps[0]) is not StandardScaler):
            raise InputError(f"{source}: a Pipeline of {names}; export splits a Pipeline of "
                             "a StandardScaler and a LogisticRegression or MLPClassifier, "
                             "nothing else (a probe reads the standardised hidden state "
                             "directly: refit without the other steps)")
        if len(steps) == 2 and scaler is not None:
            raise InputError(f"{source}: the Pipeline holds its own StandardScaler; leave "
                             "out --scaler")
        probe, scaler = steps[-1], (steps[0] if len(steps) == 2 else scaler)
        if type(probe).__name__ not in _ESTIMATORS:
            raise InputError(f"{source}: a Pipeline ending in {type(probe).__name__}: "
                             f"{explain_estimator(type(probe).__name__)}")
    elif type(probe).__name__ not in _ESTIMATORS:
        raise InputError(f"{source}: holds {type(probe).__name__}: "
                         f"{explain_estimator(type(probe).__name__)}")
    if scaler is not None and type(scaler) is not StandardScaler:
        raise InputError(f"the scaler holds {type(scaler).__name__}; expected a "
                         "StandardScaler")
    return probe, scaler


def _strings(code: str) -> list[str]:
    """The string literals of one code cell (IPython magics and shell lines left out)."""
    lines = [ln for ln in code.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return [m.group(2) for m in _QUOTED.finditer(code)]
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def notebook_paths(notebook: Path) -> list[str]:
    """The relative paths a notebook's code names (string literals that look like one:
    no URL, not absolute, no ``..``), normalised, in order of first mention."""
    try:
        nb = load_json(notebook)
    except InputError:
        return []
    cells = nb.get("cells") if isinstance(nb, dict) else None
    found: dict[str, None] = {}
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        code = "".join(source) if isinstance(source, list) else str(source or "")
        for text in _strings(code):
            text = text.strip()
            if not text or len(text) > 255 or "://" in text or "\n" in text \
                    or text.startswith(("/", "~", "\\")) or " " in text:
                continue
            parts = [p for p in PurePosixPath(text).parts if p != "."]
            if not parts or ".." in parts:
                continue
            found.setdefault("/".join(parts), None)
    return list(found)


def _carried(folder: Path, notebooks: list[Path]) -> tuple[list[str], list[str], list[str]]:
    """(paths to copy, pickled form files to write, data files named but missing)."""
    copy: list[str] = []
    forms: list[str] = []
    missing: list[str] = []
    root = folder.resolve()
    for notebook in notebooks:
        for rel in notebook_paths(notebook):
            if rel in _NATIVE_FILES or rel in COMPANION_FILES:
                continue
            if rel in _PICKLED_FORMS:
                forms.append(rel)
                continue
            path = folder / rel
            if path.exists() or path.is_symlink():
                if path.is_symlink() or not path.resolve().is_relative_to(root):
                    raise InputError(f"{notebook.name} names {rel}, a symlink; an artifact "
                                     "holds regular files only: copy the data in")
                copy.append(rel)
            elif PurePosixPath(rel).suffix.lower() in DATA_SUFFIXES:
                missing.append(f"{rel} (named in {notebook.name})")
    return sorted(set(copy)), sorted(set(forms)), missing


def _copy_into(src: Path, dest: Path) -> None:
    if src.is_file():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        return
    for path in sorted(src.rglob("*")):
        if path.is_symlink():
            raise InputError(f"{path}: a symlink; an artifact holds regular files only")
        if path.is_file():
            target = dest / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def _write_pickled(kind: str, probe: Any, scaler: Any | None, folder: Path) -> None:
    if scaler is None:
        raise InputError(f"a notebook reads scaler.{kind}, but no StandardScaler was given "
                         "(--scaler, or a Pipeline that holds one)")
    if kind == "joblib":
        import joblib

        joblib.dump(probe, folder / "probe.joblib")
        joblib.dump(scaler, folder / "scaler.joblib")
    else:
        import skops.io as sio

        sio.dump(probe, folder / "probe.skops")
        sio.dump(scaler, folder / "scaler.skops")


def export_native(probe: Path, scaler: Path | None, meta: Path, out: Path, *,
                  force: bool = False, allow_missing: bool = False
                  ) -> tuple[ProbeWeights, list[str]]:
    """Write the native artifact; returns the weights and the files written (relative
    POSIX paths). See the module docstring for what is carried."""
    meta_obj = read_meta(meta)
    estimator, scaler_obj = split_pipeline(
        _load_trusted(probe), _load_trusted(scaler) if scaler is not None else None, probe)
    weights = sklearn_to_weights(estimator, scaler_obj)
    problems = weights.problems()
    if problems:
        raise InputError(f"{probe}: " + "; ".join(problems))
    if meta_obj.probe_type != weights.probe_type:
        raise InputError(f"{meta}: probe_type is {meta_obj.probe_type!r} but {probe.name} holds "
                         f"a {weights.probe_type!r} probe")
    source = meta.parent
    notebooks = [source / n for n in COMPANION_FILES if n.endswith(".ipynb")
                 and (source / n).is_file()]
    copy, forms, missing = _carried(source, notebooks)
    if missing and not allow_missing:
        raise InputError(f"the notebooks name data files that are not beside {meta.name} "
                         f"in {source}: {', '.join(missing)}; a notebook runs from the "
                         "artifact folder, so put them there (or pass --allow-missing if "
                         "the notebook writes them itself)")
    if out.exists() and any(out.iterdir()) and not force:
        raise InputError(f"{out}: exists and is not empty (use --force to replace it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        weights.save_native(tmp)
        shutil.copyfile(meta, tmp / "meta.yaml")
        for name in COMPANION_FILES:
            if (source / name).is_file():
                shutil.copyfile(source / name, tmp / name)
        for rel in copy:
            _copy_into(source / rel, tmp / rel)
        for kind in sorted({_PICKLED_FORMS[f] for f in forms}):
            _write_pickled(kind, estimator, scaler_obj, tmp)
        scanned = bundle.scan(tmp)
        if scanned.problems:
            raise InputError("the exported artifact would break the artifact limits: "
                             + "; ".join(scanned.problems).replace(str(tmp) + "/", ""))
        if out.exists():
            shutil.rmtree(out)
        tmp.replace(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return weights, sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                           if p.is_file())
