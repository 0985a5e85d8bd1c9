"""Fuzzing: valid artifacts with mutated bytes (pickle opcodes, meta.yaml, probe.json,
the safetensors header, a notebook) must give a validation report, never an exception,
a crash or an oversized message, and never create a file. A short budget runs by
default; ``-m slow`` runs a long one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probebench.artifact.checks import validate
from tests.artifacts import make_artifact

TARGETS = ("probe.joblib", "scaler.joblib", "meta.yaml", "train.ipynb", "probe.json",
           "probe.safetensors")
#: the longest message a failed check may print
MAX_MESSAGE = 2000


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One valid artifact with both forms (joblib and native)."""
    from probebench.artifact.forms import load_weights

    folder, *_ = make_artifact(tmp_path_factory.mktemp("fuzz") / "probe", probe_type="mlp")
    load_weights(folder).save_native(folder)
    assert validate(folder).valid
    return folder


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 64)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
)


def _mutate(data: bytes, edits: list[tuple[str, int, object]]) -> bytes:
    buf = bytearray(data)
    for kind, at, arg in edits:
        if not buf:
            break
        i = at % len(buf)
        if kind == "flip":
            assert isinstance(arg, int)
            buf[i] ^= arg
        elif kind == "insert":
            assert isinstance(arg, bytes)
            buf[i:i] = arg
        elif kind == "delete":
            assert isinstance(arg, int)
            del buf[i:i + arg]
        else:
            del buf[i:]
    return bytes(buf)


def _fuzz_once(pristine: Path, work: Path, target: str,
               edits: list[tuple[str, int, object]]) -> None:
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(pristine, work)
    path = work / target
    path.write_bytes(_mutate(path.read_bytes(), edits))
    before = sorted(work.iterdir())
    report = validate(work)  # must return, whatever the bytes
    for check in report.checks:
        assert len(check.message) < MAX_MESSAGE, (check.name, len(check.message))
    assert sorted(work.iterdir()) == before  # nothing created


def _test(examples: int):  # type: ignore[no-untyped-def]
    @settings(max_examples=examples, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(target=st.sampled_from(TARGETS), edits=st.lists(mutation, min_size=1, max_size=4))
    def run(pristine: Path, tmp_path: Path, target: str,
            edits: list[tuple[str, int, object]]) -> None:
        _fuzz_once(pristine, tmp_path / "mutant", target, edits)
    return run


test_mutated_artifacts_give_a_report = _test(200)
test_mutated_artifacts_give_a_report_long = pytest.mark.slow(_test(5000))
