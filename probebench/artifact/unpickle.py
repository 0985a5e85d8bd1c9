"""A restricted unpickler for ``.joblib``/``.pkl`` probe files from strangers.

``pickle.load`` runs whatever callables a file names. This reader resolves only an
explicit allow-list of globals and refuses every other one *before* anything is
called, naming it (``refused global 'posix.system'``). Of the allowed globals:

* a few numpy and stdlib functions are real (array and scalar reconstruction,
  ``_codecs.encode``): they build plain data and cannot reach other code;
* every scikit-learn class (and numpy's random-state helpers) becomes an inert
  *stand-in* that only records its constructor arguments and state. No scikit-learn
  code runs, not even ``__setstate__``, and scikit-learn is not even imported;
  ``probebench.artifact.weights`` reads the numbers from the recorded state.

joblib's format (arrays written as raw bytes after a ``NumpyArrayWrapper`` record) is
read by a stand-in wrapper; arrays of Python objects are refused (they would need a
nested pickle). Compressed joblib files (zlib, gzip, bz2, xz/lzma) are decompressed
first with a size cap, so a decompression bomb is refused, not expanded.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import pickle
import zlib
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from probebench.errors import ProbebenchError

MAX_DECOMPRESSED_BYTES = 256 << 20


class UnsafePickleError(ProbebenchError):
    """The pickle names a global outside the allow-list, or is malformed."""


class Recorded:
    """Stand-in for an allow-listed class: records what unpickling gave it, runs nothing."""

    global_name: ClassVar[str] = "?"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs
        self.state: Any = None

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __repr__(self) -> str:
        return f"<recorded {self.global_name}>"

    @property
    def attrs(self) -> dict[str, Any]:
        """The instance dict the real class would have had."""
        state = self.state
        if isinstance(state, tuple) and len(state) == 2:  # (dict, slots) form
            state = {**(state[0] or {}), **(state[1] or {})}
        return state if isinstance(state, dict) else {}


class _ArrayWrapper(Recorded):
    """Stand-in for joblib's NumpyArrayWrapper; BUILD replaces it with the array."""


def _stand_in(name: str, base: type[Recorded] = Recorded) -> type[Recorded]:
    return type(name.rsplit(".", 1)[-1], (base,), {"global_name": name})


#: sklearn and numpy-random globals that become inert stand-ins
STAND_INS = frozenset({
    "sklearn.linear_model._logistic.LogisticRegression",
    "sklearn.linear_model.logistic.LogisticRegression",
    "sklearn.neural_network._multilayer_perceptron.MLPClassifier",
    "sklearn.neural_network.multilayer_perceptron.MLPClassifier",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    "sklearn.preprocessing._data.StandardScaler",
    "sklearn.preprocessing.data.StandardScaler",
    "sklearn.preprocessing._label.LabelBinarizer",
    "sklearn.preprocessing.label.LabelBinarizer",
    "numpy.random._pickle.__randomstate_ctor",
    "numpy.random._pickle.__bit_generator_ctor",
    "numpy.random._pickle.__generator_ctor",
    "numpy.random._mt19937.MT19937",
    "numpy.random._pcg64.PCG64",
    "numpy.random.bit_generator.SeedSequence",
    "numpy.random.bit_generator.__pyx_unpickle_SeedSequence",
})


def _real_globals() -> dict[str, Any]:
    import _codecs
    import copyreg

    from numpy._core import multiarray, numeric

    return {
        "numpy.ndarray": np.ndarray,
        "numpy.dtype": np.dtype,
        "numpy._core.multiarray._reconstruct": multiarray._reconstruct,
        "numpy.core.multiarray._reconstruct": multiarray._reconstruct,
        "numpy._core.multiarray.scalar": multiarray.scalar,
        "numpy.core.multiarray.scalar": multiarray.scalar,
        "numpy._core.numeric._frombuffer": numeric._frombuffer,  # type: ignore[attr-defined]
        "numpy.core.numeric._frombuffer": numeric._frombuffer,  # type: ignore[attr-defined]
        "_codecs.encode": _codecs.encode,
        "copyreg._reconstructor": copyreg._reconstructor,  # type: ignore[attr-defined]
        "builtins.set": set,
        "builtins.frozenset": frozenset,
        "builtins.slice": slice,
        "builtins.complex": complex,
    }


_JOBLIB_WRAPPER = "joblib.numpy_pickle.NumpyArrayWrapper"


class SafeUnpickler(pickle._Unpickler):
    """pickle's pure-Python unpickler with ``find_class`` limited to the allow-list.

    The pure-Python unpickler is used (not the C one) because joblib's arrays need a
    hook on the BUILD opcode; probe files are small, so its speed does not matter.
    """

    stack: list[Any]

    def __init__(self, file: io.BytesIO, source: str) -> None:
        super().__init__(file)
        self._source = source
        self._raw = file
        self._real = _real_globals()
        self._stand_ins: dict[str, type[Recorded]] = {}

    def find_class(self, module: str, name: str) -> Any:
        full = f"{module}.{name}"
        if full in self._real:
            return self._real[full]
        if full in STAND_INS or full == _JOBLIB_WRAPPER:
            if full not in self._stand_ins:
                base = _ArrayWrapper if full == _JOBLIB_WRAPPER else Recorded
                self._stand_ins[full] = _stand_in(full, base)
            return self._stand_ins[full]
        raise UnsafePickleError(f"{self._source}: refused global {full!r}: not on probebench's "
                                "allow-list of scikit-learn and numpy names (the file may try "
                                "to run code; it was not loaded)")

    def _load_build_then_array(self) -> None:
        pickle._Unpickler.load_build(self)  # type: ignore[attr-defined]
        top = self.stack[-1]
        if isinstance(top, _ArrayWrapper):
            self.stack[-1] = self._read_joblib_array(top.attrs)

    def _read_joblib_array(self, meta: dict[str, Any]) -> np.ndarray:
        dtype = meta.get("dtype")
        shape = meta.get("shape")
        order = meta.get("order", "C")
        if not isinstance(dtype, np.dtype) or not isinstance(shape, tuple):
            raise UnsafePickleError(f"{self._source}: malformed joblib array record")
        if dtype.hasobject:
            raise UnsafePickleError(f"{self._source}: refused a joblib array of Python objects "
                                    "(it would need a nested pickle); probes hold numbers")
        if meta.get("subclass") is not np.ndarray:
            raise UnsafePickleError(f"{self._source}: refused a numpy array subclass")
        if meta.get("numpy_array_alignment_bytes") is not None:
            padding = self._raw.read(1)
            if len(padding) != 1:
                raise UnsafePickleError(f"{self._source}: truncated joblib array")
            self._raw.read(padding[0])
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        nbytes = count * dtype.itemsize
        data = self._raw.read(nbytes)
        if len(data) != nbytes:
            raise UnsafePickleError(f"{self._source}: truncated joblib array ({len(data)} of "
                                    f"{nbytes} bytes)")
        array = np.frombuffer(data, dtype=dtype).copy()
        if order == "F":
            return array.reshape(shape[::-1]).transpose()
        return array.reshape(shape)


_dispatch: dict[int, Any] = dict(pickle._Unpickler.dispatch)
_dispatch[pickle.BUILD[0]] = SafeUnpickler._load_build_then_array
SafeUnpickler.dispatch = _dispatch


def _open_compressed(data: bytes) -> Any:
    """A reader over joblib's compressed formats, or None for uncompressed data."""
    buffer = io.BytesIO(data)
    if data[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffer)
    if data[:3] == b"BZh":
        return bz2.BZ2File(buffer)
    if data[:6] == b"\xfd7zXZ\x00" or data[:1] == b"\x5d":
        return lzma.LZMAFile(buffer)
    return None


def _decompress(data: bytes, source: str) -> bytes:
    """Undo joblib's compression, refusing output beyond MAX_DECOMPRESSED_BYTES."""
    if data[:1] == b"\x78":
        stream = zlib.decompressobj()
        try:
            out = stream.decompress(data, MAX_DECOMPRESSED_BYTES + 1)
        except zlib.error as exc:
            raise UnsafePickleError(f"{source}: corrupt zlib data ({exc})") from None
        if len(out) > MAX_DECOMPRESSED_BYTES:
            raise UnsafePickleError(f"{source}: decompresses to more than "
                                    f"{MAX_DECOMPRESSED_BYTES >> 20} MiB; refused")
        return out
    reader = _open_compressed(data)
    if reader is None:
        return data
    try:
        with reader as handle:
            out = handle.read(MAX_DECOMPRESSED_BYTES + 1)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise UnsafePickleError(f"{source}: corrupt compressed data ({exc})") from None
    if len(out) > MAX_DECOMPRESSED_BYTES:
        raise UnsafePickleError(f"{source}: decompresses to more than "
                                f"{MAX_DECOMPRESSED_BYTES >> 20} MiB; refused")
    return bytes(out)


def safe_load_pickle(path: Path) -> Any:
    """Load a pickle or joblib file through the allow-list; never runs foreign code."""
    path = Path(path)
    source = str(path)
    data = _decompress(path.read_bytes(), source)
    if not data.startswith(b"\x80"):
        raise UnsafePickleError(f"{source}: not a pickle/joblib file (no pickle protocol "
                                "header)")
    buffer = io.BytesIO(data)
    try:
        return SafeUnpickler(buffer, source).load()
    except UnsafePickleError:
        raise
    except RecursionError:
        raise UnsafePickleError(f"{source}: pickle nests too deeply") from None
    except Exception as exc:  # malformed streams raise many types
        raise UnsafePickleError(f"{source}: malformed pickle ({type(exc).__name__}: {exc})")\
            from None
