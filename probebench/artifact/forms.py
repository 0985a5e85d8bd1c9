"""The three on-disk forms of a probe, each read without running foreign code.

=========== ===================================== =========================================
form        files                                 how it is read
=========== ===================================== =========================================
native      ``probe.safetensors`` + ``probe.json`` safetensors (no code at all)
joblib      ``probe.joblib`` + ``scaler.joblib``   the allow-list unpickler (``unpickle``)
skops       ``probe.skops`` + ``scaler.skops``     ``skops.io.load`` with an explicit trusted
                                                  type list
=========== ===================================== =========================================

An artifact holds one form, or several that agree: ``probebench train`` writes the
spec's joblib files and the native form side by side. Every form present is loaded and
their probabilities must agree (max abs diff <= 1e-9 on a fixed probe input); the
native form, when present, is the canonical one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probebench.artifact.unpickle import (
    MAX_BUNDLE_DECOMPRESSED_BYTES,
    DecompressionBudget,
    Recorded,
    safe_load_pickle,
)
from probebench.artifact.unsupported import explain_estimator
from probebench.artifact.weights import ProbeWeights, from_sklearn_state, load_native
from probebench.errors import InputError

#: the estimator classes a probe file may hold, by their pickled global name
PROBE_CLASSES = {
    "sklearn.linear_model._logistic.LogisticRegression": "LogisticRegression",
    "sklearn.linear_model.logistic.LogisticRegression": "LogisticRegression",
    "sklearn.neural_network._multilayer_perceptron.MLPClassifier": "MLPClassifier",
    "sklearn.neural_network.multilayer_perceptron.MLPClassifier": "MLPClassifier",
}
SCALER_CLASSES = {"sklearn.preprocessing._data.StandardScaler",
                  "sklearn.preprocessing.data.StandardScaler"}
#: types skops may build beyond its own defaults; nothing else is trusted
SKOPS_TRUSTED = [
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
]


@dataclass(frozen=True)
class ProbeForm:
    name: str
    files: tuple[str, str]
    load: Callable[[Path], ProbeWeights]


def _load_joblib(folder: Path) -> ProbeWeights:
    budget = DecompressionBudget()
    probe = safe_load_pickle(folder / "probe.joblib", budget)
    scaler = safe_load_pickle(folder / "scaler.joblib", budget)
    if not isinstance(probe, Recorded) or probe.global_name not in PROBE_CLASSES:
        found = probe.global_name if isinstance(probe, Recorded) else type(probe).__name__
        raise InputError(f"{folder / 'probe.joblib'}: holds {found}; expected a "
                         "LogisticRegression or MLPClassifier")
    if not isinstance(scaler, Recorded) or scaler.global_name not in SCALER_CLASSES:
        found = scaler.global_name if isinstance(scaler, Recorded) else type(scaler).__name__
        raise InputError(f"{folder / 'scaler.joblib'}: holds {found}; expected a "
                         "StandardScaler")
    return from_sklearn_state(PROBE_CLASSES[probe.global_name], probe.attrs, scaler.attrs,
                              str(folder / "probe.joblib"))


#: a .skops zip: members, and their declared uncompressed bytes in all
MAX_ZIP_MEMBERS = 256
MAX_ZIP_BYTES = MAX_BUNDLE_DECOMPRESSED_BYTES


def check_zip_budget(path: Path, budget: DecompressionBudget | None = None) -> None:
    """Refuse a zip whose members would decompress past MAX_ZIP_BYTES (skops itself has no
    cap), before skops reads it. Sizes are the central directory's, and each member's
    real output is bounded by zipfile's own check against its declared size."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(f"{path}: not a valid zip ({str(exc)[:120]})") from None
    if len(infos) > MAX_ZIP_MEMBERS:
        raise InputError(f"{path}: {len(infos)} zip members; at most {MAX_ZIP_MEMBERS} "
                         "(limit MAX_ZIP_MEMBERS)")
    total = sum(i.file_size for i in infos)
    if total > MAX_ZIP_BYTES:
        raise InputError(f"{path}: decompresses to {total >> 20} MiB; at most "
                         f"{MAX_ZIP_BYTES >> 20} MiB (limit MAX_ZIP_BYTES)")
    if budget is not None:
        budget.spend(total, str(path))


def _load_skops(folder: Path) -> ProbeWeights:
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    budget = DecompressionBudget()

    def read(path: Path) -> Any:
        check_zip_budget(path, budget)
        try:
            return sio.load(path, trusted=SKOPS_TRUSTED)
        except Exception as exc:  # skops raises its own types and zip/JSON errors
            raise InputError(f"{path}: refused by the skops loader ({exc})") from None

    probe, scaler = read(folder / "probe.skops"), read(folder / "scaler.skops")
    if type(probe) not in (LogisticRegression, MLPClassifier):
        raise InputError(f"{folder / 'probe.skops'}: holds {type(probe).__name__}: "
                         f"{explain_estimator(type(probe).__name__)}")
    if type(scaler) is not StandardScaler:
        raise InputError(f"{folder / 'scaler.skops'}: holds {type(scaler).__name__}; "
                         "expected a StandardScaler")
    return from_sklearn_state(type(probe).__name__, vars(probe), vars(scaler),
                              str(folder / "probe.skops"))


FORMS = {f.name: f for f in (
    ProbeForm("native", ("probe.safetensors", "probe.json"), load_native),
    ProbeForm("joblib", ("probe.joblib", "scaler.joblib"), _load_joblib),
    ProbeForm("skops", ("probe.skops", "scaler.skops"), _load_skops),
)}


AGREEMENT = 1e-9


def detect_forms(names: set[str]) -> list[ProbeForm]:
    """The complete forms present (native first); an error for a partial or missing form."""
    partial = [f for f in FORMS.values()
               if any(n in names for n in f.files) and not all(n in names for n in f.files)]
    if partial:
        f = partial[0]
        missing = [n for n in f.files if n not in names]
        raise InputError(f"{f.name} form is incomplete: {', '.join(missing)} missing")
    complete = [f for f in FORMS.values() if all(n in names for n in f.files)]
    if not complete:
        expected = "; ".join(" + ".join(f.files) for f in FORMS.values())
        raise InputError(f"no probe files: expected one of {expected}")
    return complete


def load_forms(folder: Path, forms: list[ProbeForm]) -> ProbeWeights:
    """Load every form; when there are several, they must give the same probabilities."""
    import numpy as np

    loaded = [(f, f.load(folder)) for f in forms]
    first_form, first = loaded[0]
    if len(loaded) > 1:
        x = np.random.default_rng(0).normal(size=(16, first.n_features)) * first.scale \
            + first.mean
        reference = first.predict_proba(x)
        for form, other in loaded[1:]:
            if other.n_features != first.n_features:
                raise InputError(f"the {form.name} form reads {other.n_features} features, "
                                 f"the {first_form.name} form {first.n_features}")
            diff = float(np.abs(other.predict_proba(x) - reference).max())
            if not diff <= AGREEMENT:
                raise InputError(f"the {form.name} and {first_form.name} forms disagree "
                                 f"(max probability difference {diff:.2e})")
    return first


def load_weights(folder: Path) -> ProbeWeights:
    """The weights of an artifact folder, loaded safely from whichever form(s) it holds.

    No check beyond the forms' own (``validate`` runs every check, and
    ``probebench.load_probe`` returns a scoring ``Probe`` with its metadata).
    """
    folder = Path(folder)
    names = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    return load_forms(folder, detect_forms(names))


def __getattr__(name: str) -> object:
    # Published, hash-pinned reproducer notebooks import ``load_weights`` under the name it
    # had before ``probebench.load_probe`` returned a ``Probe``: answer them, and nobody
    # else (the name is in no ``__all__`` and no documentation).
    if name == "load_probe":
        return load_weights
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
