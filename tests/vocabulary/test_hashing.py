from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from probebench import paths
from probebench.hashing import atomic_writer, sha256_file


def test_sha256_file_memo_is_invalidated_by_changes(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBEBENCH_HOME", str(tmp_path / "home"))
    f = tmp_path / "w.bin"
    f.write_bytes(b"abc")
    assert sha256_file(f) == hashlib.sha256(b"abc").hexdigest()
    f.write_bytes(b"abcd")  # new size and mtime: the memo must miss
    assert sha256_file(f) == hashlib.sha256(b"abcd").hexdigest()
    memo = json.loads((paths.home() / "file-hashes.json").read_text())
    assert list(memo.values()) == [hashlib.sha256(b"abcd").hexdigest()]
    f.unlink()
    g = tmp_path / "g.bin"
    g.write_bytes(b"x")
    sha256_file(g)
    memo = json.loads((paths.home() / "file-hashes.json").read_text())
    assert all(str(g.resolve()) in k for k in memo), "entries of deleted files are pruned"


def test_atomic_writer_leaves_old_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write(b"new but incomplete")
        raise RuntimeError("killed mid-write")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]
