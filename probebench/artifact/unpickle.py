"""A restricted unpickler for ``.joblib``/``.pkl`` probe files from strangers.

``pickle.load`` runs whatever callables a file names. This reader resolves only an
explicit allow-list of globals and refuses every other one *before* anything is
called, naming it (``refused global 'posix.system'``). Of the allowed globals:

* every scikit-learn class (and numpy's random-state helpers) becomes an inert
  *stand-in* that only records its constructor arguments and state. No scikit-learn
  code runs, not even ``__setstate__``, and scikit-learn is not even imported;
  ``probebench.artifact.weights`` reads the numbers from the recorded state;
* numpy's arrays, dtypes and scalars are never built by numpy from pickle state
  (``dtype.__setstate__`` accepts flags and field offsets its constructor refuses: an
  object dtype with cleared flags, or a field outside the item, reads and writes
  arbitrary memory). Their globals are stand-ins too; probebench records the bytes, the
  shape, the dtype *name* and the order, checks the dtype's state equals the canonical
  state of that name, allows only boolean, integer, float and fixed-width text dtypes,
  checks the byte length equals the shape times the item size, and builds the array
  itself with ``np.frombuffer``. The same rule serves joblib's array wrapper (arrays
  written as raw bytes after the pickle) and ``_frombuffer``/``scalar`` routes.

Budgets, each refused by name before the work: the decompressed size (256 MiB), the
opcodes executed, the objects memoised, the array size (no larger than the bytes
present) and the nesting and size of the loaded object graph. Compressed joblib files
(zlib, gzip, bz2, xz/lzma) are decompressed first with the size cap, so a decompression
bomb is refused, not expanded.
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

from probebench.artifact.unsupported import explain_estimator
from probebench.errors import ProbebenchError

MAX_DECOMPRESSED_BYTES = 256 << 20
#: all the pickle files of one artifact together
MAX_BUNDLE_DECOMPRESSED_BYTES = 256 << 20
#: array kinds a probe file may hold: booleans, integers, floats, fixed-width text
ARRAY_KINDS = "biufU"
#: the widest array item (fixed-width text of 256 characters)
MAX_ITEMSIZE = 1024
MAX_NDIM = 8
#: pickle opcodes executed per file, and objects memoised (MEMOIZE/PUT) per file
MAX_OPCODES = 2_000_000
MAX_MEMO = 100_000
#: pickle MARK nesting, and the nesting and size of the loaded object graph
MAX_MARKS = 256
MAX_DEPTH = 64
MAX_NODES = 200_000


class UnsafePickleError(ProbebenchError):
    """The pickle names a global outside the allow-list, or is malformed."""


class Recorded:
    """Stand-in for an allow-listed class: records what unpickling gave it, runs nothing."""

    global_name: ClassVar[str] = "?"
    #: defaults for an instance made without __init__ (pickle's NEWOBJ)
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}  # noqa: RUF012 - replaced per instance, never mutated
    state: Any = None

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


class _DtypeRecord(Recorded):
    """Stand-in for ``numpy.dtype``: BUILD replaces it with a dtype probebench made."""

    global_name = "numpy.dtype"


class _NdarrayClass(Recorded):
    """Stand-in for ``numpy.ndarray`` (calling it would allocate any shape)."""

    global_name = "numpy.ndarray"


class _ArrayRecord(Recorded):
    """What ``_reconstruct(ndarray, ...)`` returns: BUILD replaces it with the array."""

    global_name = "numpy._core.multiarray._reconstruct"


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


def _fail(source: str, message: str) -> UnsafePickleError:
    return UnsafePickleError(f"{source}: {message}")


def make_dtype(obj: Any, source: str) -> np.dtype:
    """A dtype probebench builds from a recorded one: a name from the allow-list of
    kinds, whose pickled state (if any) is exactly that name's canonical state."""
    if isinstance(obj, np.dtype):  # one this module made already
        return obj
    if not isinstance(obj, _DtypeRecord) or not obj.args or not isinstance(obj.args[0], str):
        raise _fail(source, f"expected an array dtype, found {type(obj).__name__}")
    name = obj.args[0]
    if len(name) > 16:
        raise _fail(source, f"dtype name {name[:20]!r}... is not a plain dtype")
    try:
        base = np.dtype(name)
    except (TypeError, ValueError):
        raise _fail(source, f"dtype name {name!r} is not a numpy dtype") from None
    if base.kind not in ARRAY_KINDS or base.fields is not None or base.subdtype is not None \
            or base.itemsize > MAX_ITEMSIZE or base.hasobject:
        what = ("an array of Python objects (it would need a nested pickle)"
                if base.hasobject else f"kind {base.kind!r}")
        raise _fail(source, f"refused dtype {name!r}, {what}: probe arrays hold booleans, "
                            "integers, floats or fixed-width text only")
    state = obj.state
    if state is None:
        return base
    for order in ("<", ">", "|", "="):
        candidate = base.newbyteorder(order)
        if candidate.__reduce__()[2] == state:
            return candidate
    raise _fail(source, f"refused the state of dtype {name!r}: it is not the state numpy "
                        "writes for that dtype (flags, offsets or fields were altered)")


def make_array(raw: Any, dtype: Any, shape: Any, fortran: bool, source: str) -> np.ndarray:
    """An array probebench builds from bytes it was given: the dtype passes
    :func:`make_dtype`, the shape is a short tuple of non-negative ints, and the bytes
    are exactly the shape times the item size (nothing is allocated beyond them)."""
    dt = make_dtype(dtype, source)
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, tuple) or len(shape) > MAX_NDIM or not all(
            type(d) is int and 0 <= d <= MAX_DECOMPRESSED_BYTES for d in shape):
        raise _fail(source, f"malformed array shape {str(shape)[:80]}")
    if isinstance(raw, bytearray | memoryview):
        raw = bytes(raw)
    if not isinstance(raw, bytes):
        raise _fail(source, f"refused array data of type {type(raw).__name__} (arrays of "
                            "Python objects would need a nested pickle; probes hold numbers)")
    count = 1
    for d in shape:
        count *= d
    if count * dt.itemsize != len(raw):
        raise _fail(source, f"array of shape {shape} and dtype {dt.str} needs "
                            f"{count * dt.itemsize} bytes; {len(raw)} given")
    array = np.frombuffer(raw, dtype=dt).copy()
    return array.reshape(shape, order="F" if fortran else "C")


def _reconstruct(cls: Any, shape: Any, typecode: Any) -> _ArrayRecord:
    if cls is not _NdarrayClass:
        raise UnsafePickleError("refused _reconstruct of anything but numpy.ndarray")
    return _ArrayRecord(shape, typecode)


def _real_globals(source: str) -> dict[str, Any]:

    def frombuffer(buf: Any, dtype: Any, shape: Any, order: Any) -> np.ndarray:
        return make_array(buf, dtype, shape, order == "F", source)

    def scalar(dtype: Any, data: Any = None) -> Any:
        dt = make_dtype(dtype, source)
        if data is None:
            raise _fail(source, "refused a numpy scalar without data")
        return make_array(data, dt, (), False, source)[()]

    def encode(obj: Any, encoding: str = "utf-8") -> bytes:
        if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
            raise _fail(source, "refused _codecs.encode other than str to latin1")
        return obj.encode("latin1")

    def reconstructor(cls: Any, base: Any, state: Any) -> Any:
        if not (isinstance(cls, type) and issubclass(cls, Recorded)) or base is not object:
            raise _fail(source, "refused copyreg._reconstructor of a non-allow-listed class")
        obj = cls()
        obj.state = state
        return obj

    return {
        "numpy.ndarray": _NdarrayClass,
        "numpy.dtype": _DtypeRecord,
        "numpy._core.multiarray._reconstruct": _reconstruct,
        "numpy.core.multiarray._reconstruct": _reconstruct,
        "numpy._core.multiarray.scalar": scalar,
        "numpy.core.multiarray.scalar": scalar,
        "numpy._core.numeric._frombuffer": frombuffer,
        "numpy.core.numeric._frombuffer": frombuffer,
        "_codecs.encode": encode,
        "copyreg._reconstructor": reconstructor,
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
    memo: dict[int, Any]
    metastack: list[Any]

    def __init__(self, file: io.BytesIO, source: str) -> None:
        super().__init__(file)
        self._source = source
        self._raw = file
        self._real = _real_globals(source)
        self._opcodes = 0
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
        if module.split(".", 1)[0] == "sklearn" and name[:1].isupper():
            # most likely an honest probe in a shape the spec does not take: say which
            raise UnsafePickleError(f"{self._source}: refused global {full!r}, so the file "
                                    f"was not loaded: {explain_estimator(name)}")
        raise UnsafePickleError(f"{self._source}: refused global {full!r}: not on probebench's "
                                "allow-list of scikit-learn and numpy names (the file may try "
                                "to run code; it was not loaded)")

    def _load_build_then_array(self) -> None:
        pickle._Unpickler.load_build(self)  # type: ignore[attr-defined]
        top = self.stack[-1]
        if isinstance(top, _ArrayWrapper):
            self.stack[-1] = self._read_joblib_array(top.attrs)
        elif isinstance(top, _DtypeRecord):
            self.stack[-1] = make_dtype(top, self._source)
        elif isinstance(top, _ArrayRecord):
            state = top.state
            if not (isinstance(state, tuple) and len(state) == 5):
                raise _fail(self._source, "malformed numpy array state")
            _version, shape, dtype, fortran, raw = state
            self.stack[-1] = make_array(raw, dtype, shape, bool(fortran), self._source)

    def _read_joblib_array(self, meta: dict[str, Any]) -> np.ndarray:
        dtype = make_dtype(meta.get("dtype"), self._source)
        shape = meta.get("shape")
        order = meta.get("order", "C")
        if meta.get("subclass") is not _NdarrayClass:
            raise UnsafePickleError(f"{self._source}: refused a numpy array subclass")
        if not isinstance(shape, tuple):
            raise UnsafePickleError(f"{self._source}: malformed joblib array record")
        if meta.get("numpy_array_alignment_bytes") is not None:
            padding = self._raw.read(1)
            if len(padding) != 1:
                raise UnsafePickleError(f"{self._source}: truncated joblib array")
            self._raw.read(padding[0])
        count = 1
        for d in shape:
            count *= d if type(d) is int and d >= 0 else -1
        nbytes = count * dtype.itemsize
        if count < 0 or nbytes > MAX_DECOMPRESSED_BYTES:
            raise _fail(self._source, f"joblib array of shape {str(shape)[:80]} refused")
        data = self._raw.read(nbytes)
        if len(data) != nbytes:
            raise UnsafePickleError(f"{self._source}: truncated joblib array ({len(data)} of "
                                    f"{nbytes} bytes)")
        return make_array(data, dtype, shape, order == "F", self._source)

    def _budget(self) -> None:
        self._opcodes += 1
        if self._opcodes > MAX_OPCODES:
            raise _fail(self._source, f"more than {MAX_OPCODES} pickle opcodes; refused "
                                      "(limit MAX_OPCODES)")
        if len(self.memo) > MAX_MEMO:
            raise _fail(self._source, f"more than {MAX_MEMO} memoised objects; refused "
                                      "(limit MAX_MEMO)")
        if len(self.metastack) > MAX_MARKS:
            raise _fail(self._source, f"pickle marks nest deeper than {MAX_MARKS}; refused "
                                      "(limit MAX_MARKS)")


def _counted(handler: Any) -> Any:
    def run(self: SafeUnpickler) -> None:
        self._budget()
        handler(self)
    return run


_dispatch: dict[int, Any] = dict(pickle._Unpickler.dispatch)
_dispatch[pickle.BUILD[0]] = SafeUnpickler._load_build_then_array
SafeUnpickler.dispatch = {code: _counted(handler) for code, handler in _dispatch.items()}


def check_graph(obj: Any, source: str) -> None:
    """Refuse a loaded object graph nested deeper than MAX_DEPTH or with more than
    MAX_NODES distinct containers (iteratively: no recursion for the caller to hit)."""
    seen: set[int] = set()
    todo: list[tuple[Any, int]] = [(obj, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, Recorded):
            children: Any = [item.args, item.kwargs, item.state]
        elif isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):
            children = item
        else:
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        if depth > MAX_DEPTH:
            raise _fail(source, f"objects nest deeper than {MAX_DEPTH}; refused "
                                "(limit MAX_DEPTH)")
        if len(seen) > MAX_NODES:
            raise _fail(source, f"more than {MAX_NODES} containers; refused (limit MAX_NODES)")
        todo.extend((c, depth + 1) for c in children)


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


class DecompressionBudget:
    """Decompressed bytes left for one artifact (all its pickle files together)."""

    def __init__(self, total: int = MAX_BUNDLE_DECOMPRESSED_BYTES) -> None:
        self.left = total

    def spend(self, nbytes: int, source: str) -> None:
        self.left -= nbytes
        if self.left < 0:
            raise UnsafePickleError(f"{source}: the artifact's pickle files decompress to more "
                                    f"than {MAX_BUNDLE_DECOMPRESSED_BYTES >> 20} MiB together; "
                                    "refused (limit MAX_BUNDLE_DECOMPRESSED_BYTES)")


def safe_load_pickle(path: Path, budget: DecompressionBudget | None = None) -> Any:
    """Load a pickle or joblib file through the allow-list; never runs foreign code.
    ``budget`` is shared by the files of one artifact."""
    path = Path(path)
    source = str(path)
    data = _decompress(path.read_bytes(), source)
    if budget is not None:
        budget.spend(len(data), source)
    if not data.startswith(b"\x80"):
        raise UnsafePickleError(f"{source}: not a pickle/joblib file (no pickle protocol "
                                "header)")
    buffer = io.BytesIO(data)
    try:
        loaded = SafeUnpickler(buffer, source).load()
        check_graph(loaded, source)
        return loaded
    except UnsafePickleError:
        raise
    except RecursionError:
        raise UnsafePickleError(f"{source}: pickle nests too deeply") from None
    except Exception as exc:  # malformed streams raise many types
        raise UnsafePickleError(f"{source}: malformed pickle ({type(exc).__name__}: {exc})")\
            from None
