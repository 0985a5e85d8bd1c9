"""What a hostile registry mirror can make a command do, and what it cannot.

A mirror (``registry.json`` and its blobs, a built leaderboard folder or a localhost
server here) is written by a stranger. These tests play that stranger: an index of a
million entries, a server that sends one byte every two seconds, index paths that lead out
of the mirror cache (absolute, ``..``, a NUL, a file that is also a folder), an artifact
over the artifact limits, a blob that fails its check half-way through an entry. Each
ends within a stated bound with a named error, reads and writes nothing outside the
cache, and leaves no file of a failed call in it.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import probebench.registry.mirror as mirror
import probebench.sources.http as http_source
from probebench.errors import InputError
from probebench.hashing import sha256_bytes
from probebench.leaderboard.mirror import write_mirror
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.mirror import (
    INDEX_FILE,
    MAX_INDEX_ENTRIES,
    blob_path,
    open_registry,
    parse_index,
)
from probebench.sources.budget import FetchBudget
from probebench.sources.http import DeadlineError
from probebench.tasks.catalog import TaskCatalog
from tests.registry.conftest import PROBE, REPO
from tests.registry_keys import TestKey

ARTIFACT = f"registry/artifacts/{PROBE.split('/')[1]}"


@pytest.fixture(autouse=True)
def _own_mirror_cache(mirror_env: Path) -> Path:
    return mirror_env


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built leaderboard's registry mirror of one entry (``write_mirror``, unsigned)."""
    out = tmp_path_factory.mktemp("pristine") / "site"
    entry = read_entry(entry_path(REPO / "registry", PROBE))
    write_mirror(out, REPO / "registry", [entry], catalog=TaskCatalog.default(),
                 spec_version="0.2.0")
    return out


@pytest.fixture
def site(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the mirror this test may rewrite."""
    return Path(shutil.copytree(pristine, tmp_path / "site"))


def _doc(site: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((site / INDEX_FILE).read_bytes())
    return doc


def _write(site: Path, doc: dict[str, Any], signer: TestKey | None = None) -> None:
    """What a hostile mirror publishes: any index at all, signed when ``signer`` is given
    (a leaked key, or a built leaderboard read from disk, which needs no signature)."""
    (site / INDEX_FILE).write_bytes(json.dumps(doc, indent=1).encode("utf-8"))
    if signer is not None:
        signer.sign(site)


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (links as their target's name)."""
    out: dict[str, bytes] = {}
    if not folder.exists():
        return out
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            out[path.relative_to(folder).as_posix()] = str(path.readlink()).encode()
        elif path.is_file():
            out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


def _cache_files(cache: Path) -> set[str]:
    """The files of the mirror cache, the index's own (and the rollback record) apart."""
    return {p for p in _tree(cache) if Path(p).name not in
            (INDEX_FILE, INDEX_FILE + ".sig", "trusted-versions.json",
             "trusted-versions.json.lock")
            and not p.startswith("urls/")}


# --- a server that counts, and one that drips -------------------------------------

class _Mirror:
    """A localhost server of a folder: it counts the requests of each path, and sends the
    response to a path in ``drip`` one byte every ``every`` seconds (status line and
    headers included)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.counts: Counter[str] = Counter()
        self.drip: set[str] = set()
        self.every = 2.0
        self.stop = threading.Event()
        self.url = ""

    def blob_requests(self) -> int:
        return sum(n for path, n in self.counts.items() if path.startswith("/registry/blobs/"))


def _handler(state: _Mirror) -> type[http.server.SimpleHTTPRequestHandler]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(state.folder), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            state.counts[self.path] += 1
            if self.path not in state.drip:
                super().do_GET()
                return
            body = (state.folder / self.path.lstrip("/")).read_bytes()
            response = (b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode()
                        + b"\r\n\r\n" + body)
            for i in range(len(response)):
                try:
                    self.wfile.write(response[i:i + 1])
                    self.wfile.flush()
                except OSError:
                    return  # the client gave up
                if state.stop.wait(state.every):
                    return
    return Handler


@pytest.fixture
def serve() -> Iterator[Callable[[Path], _Mirror]]:
    """Serve a folder on localhost: ``serve(folder).url`` is its ``registry.json``."""
    servers: list[tuple[http.server.ThreadingHTTPServer, threading.Thread, _Mirror]] = []

    def start(folder: Path) -> _Mirror:
        state = _Mirror(folder)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        state.url = f"http://127.0.0.1:{server.server_address[1]}/{INDEX_FILE}"
        servers.append((server, thread, state))
        return state

    yield start
    for server, thread, state in servers:
        state.stop.set()
        server.shutdown()
        server.server_close()
        thread.join()


# --- watching what is read ----------------------------------------------------------

_WATCHED: list[str] = []
_TOUCHED: list[str] = []
_HOOKED: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCHED or event not in ("open", "os.listdir", "os.scandir") or not args:
        return
    target = args[0]
    if isinstance(target, str | bytes | os.PathLike):
        path = os.fsdecode(target)
        if any(path == w or path.startswith(w + os.sep) for w in _WATCHED):
            _TOUCHED.append(f"{event} {path}")


@contextlib.contextmanager
def _watching(folder: Path) -> Iterator[list[str]]:
    """Every file opened and folder listed under ``folder`` meanwhile (a Python audit
    hook; the list it yields)."""
    if not _HOOKED:
        sys.addaudithook(_audit)  # audit hooks stay for the process; idle when unwatched
        _HOOKED.append(True)
    _TOUCHED.clear()
    _WATCHED[:] = sorted({str(folder), str(folder.resolve())})
    try:
        yield _TOUCHED
    finally:
        _WATCHED.clear()


# --- an index too large to build ------------------------------------------------------

def _top(entries: bytes, files: bytes = b"{}", baselines: bytes = b"[]") -> bytes:
    return (b'{"format":"probebench-registry/1","probebench_version":"0","spec_version":"0.2.0",'
            b'"catalog":{},"entries":' + entries + b',"baselines":' + baselines
            + b',"files":' + files + b"}")


@pytest.mark.parametrize(("name", "data", "message"), [
    # the audit's 10^6 empty entries (3 MB): counted on the parsed JSON, never validated
    ("a million entries", lambda: _top(b"[" + b"{}," * (10**6 - 1) + b"{}]"),
     rf"entries: 1000000 items; a registry index holds at most {MAX_INDEX_ENTRIES} "),
    # 10^5 bad files: the first one ends validation, not 2 * 10^5 errors
    ("a hundred thousand bad files", lambda: _top(
        b"[]", b"{" + b",".join(b'"%d":{}' % i for i in range(10**5)) + b"}"),
     r"files\['0'\]\.sha256: Field required"),
    # one file record with 10^5 keys: refused on its count of keys
    ("a file of many keys", lambda: _top(
        b"[]", b'{"registry/x":{' + b",".join(b'"k%d":0' % i for i in range(10**5)) + b"}}"),
     r"files\['registry/x'\]: 100000 keys where a MirrorFile has 2 fields"),
    ("a hundred thousand bad baselines", lambda: _top(
        b"[]", b"{}", b"[" + b"0," * (10**5 - 1) + b"0]"),
     r"baselines\[0\]: Input should be a valid string"),
], ids=["entries", "files", "keys", "baselines"])
def test_a_huge_index_is_refused_in_well_under_a_second_with_a_named_error(
        site: Path, mirror_env: Path, name: str, data: Callable[[], bytes],
        message: str) -> None:
    (site / INDEX_FILE).write_bytes(data())
    started = time.perf_counter()
    with pytest.raises(InputError, match=message):
        open_registry(site)  # a built leaderboard read from disk: parsed unsigned
    # the bound stated in docs/registry.md is a fraction of a second; 5 s on a busy runner
    assert time.perf_counter() - started < 15.0, name
    assert _tree(mirror_env) == {}  # nothing cached from a refused index


def test_a_million_entries_through_registry_list_and_the_values_cap(
        site: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from probebench.cli import main

    index = (site / INDEX_FILE).read_bytes()
    (site / INDEX_FILE).write_bytes(_top(b"[" + b"{}," * (10**6 - 1) + b"{}]"))
    started = time.perf_counter()
    assert main(["registry", "list", "--registry", str(site)]) == 2
    assert time.perf_counter() - started < 15.0
    assert "entries: 1000000 items" in capsys.readouterr().err
    # before parsing: the bytes' commas, brackets and braces over-count its JSON values
    values = index.count(b",") + index.count(b"[") + index.count(b"{") + 1
    monkeypatch.setattr(mirror, "MAX_INDEX_VALUES", values - 1)
    with pytest.raises(InputError, match=f"about {values} JSON values.*refused before parsing"):
        parse_index(index, "registry.json")
    monkeypatch.setattr(mirror, "MAX_INDEX_VALUES", values)
    assert parse_index(index, "registry.json").entries


# --- deadlines ---------------------------------------------------------------------

def test_a_server_that_drips_the_index_is_cut_at_the_deadline(
        site: Path, serve: Callable[[Path], _Mirror], capsys: pytest.CaptureFixture[str],
        signer: TestKey, monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit's server: one byte every 2 s keeps every read within its 30 s timeout,
    and kept ``registry list`` alive indefinitely; the download's deadline ends it (the
    signature, read first, arrives whole)."""
    from probebench.cli import main

    signer.sign(site)
    server = serve(site)
    server.drip = {f"/{INDEX_FILE}"}
    monkeypatch.setattr(http_source, "DEADLINE", 1.5)
    started = time.perf_counter()
    assert main(["registry", "list", "--registry", server.url]) == 2
    took = time.perf_counter() - started
    assert 1.5 <= took < 15.0  # the index alone would take hours at that rate
    err = capsys.readouterr().err
    assert "did not arrive within its deadline of 1.5 s" in err
    assert server.counts[f"/{INDEX_FILE}"] == 1


def test_a_commands_downloads_keep_to_one_deadline_and_leave_nothing(
        site: Path, serve: Callable[[Path], _Mirror], signer: TestKey, mirror_env: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each download has time left (``DEADLINE``), the command has not
    (``MIRROR_DEADLINE``): the artifact's first blob is cut when the command's time is
    up, and the entry file that had landed before it is removed again."""
    import probebench

    signer.sign(site)
    server = serve(site)
    index = parse_index((site / INDEX_FILE).read_bytes(), INDEX_FILE)
    entry = index.entry(PROBE)
    assert entry is not None
    server.drip = {"/" + blob_path(index.files[p].sha256) for p in entry.artifact_files}
    server.every = 0.25
    monkeypatch.setattr(mirror, "MIRROR_DEADLINE", 1.0)
    started = time.perf_counter()
    with pytest.raises(DeadlineError, match=r"within its deadline of 0?\.?\d+ s.*may take 1 s "
                                            r"in all \(MIRROR_DEADLINE\)"):
        probebench.load_probe(PROBE, registry=server.url)
    assert time.perf_counter() - started < 15.0
    assert server.counts["/" + blob_path(index.files[entry.entry_file].sha256)] == 1
    assert _cache_files(mirror_env) == set()  # the entry file that landed is gone
    assert not [p for p in _tree(mirror_env) if p.endswith(".tmp")]


def test_a_download_has_a_deadline_of_its_own(site: Path, serve: Callable[[Path], _Mirror]
                                              ) -> None:
    server = serve(site)
    server.drip = {"/registry.json"}
    server.every = 0.2
    started = time.perf_counter()
    with pytest.raises(DeadlineError, match="deadline of 1 s"):
        http_source.fetch(server.url, max_bytes=1 << 20, deadline=1.0)
    assert 1.0 <= time.perf_counter() - started < 15.0
    # the watchdog ends with its download
    assert not [t for t in threading.enumerate() if t.name == "probebench-deadline"]


# --- one path rule -------------------------------------------------------------------

def _entry(doc: dict[str, Any]) -> dict[str, Any]:
    (entry,) = doc["entries"]
    assert isinstance(entry, dict)
    return entry


def _move_artifact(doc: dict[str, Any], folder: str) -> None:
    """The entry's artifact listed under ``folder`` instead, with the same files."""
    entry = _entry(doc)
    old = entry["artifact_path"]
    files = [folder + p[len(old):] for p in entry["artifact_files"]]
    for before, after in zip(entry["artifact_files"], files, strict=True):
        doc["files"][after] = doc["files"].pop(before)
    entry["artifact_path"], entry["artifact_files"] = folder, files


def _absolute(doc: dict[str, Any], outside: Path) -> None:
    _move_artifact(doc, str(outside))


def _absolute_no_files(doc: dict[str, Any], outside: Path) -> None:
    """The audit's case: an absolute folder and no files to check it against."""
    _entry(doc)["artifact_path"], _entry(doc)["artifact_files"] = str(outside), []


def _dotdot(doc: dict[str, Any], outside: Path) -> None:
    _move_artifact(doc, "registry/artifacts/" + "../" * 40 + str(outside).lstrip("/"))


def _nul(doc: dict[str, Any], outside: Path) -> None:
    entry = _entry(doc)
    path = entry["artifact_files"][0]
    entry["artifact_files"][0] = path + "\x00.txt"
    doc["files"][path + "\x00.txt"] = doc["files"].pop(path)


def _escape(doc: dict[str, Any], outside: Path) -> None:
    entry = _entry(doc)
    entry["artifact_files"].append(f"{ARTIFACT}/\x1b[2Jnotes.md")
    doc["files"][f"{ARTIFACT}/\x1b[2Jnotes.md"] = doc["files"][entry["artifact_files"][0]]


def _clash(doc: dict[str, Any], outside: Path) -> None:
    """``meta.yaml`` a file, and a folder holding ``x``: a FileExistsError before."""
    entry = _entry(doc)
    entry["artifact_files"].append(f"{ARTIFACT}/meta.yaml/x")
    doc["files"][f"{ARTIFACT}/meta.yaml/x"] = doc["files"][f"{ARTIFACT}/meta.yaml"]


def _no_files(doc: dict[str, Any], outside: Path) -> None:
    _entry(doc)["artifact_files"] = []


@pytest.mark.parametrize(("change", "message"), [
    (_absolute, r"entries\[0\]\.artifact_path: '/.*' is absolute; a mirror path is relative"),
    (_absolute_no_files, r"entries\[0\]\.artifact_files: List should have at least 1 item"),
    (_dotdot, r"entries\[0\]\.artifact_path: 'registry/artifacts/\.\./.* has a '\.\.' part"),
    (_nul, r"entries\[0\]\.artifact_files\[0\]: '.*\\x00\.txt' holds the control "
           r"character '\\x00'"),
    (_escape, r"entries\[0\]\.artifact_files\[8\]: .* holds the control character '\\x1b'"),
    (_clash, r"files\['registry/artifacts/.*/meta\.yaml'\]: listed as a file, and also a "
             r"folder of '.*/meta\.yaml/x'"),
    (_no_files, r"entries\[0\]\.artifact_files: List should have at least 1 item"),
], ids=["absolute", "absolute-no-files", "dotdot", "nul", "escape", "clash", "no-files"])
def test_load_probe_never_reads_outside_the_cache(
        site: Path, tmp_path: Path, mirror_env: Path,
        change: Callable[[dict[str, Any], Path], None], message: str) -> None:
    """The index points the artifact at a folder outside the cache, which holds a valid
    copy of the very artifact (before, ``load_probe`` validated and loaded it)."""
    import probebench

    outside = tmp_path / "outside"
    shutil.copytree(REPO / ARTIFACT, outside)
    before = _tree(outside)
    doc = _doc(site)
    change(doc, outside)
    _write(site, doc)
    with _watching(outside) as touched, \
            pytest.raises(InputError, match=rf"{INDEX_FILE}: {message}"):
        probebench.load_probe(PROBE, registry=site)
    assert touched == []  # nothing opened or listed there
    assert _tree(outside) == before
    assert _tree(mirror_env) == {}  # a refused index caches nothing


def test_a_link_out_of_the_cache_is_never_followed(
        site: Path, tmp_path: Path, mirror_env: Path) -> None:
    """A valid index, but the cache's ``registry/artifacts`` is a link to a folder
    outside: no file is read or written through it (before, the artifact's files were
    written there, and then validated from there)."""
    import probebench

    outside = tmp_path / "outside"
    outside.mkdir()
    digest = sha256_bytes((site / INDEX_FILE).read_bytes())
    artifacts = mirror_env / digest / "registry" / "artifacts"
    artifacts.parent.mkdir(parents=True)
    artifacts.symlink_to(outside, target_is_directory=True)
    with _watching(outside) as touched, \
            pytest.raises(InputError, match="is a link out of the cache; refused"):
        probebench.load_probe(PROBE, registry=site)
    assert touched == []
    assert _tree(outside) == {}
    # and were the files there already, load_probe refuses the folder before reading it
    from probebench.registry.mirror import mirror_artifact_folder

    source = open_registry(site)
    assert source.index is not None
    entry = source.index.entry(PROBE)
    assert entry is not None
    with _watching(outside) as touched, \
            pytest.raises(InputError, match="leads out of the mirror cache"):
        mirror_artifact_folder(source, entry)
    assert touched == []


@pytest.mark.parametrize(("field", "change", "message"), [
    ("baselines", lambda d: d["baselines"].__setitem__(0, "registry/baselines/../../x.json"),
     r"baselines\[0\]: .* has a '\.\.' part"),
    ("guards_file", lambda d: d.__setitem__("guards_file", "/etc/passwd"),
     r"guards_file: '/etc/passwd' is absolute"),
    ("files", lambda d: d["files"].__setitem__("registry\\x", {"sha256": "0" * 64, "size": 1}),
     r"files\['registry\\\\x'\]: .* holds a backslash"),
    ("results", lambda d: _entry(d)["results"].__setitem__(
        "t", _entry(d)["entry_file"]), r"entries\[0\]\.results\['t'\]: .* is not under "
                                       r"registry/results/"),
    ("entry_file", lambda d: _entry(d).__setitem__("entry_file", "registry/probes/x.yaml"),
     r"entries\[0\]\.entry_file: 'registry/probes/x\.yaml' is not 'registry/probes/"),
    ("artifact_path", lambda d: _move_artifact(d, "registry/probes/elsewhere"),
     r"entries\[0\]\.artifact_path: .* is not under registry/artifacts/"),
    ("empty part", lambda d: _move_artifact(d, "registry/artifacts/x/"),
     r"entries\[0\]\.artifact_path: .* has an empty or '\.' part"),
    ("C1", lambda d: _move_artifact(d, "registry/artifacts/x\x9b"),
     r"entries\[0\]\.artifact_path: .* holds the control character '\\x9b'"),
    ("long part", lambda d: _move_artifact(d, "registry/artifacts/" + "a" * 201),
     r"entries\[0\]\.artifact_path: .* has a part of 201 bytes \(at most 200\)"),
    ("unlisted", lambda d: _entry(d)["artifact_files"].append(f"{ARTIFACT}/more.txt"),
     r"entries\[0\]: '.*/more\.txt' is named but not listed in files"),
    ("twice", lambda d: d["entries"].append(dict(_entry(d))),
     r"entries\[1\]\.id: '.*' is listed twice"),
])
def test_every_path_of_the_index_keeps_one_rule(pristine: Path, field: str,
                                                change: Callable[[dict[str, Any]], None],
                                                message: str) -> None:
    doc = _doc(pristine)
    change(doc)
    with pytest.raises(InputError, match=rf"^registry\.json: {message}"):
        parse_index(json.dumps(doc).encode(), INDEX_FILE)


def test_nested_artifact_folders_are_refused(pristine: Path) -> None:
    doc = _doc(pristine)
    other = json.loads(json.dumps(_entry(doc)))
    other["id"] = PROBE.replace("-v1", "-v9")
    other["entry_file"] = f"registry/probes/{other['id']}.yaml"
    doc["files"][other["entry_file"]] = doc["files"][_entry(doc)["entry_file"]]
    doc["entries"].append(other)
    _move_artifact({"entries": [other], "files": doc["files"]}, f"{ARTIFACT}/inner")
    with pytest.raises(InputError, match=r"entries\[0\]\.artifact_path: .* holds another "
                                         r"entry's artifact folder"):
        parse_index(json.dumps(doc).encode(), INDEX_FILE)


# --- budgets from the index ------------------------------------------------------------

def _many_files(doc: dict[str, Any]) -> None:
    """The audit's artifact: 150 more files of 1 MiB (their blobs need not exist)."""
    entry = _entry(doc)
    for i in range(150):
        path = f"{ARTIFACT}/data/{i:03d}.bin"
        entry["artifact_files"].append(path)
        doc["files"][path] = {"sha256": f"{i:064x}", "size": 1 << 20}


def _huge_file(doc: dict[str, Any]) -> None:
    path = f"{ARTIFACT}/probe.safetensors"
    doc["files"][path] = {"sha256": "f" * 64, "size": (64 << 20) + 1}


def _huge_total(doc: dict[str, Any]) -> None:
    entry = _entry(doc)
    for i in range(5):
        path = f"{ARTIFACT}/part{i}.bin"
        entry["artifact_files"].append(path)
        doc["files"][path] = {"sha256": f"{i:064x}", "size": 60 << 20}


@pytest.mark.parametrize(("change", "message"), [
    (_many_files, r"holds 158 files; a fetch takes at most 101 .* refused before download "
                  r"\(limit MAX_FILES\)"),
    (_huge_file, r"holds probe\.safetensors \(64\.0 MiB\); a file may hold at most 64\.0 "
                 r"MiB: refused before download \(limit MAX_FILE_BYTES\)"),
    (_huge_total, r"holds 300\.\d MiB in 13 files; artifacts are limited to 256\.1 MiB in "
                  r"all: refused before download \(limit MAX_TOTAL_BYTES\)"),
], ids=["files", "file-bytes", "total-bytes"])
def test_the_artifact_budget_is_checked_on_the_index_before_any_byte_lands(
        site: Path, serve: Callable[[Path], _Mirror], signer: TestKey, mirror_env: Path,
        change: Callable[[dict[str, Any]], None], message: str) -> None:
    import probebench

    doc = _doc(site)
    change(doc)
    _write(site, doc, signer)
    server = serve(site)
    with pytest.raises(InputError, match=rf"artifact '{ARTIFACT}': the registry index of "
                                         rf"{server.url} {message}"):
        probebench.load_probe(PROBE, registry=server.url)
    assert server.blob_requests() == 0  # not one byte of the artifact (or its entry)
    assert _cache_files(mirror_env) == set()


def test_a_smaller_budget_can_be_given(site: Path, serve: Callable[[Path], _Mirror],
                                       signer: TestKey) -> None:
    signer.sign(site)
    server = serve(site)
    source = open_registry(server.url)
    tight = FetchBudget(files=3, file_bytes=1 << 20, total_bytes=1 << 20)
    with pytest.raises(InputError, match="holds 8 files; a fetch takes at most 3"):
        source.ensure_entry(PROBE, budget=tight)
    assert server.blob_requests() == 0


def test_a_failed_entry_leaves_no_file_of_its_call_in_the_cache(
        site: Path, serve: Callable[[Path], _Mirror], signer: TestKey,
        mirror_env: Path) -> None:
    """The last artifact file's blob does not match the index: the entry file and the
    seven artifact files before it had landed, and are removed again; the same index
    loads once the blob is right."""
    import probebench

    signer.sign(site)
    server = serve(site)
    index = parse_index((site / INDEX_FILE).read_bytes(), INDEX_FILE)
    entry = index.entry(PROBE)
    assert entry is not None
    blobs = [index.files[p].sha256 for p in entry.artifact_files]
    assert blobs.count(blobs[-1]) == 1
    last = site / blob_path(blobs[-1])
    good = last.read_bytes()
    last.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    with pytest.raises(InputError, match="its bytes do not match the registry index"):
        probebench.load_probe(PROBE, registry=server.url)
    assert server.blob_requests() == 1 + len(entry.artifact_files)
    assert _cache_files(mirror_env) == set()
    assert not [p for p in _tree(mirror_env) if p.endswith(".tmp")]
    last.write_bytes(good)
    probe = probebench.load_probe(PROBE, registry=server.url)
    assert probe.bundle_sha256 == entry.artifact_sha256
    assert probe.folder.is_relative_to(mirror_env.resolve())


def test_an_untrusted_signature_is_refused_before_the_index_is_downloaded(
        site: Path, serve: Callable[[Path], _Mirror]) -> None:
    """A signature by a key nobody trusts, declaring the largest index: refused with no
    request for the index at all (its size is believed only from a verified statement)."""
    from probebench.registry.signing import BadSignatureError, sign_index
    from tests.registry_keys import make_key

    stranger = make_key(site.parent / "stranger-keys")
    statement = sign_index((site / INDEX_FILE).read_bytes(), stranger.private).model_dump()
    statement["signed"]["index_bytes"] = mirror.MAX_INDEX_BYTES
    (site / (INDEX_FILE + ".sig")).write_text(json.dumps(statement))
    server = serve(site)
    with pytest.raises(BadSignatureError, match="not a trusted registry key"):
        open_registry(server.url)
    assert server.counts[f"/{INDEX_FILE}"] == 0
