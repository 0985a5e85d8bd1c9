"""Memory-safety regressions: pickles that steer numpy into reading or writing memory it
does not own, or into allocating gigabytes from a few bytes. Each is written as a real
``probe.joblib`` and validated by ``probebench validate`` in a fresh process, which must
exit 1 with a named reason: no signal, no traceback, no oversized output.

The routes (found by a red-team run against the earlier unpickler, which built numpy
objects from pickle state): an object dtype with cleared flags through ``_reconstruct``
plus array state, through ``_frombuffer`` and through joblib's array wrapper (SIGSEGV);
a void dtype with a field outside the item (an out-of-bounds read that printed process
memory); ``ndarray((1, 2**27))`` (2 GB from 300 bytes); compressed MEMOIZE opcodes
(2.7 GB from 32 KB); and nesting that would make later code recurse without bound.
"""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy._core import multiarray, numeric

from probebench.artifact.unpickle import UnsafePickleError, safe_load_pickle
from tests.artifacts import make_artifact

#: bytes of output a refusal may print (the out-of-bounds read printed 14.7 MB)
MAX_OUTPUT = 4000
OBJECT_CLEARED = (3, "|", None, None, None, -1, -1, 0)  # an 'O8' dtype without its flags
F8_WIDENED = (3, "<", None, None, None, 64, 8, 0)       # 'f8' claiming 64-byte items
VOID_FIELD_OUTSIDE = (3, "|", None, ("a",), {"a": (np.dtype("f8"), 4096)}, 8, 1, 16)


class _Reduce:
    """Pickles as ``func(*args)`` then BUILD ``state`` (what a hostile file can say)."""

    def __init__(self, func: Any, args: tuple[Any, ...], state: Any = None) -> None:
        self.value = (func, args) if state is None else (func, args, state)

    def __reduce__(self) -> Any:
        return self.value


def _dtype(name: str, state: Any) -> _Reduce:
    return _Reduce(np.dtype, (name, False, True), state)


def _reconstructed(dtype: Any, raw: bytes, shape: tuple[int, ...]) -> _Reduce:
    return _Reduce(multiarray._reconstruct, (np.ndarray, (0,), b"b"),
                   (1, shape, dtype, False, raw))


def _as_probe(coef: Any) -> bytes:
    """A LogisticRegression whose coef_ is ``coef``."""
    from sklearn.linear_model import LogisticRegression

    class _Probe:
        def __reduce__(self) -> Any:
            return (LogisticRegression, (), {"coef_": coef, "intercept_": np.zeros(1),
                                             "classes_": np.array([0, 1])})
    return pickle.dumps(_Probe(), protocol=4)


def _joblib_wrapper(dtype: Any, raw: bytes, shape: tuple[int, ...]) -> bytes:
    """joblib's layout: a NumpyArrayWrapper record, BUILD, then the raw array bytes."""
    from joblib.numpy_pickle import NumpyArrayWrapper

    state = {"subclass": np.ndarray, "shape": shape, "order": "C", "dtype": dtype,
             "allow_mmap": False}
    data = pickle.dumps(_Reduce(NumpyArrayWrapper, (), state), protocol=4)
    assert data.endswith(b"b.")  # BUILD, STOP
    return data[:-1] + raw + b"."


def _memo_bomb() -> bytes:
    return zlib.compress(b"\x80\x04N" + b"\x94" * 3_000_000 + b".", 9)


def _marks(depth: int) -> bytes:
    return b"\x80\x04" + b"(" * depth + b"t" * depth + b"."


CASES: list[tuple[str, Callable[[], bytes], str]] = [
    ("object-dtype-cleared-flags-via-reconstruct",
     lambda: _as_probe(_reconstructed(_dtype("O8", OBJECT_CLEARED), b"\x41" * 16, (2,))),
     "refused dtype 'O8', an array of Python objects"),
    ("object-dtype-via-frombuffer",
     lambda: _as_probe(_Reduce(numeric._frombuffer,  # type: ignore[attr-defined]
                               (b"\x41" * 16, _dtype("O8", OBJECT_CLEARED), (2,), "C"))),
     "refused dtype 'O8', an array of Python objects"),
    ("object-dtype-via-joblib-wrapper",
     lambda: _joblib_wrapper(_dtype("O8", OBJECT_CLEARED), b"\x41" * 16, (2,)),
     "refused dtype 'O8', an array of Python objects"),
    ("float-dtype-with-altered-state",
     lambda: _as_probe(_reconstructed(_dtype("f8", F8_WIDENED), b"\x00" * 16, (2,))),
     "refused the state of dtype 'f8'"),
    ("void-dtype-field-outside-the-item",
     lambda: _as_probe(_reconstructed(_dtype("V8", VOID_FIELD_OUTSIDE), b"\x00" * 16, (2,))),
     "refused dtype 'V8', kind 'V'"),
    ("array-bytes-shorter-than-its-shape",
     lambda: _as_probe(_reconstructed(np.dtype("f8"), b"\x00" * 16, (1, 2**27))),
     "needs 1073741824 bytes; 16 given"),
    ("ndarray-called-with-a-huge-shape",
     lambda: _as_probe(_Reduce(np.ndarray, ((1, 2**27),))),
     "coef_: expected a numeric array"),
    ("memoize-bomb", _memo_bomb, "more than 100000 memoised objects"),
    ("marks-nested-100k", lambda: _marks(100_000), "pickle marks nest deeper than 256"),
    ("tuples-nested-200", lambda: _marks(200), "objects nest deeper than 64"),
    # EMPTY_LIST x N then APPEND x N-1: a list nested 100,000 deep with no mark or memo
    ("list-nested-100k", lambda: b"\x80\x04" + b"]" * 100_000 + b"a" * 99_999 + b".",
     "objects nest deeper than 64"),
]


@pytest.mark.parametrize(("name", "make", "reason"), CASES, ids=[c[0] for c in CASES])
def test_hostile_pickle_is_refused_by_name_in_a_fresh_process(
        tmp_path: Path, name: str, make: Callable[[], bytes], reason: str) -> None:
    folder, *_ = make_artifact(tmp_path / name)
    (folder / "probe.joblib").write_bytes(make())
    proc = subprocess.run([sys.executable, "-m", "probebench", "validate", str(folder)],
                          capture_output=True, text=True, timeout=120, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, (proc.returncode, output[-2000:])  # not a signal (< 0)
    assert "Traceback" not in output
    assert len(output) < MAX_OUTPUT, len(output)
    assert reason in output, output[-2000:]


def test_real_probe_files_still_load(tmp_path: Path) -> None:
    """The numbers scikit-learn and joblib write (C and Fortran order, compressed or
    not) come back exactly."""
    import joblib

    folder, probe, *_ = make_artifact(tmp_path / "mlp", probe_type="mlp")
    loaded = safe_load_pickle(folder / "probe.joblib")
    assert np.array_equal(loaded.attrs["coefs_"][0], probe.coefs_[0])
    arrays: dict[str, Any] = {"f": np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)),
              "u": np.array(["ab", "cde"]), "b": np.array([True, False]),
              "i": np.arange(5, dtype=np.int64)[::2], "s": np.float64(0.25)}
    for compress in (0, 3):
        path = tmp_path / f"arrays-{compress}.joblib"
        joblib.dump(arrays, path, compress=compress)
        got = safe_load_pickle(path)
        for key, value in arrays.items():
            assert np.array_equal(got[key], value) and got[key].dtype == np.asarray(value).dtype
        assert got["f"].flags.f_contiguous
    plain = pickle.dumps(arrays, protocol=2)
    path = tmp_path / "arrays.pkl"
    path.write_bytes(plain)
    got = safe_load_pickle(path)
    assert all(np.array_equal(got[k], v) for k, v in arrays.items())


def test_a_pickle_cannot_smuggle_a_dtype_into_numpy(tmp_path: Path) -> None:
    """In-process too: the refusal comes before numpy sees the state."""
    path = tmp_path / "x.pkl"
    path.write_bytes(pickle.dumps(_dtype("f8", F8_WIDENED), protocol=2))
    with pytest.raises(UnsafePickleError, match="refused the state of dtype 'f8'"):
        safe_load_pickle(path)
    buffer = io.BytesIO()
    pickle.dump(np.dtype("<f8"), buffer, protocol=2)
    path.write_bytes(buffer.getvalue())
    assert safe_load_pickle(path) == np.dtype("<f8")


def test_the_decompression_budget_is_shared_by_the_artifacts_files(tmp_path: Path) -> None:
    """Each file under the 256 MiB cap, together over it: refused by name."""
    import joblib

    from probebench.artifact.checks import validate

    folder, probe, scaler, _ = make_artifact(tmp_path / "two-halves")
    probe.pad_ = b"\0" * (150 << 20)
    scaler.pad_ = b"\0" * (150 << 20)
    joblib.dump(probe, folder / "probe.joblib", compress=3)
    joblib.dump(scaler, folder / "scaler.joblib", compress=3)
    failed = {c.name: c.message for c in validate(folder).failed()}
    assert "decompress to more than 256 MiB together" in failed.get("safe_load", ""), failed
