"""``ProbeWeights``: every probe in one canonical, pickle-free form.

A probe is a standard scaler followed by dense layers::

    z0 = (x - mean) / scale
    z_{i+1} = act(z_i @ W_i + b_i)        for the hidden layers
    logit   = z_L @ W_L + b_L             (one output unit; K for K > 2 classes)
    P(classes[1]) = sigmoid(logit)        (binary)
    P(classes[k]) = softmax(logit)[k]     (multi-class, K > 2)

A logistic regression is the case with no hidden layer (a multinomial one for K > 2
classes). ``predict_proba`` returns ``(n, K)`` columns in ``classes`` order exactly as
scikit-learn orders them (``(n, 2)`` for a binary probe); the forward runs in float64
and equals scikit-learn's to ~1e-15.

The native on-disk form is ``probe.safetensors`` (tensors ``scaler.mean``,
``scaler.scale``, ``layers.{i}.weight`` of shape (in, out), ``layers.{i}.bias``) plus
``probe.json`` (format, probe type, activation, classes, layer shapes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from probebench.errors import InputError
from probebench.jsonsafe import load_json, loads_json

if TYPE_CHECKING:
    import torch

ACTIVATIONS = ("identity", "relu", "tanh", "logistic")
NATIVE_FORMAT = "probebench-native"
NATIVE_VERSION = 1
MAX_NATIVE_HEADER = 1 << 20


def _act_numpy(name: str, x: np.ndarray) -> np.ndarray:
    if name == "relu":
        return np.asarray(np.maximum(x, 0.0))
    if name == "tanh":
        return np.asarray(np.tanh(x))
    if name == "logistic":
        return _sigmoid(x)
    return x


def _softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # the same numerically stable form as scipy.special.expit
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    ex = np.exp(x[~pos])
    out[~pos] = ex / (1.0 + ex)
    return out


@dataclass(frozen=True)
class ProbeWeights:
    """Scaler and dense layers of a probe, as plain float64 arrays: binary (one output,
    P(classes[1]) is the score) or multi-class (K > 2 outputs, softmax)."""

    mean: np.ndarray                 #: (n_features,)
    scale: np.ndarray                #: (n_features,), > 0
    weights: tuple[np.ndarray, ...]  #: per layer, (in, out); the last has out == 1, or K
    biases: tuple[np.ndarray, ...]   #: per layer, (out,)
    activation: str                  #: hidden-layer activation (unused without hidden layers)
    classes: tuple[Any, ...]         #: the class labels, in output order
    probe_type: str                  #: "linear" or "mlp"

    @property
    def n_features(self) -> int:
        """The width of the activations the probe reads (the model's hidden size)."""
        return int(self.mean.shape[0])

    @property
    def n_classes(self) -> int:
        """How many classes the probe tells apart (2 for a binary probe)."""
        return len(self.classes)

    @property
    def is_binary(self) -> bool:
        """Two classes, one output unit: P(classes[1]) is the probe's score."""
        return len(self.classes) == 2

    @property
    def n_outputs(self) -> int:
        """Units of the last layer: 1 for a binary probe, K for K > 2 classes."""
        return 1 if self.is_binary else len(self.classes)

    @property
    def hidden_sizes(self) -> list[int]:
        """The width of each hidden layer (empty for a linear probe)."""
        return [int(w.shape[1]) for w in self.weights[:-1]]

    def problems(self) -> list[str]:
        """Structural problems (empty when the probe is usable)."""
        out = []
        n = self.mean.shape[0] if self.mean.ndim == 1 else -1
        if self.mean.ndim != 1 or self.scale.shape != self.mean.shape:
            out.append(f"scaler mean {self.mean.shape} and scale {self.scale.shape} must be "
                       "vectors of the same length")
        prev = n
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            if w.ndim != 2 or w.shape[0] != prev or b.shape != (w.shape[1],):
                out.append(f"layer {i}: weight {w.shape} / bias {b.shape} do not follow "
                           f"from {prev} inputs")
                break
            prev = w.shape[1]
        else:
            if len(self.classes) >= 2 and prev != self.n_outputs:
                kind = "a binary probe" if self.is_binary else \
                    f"a probe of {len(self.classes)} classes"
                out.append(f"the last layer has {prev} outputs; {kind} has {self.n_outputs}")
        if len(self.classes) < 2:
            out.append(f"{len(self.classes)} classes {list(self.classes)}; a probe has at "
                       "least 2")
        elif len({str(c) for c in self.classes}) != len(self.classes):
            out.append(f"classes {list(self.classes)} repeat a label")
        if self.activation not in ACTIVATIONS:
            out.append(f"activation {self.activation!r} is not one of {', '.join(ACTIVATIONS)}")
        arrays = [("scaler mean", self.mean), ("scaler scale", self.scale)]
        arrays += [(f"layer {i} weight", w) for i, w in enumerate(self.weights)]
        arrays += [(f"layer {i} bias", b) for i, b in enumerate(self.biases)]
        for name, arr in arrays:
            bad = int(np.size(arr) - np.isfinite(arr).sum())
            if bad:
                out.append(f"{name} has {bad} non-finite values (NaN or Inf)")
        if self.scale.size and np.isfinite(self.scale).all() and (self.scale <= 0).any():
            out.append(f"scaler scale has {int((self.scale <= 0).sum())} values <= 0")
        return out

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        """The logit of ``classes[1]``, float64, shape (n,); for a multi-class probe the
        K logits, shape (n, K)."""
        z = (np.asarray(x, dtype=np.float64) - self.mean) / self.scale
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            z = _act_numpy(self.activation, z @ w + b)
        logits = np.asarray(z @ self.weights[-1] + self.biases[-1])
        return np.asarray(logits[:, 0]) if self.is_binary else logits

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """(n, K) probabilities in ``classes`` order, like scikit-learn: (n, 2) columns of
        ``classes[0]`` and ``classes[1]`` for a binary probe, a softmax for K > 2."""
        if not self.is_binary:
            return _softmax(self.decision_function(x))
        p = _sigmoid(self.decision_function(x))
        return np.stack([1.0 - p, p], axis=1)

    def predict(self, x: np.ndarray) -> list[Any]:
        """The most probable class label of each row (ties: the first in ``classes``)."""
        return [self.classes[i] for i in np.argmax(self.predict_proba(x), axis=1).tolist()]

    def forward_torch(self, x: torch.Tensor) -> torch.Tensor:
        """P(classes[1]) for a (n, n_features) tensor, on its device, in float64; for a
        multi-class probe the (n, K) softmax."""
        import torch

        dev = x.device

        def t(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(a)).to(dev)

        z = (x.double() - t(self.mean)) / t(self.scale)
        acts = {"identity": lambda v: v, "relu": torch.relu, "tanh": torch.tanh,
                "logistic": torch.sigmoid}
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            z = acts[self.activation](z @ t(w) + t(b))
        logits = z @ t(self.weights[-1]) + t(self.biases[-1])
        if not self.is_binary:
            return torch.softmax(logits, dim=1)
        return torch.sigmoid(logits)[:, 0]

    # --- the native, pickle-free form ----------------------------------------------

    def native_json(self) -> dict[str, Any]:
        """The content of ``probe.json`` in the native form (the tensors' description)."""
        return {
            "format": NATIVE_FORMAT,
            "version": NATIVE_VERSION,
            "probe_type": self.probe_type,
            "activation": self.activation,
            "classes": [_json_label(c) for c in self.classes],
            "n_features": self.n_features,
            "layers": [[int(w.shape[0]), int(w.shape[1])] for w in self.weights],
        }

    def save_native(self, folder: Path) -> list[Path]:
        """Write the native form, ``probe.safetensors`` and ``probe.json``, into
        ``folder`` (atomically); returns the two paths."""
        from safetensors.numpy import save

        from probebench.hashing import atomic_write_bytes

        tensors = {"scaler.mean": self.mean, "scaler.scale": self.scale}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            tensors[f"layers.{i}.weight"] = np.ascontiguousarray(w)
            tensors[f"layers.{i}.bias"] = np.ascontiguousarray(b)
        folder.mkdir(parents=True, exist_ok=True)
        st, js = folder / "probe.safetensors", folder / "probe.json"
        atomic_write_bytes(st, save({k: v.astype(np.float64) for k, v in tensors.items()}))
        atomic_write_bytes(js, (json.dumps(self.native_json(), indent=2) + "\n").encode())
        return [st, js]


#: layers an MLP probe may have
MAX_LAYERS = 16
#: tensor dtypes the native form may hold (safetensors names)
NATIVE_DTYPES = ("F64", "F32", "F16")


def _json_label(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def _as_f64(value: Any, what: str) -> np.ndarray:
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiub":
        raise InputError(f"{what}: expected a numeric array, found {type(value).__name__}")
    return value.astype(np.float64)


def _classes(value: Any, source: str) -> tuple[Any, ...]:
    if not isinstance(value, np.ndarray | list | tuple):
        raise InputError(f"{source}: classes_ missing or not an array")
    return tuple(_json_label(v) for v in value)


def from_sklearn_state(probe_kind: str, probe: dict[str, Any], scaler: dict[str, Any] | None,
                       source: str) -> ProbeWeights:
    """Build ProbeWeights from the attribute dicts of a fitted estimator and scaler.

    Works on recorded state (from the safe unpickler) and on ``vars()`` of real
    estimators alike. ``probe_kind`` is the estimator class name.
    """
    if probe_kind == "LogisticRegression":
        coef = _as_f64(probe.get("coef_"), f"{source}: coef_")
        intercept = _as_f64(probe.get("intercept_"), f"{source}: intercept_")
        classes = _classes(probe.get("classes_"), source)
        rows = 1 if len(classes) == 2 else len(classes)
        if coef.ndim != 2 or coef.shape[0] != rows:
            raise InputError(f"{source}: coef_ has shape {coef.shape}; a logistic regression "
                             f"of {len(classes)} classes has ({rows}, n_features) (classes: "
                             f"{list(classes)})")
        if intercept.size != rows:
            raise InputError(f"{source}: intercept_ has {intercept.size} values; a logistic "
                             f"regression of {len(classes)} classes has {rows}")
        if rows > 1 and probe.get("multi_class") == "ovr":
            raise InputError(f"{source}: a one-vs-rest logistic regression (multi_class="
                             "'ovr') normalises K sigmoids; probebench reads multinomial ones "
                             "(refit without multi_class='ovr')")
        weights: tuple[np.ndarray, ...] = (coef.T.copy(),)
        biases: tuple[np.ndarray, ...] = (intercept.reshape(rows),)
        activation, probe_type = "identity", "linear"
    elif probe_kind == "MLPClassifier":
        coefs, intercepts = probe.get("coefs_"), probe.get("intercepts_")
        if not isinstance(coefs, list) or not isinstance(intercepts, list):
            raise InputError(f"{source}: coefs_/intercepts_ missing: the MLP is not fitted")
        if not coefs or len(coefs) != len(intercepts) or len(coefs) > MAX_LAYERS:
            raise InputError(f"{source}: coefs_ and intercepts_ hold {len(coefs)} and "
                             f"{len(intercepts)} layers; an MLP has 1 to {MAX_LAYERS}, the same "
                             "number of each")
        weights = tuple(_as_f64(w, f"{source}: coefs_[{i}]") for i, w in enumerate(coefs))
        biases = tuple(_as_f64(b, f"{source}: intercepts_[{i}]")
                       for i, b in enumerate(intercepts))
        width = None
        for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
            if w.ndim != 2 or b.ndim != 1 or b.shape[0] != w.shape[1] or \
                    (width is not None and w.shape[0] != width):
                raise InputError(f"{source}: layer {i} has coefs_ {w.shape} and intercepts_ "
                                 f"{b.shape}; the layers do not chain")
            width = w.shape[1]
        classes = _classes(probe.get("classes_"), source)
        out_act = probe.get("out_activation_")
        expected = "logistic" if len(classes) == 2 else "softmax"
        if out_act != expected:
            raise InputError(f"{source}: out_activation_ is {out_act!r}; an MLP classifier "
                             f"of {len(classes)} classes has {expected!r} (classes: "
                             f"{list(classes)})")
        activation, probe_type = str(probe.get("activation")), "mlp"
    else:
        raise InputError(f"{source}: {probe_kind} is not a supported probe estimator "
                         "(LogisticRegression or MLPClassifier)")
    n = weights[0].shape[0] if weights[0].ndim == 2 else 0
    if scaler is None:
        mean, scale = np.zeros(n), np.ones(n)
    else:
        with_mean = scaler.get("with_mean", True)
        with_std = scaler.get("with_std", True)
        raw_mean, raw_scale = scaler.get("mean_"), scaler.get("scale_")
        mean = _as_f64(raw_mean, "scaler mean_") if with_mean else np.zeros(n)
        scale = _as_f64(raw_scale, "scaler scale_") if with_std else np.ones(n)
    return ProbeWeights(mean=mean, scale=scale, weights=weights, biases=biases,
                        activation=activation, classes=classes, probe_type=probe_type)


def load_native(folder: Path) -> ProbeWeights:
    """Read ``probe.safetensors`` + ``probe.json`` (no pickle involved)."""
    from safetensors import SafetensorError
    from safetensors.numpy import load

    st, js = folder / "probe.safetensors", folder / "probe.json"
    spec = load_json(js)
    if not isinstance(spec, dict) or spec.get("format") != NATIVE_FORMAT:
        raise InputError(f"{js}: expected an object with format {NATIVE_FORMAT!r}")
    if spec.get("version") != NATIVE_VERSION:
        raise InputError(f"{js}: version {spec.get('version')!r}; this probebench reads "
                         f"{NATIVE_VERSION}")
    raw = st.read_bytes()
    if len(raw) < 8:
        raise InputError(f"{st}: truncated safetensors file ({len(raw)} bytes)")
    header = int.from_bytes(raw[:8], "little")
    if header > MAX_NATIVE_HEADER or header > len(raw) - 8:
        raise InputError(f"{st}: safetensors header claims {header} bytes "
                         f"(file has {len(raw)}, limit {MAX_NATIVE_HEADER})")
    try:
        meta = loads_json(raw[8:8 + header], str(st))
    except InputError:
        raise InputError(f"{st}: malformed safetensors header") from None
    if not isinstance(meta, dict):
        raise InputError(f"{st}: malformed safetensors header")
    for name, info in meta.items():
        dtype = info.get("dtype") if isinstance(info, dict) else None
        if name != "__metadata__" and dtype not in NATIVE_DTYPES:
            raise InputError(f"{st}: tensor {str(name)[:80]!r} has dtype {str(dtype)[:20]!r}; "
                             f"the native form holds {', '.join(NATIVE_DTYPES)}")
    try:
        tensors = load(raw)
    except (SafetensorError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{st}: malformed safetensors ({str(exc)[:160]})") from None
    layers = spec.get("layers")
    if not isinstance(layers, list) or not layers or len(layers) > MAX_LAYERS or not all(
            isinstance(x, list) and len(x) == 2 and all(type(n) is int for n in x)
            for x in layers):
        raise InputError(f"{js}: 'layers' must be a non-empty list of at most {MAX_LAYERS} "
                         "[in, out] pairs of integers")
    try:
        weights = tuple(tensors[f"layers.{i}.weight"].astype(np.float64)
                        for i in range(len(layers)))
        biases = tuple(tensors[f"layers.{i}.bias"].astype(np.float64)
                       for i in range(len(layers)))
        mean = tensors["scaler.mean"].astype(np.float64)
        scale = tensors["scaler.scale"].astype(np.float64)
    except KeyError as exc:
        raise InputError(f"{st}: tensor {exc.args[0]!r} is missing") from None
    for i, (w, shape) in enumerate(zip(weights, layers, strict=True)):
        if list(w.shape) != list(shape):
            raise InputError(f"{st}: layers.{i}.weight has shape {list(w.shape)}, "
                             f"probe.json says {shape}")
    classes = spec.get("classes")
    if not isinstance(classes, list):
        raise InputError(f"{js}: 'classes' must be a list")
    return ProbeWeights(mean=mean, scale=scale, weights=weights, biases=biases,
                        activation=str(spec.get("activation", "identity")),
                        classes=tuple(classes), probe_type=str(spec.get("probe_type")))


def sklearn_to_weights(probe: Any, scaler: Any | None) -> ProbeWeights:
    """ProbeWeights of real (trusted, local) scikit-learn objects."""
    return from_sklearn_state(type(probe).__name__, vars(probe),
                              None if scaler is None else vars(scaler),
                              type(probe).__name__)

