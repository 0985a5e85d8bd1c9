"""``probebench export``: a trusted local scikit-learn probe to the native, pickle-free form.

Run by a probe's author on their own files, so the estimator is loaded with joblib
(or skops) as written. The output folder receives ``probe.safetensors``,
``probe.json`` and ``meta.yaml`` (validated), plus ``README.md``, ``train.ipynb`` and
``eval.ipynb`` when they lie beside ``meta.yaml``. It is built in a temporary
sibling folder and renamed into place, so a failed export leaves nothing behind.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from probebench.artifact.meta import COMPANION_FILES, read_meta
from probebench.artifact.weights import ProbeWeights, sklearn_to_weights
from probebench.errors import InputError


def _load_trusted(path: Path) -> Any:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.suffix == ".skops":
        import skops.io as sio

        return sio.load(path, trusted=sio.get_untrusted_types(file=path))
    import joblib

    return joblib.load(path)


def export_native(probe: Path, scaler: Path | None, meta: Path, out: Path, *,
                  force: bool = False) -> tuple[ProbeWeights, list[str]]:
    """Write the native artifact; returns the weights and the names of the files written."""
    meta_obj = read_meta(meta)
    weights = sklearn_to_weights(_load_trusted(probe),
                                 _load_trusted(scaler) if scaler is not None else None)
    problems = weights.problems()
    if problems:
        raise InputError(f"{probe}: " + "; ".join(problems))
    if meta_obj.probe_type != weights.probe_type:
        raise InputError(f"{meta}: probe_type is {meta_obj.probe_type!r} but {probe.name} holds "
                         f"a {weights.probe_type!r} probe")
    if out.exists() and any(out.iterdir()) and not force:
        raise InputError(f"{out}: exists and is not empty (use --force to replace it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        weights.save_native(tmp)
        shutil.copyfile(meta, tmp / "meta.yaml")
        for name in COMPANION_FILES:
            if (meta.parent / name).is_file():
                shutil.copyfile(meta.parent / name, tmp / name)
        if out.exists():
            shutil.rmtree(out)
        tmp.replace(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return weights, sorted(p.name for p in out.iterdir())
