"""A Hugging Face hub on the loopback, so that ``huggingface_hub``'s own download code
fills a real hub cache in the tests (``HF_ENDPOINT`` points at it).

It answers the few routes a download uses, as huggingface.co does: repository info at a
revision (which turns a branch into its commit), the recursive tree listing of the
repository or of one folder (a folder that holds nothing is ``EntryNotFound``), and
``resolve`` for one file (HEAD for its metadata, GET for its bytes), with huggingface.co's
error codes for a missing repository, revision or file. Every request is recorded.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


def git_blob_id(data: bytes) -> str:
    """The id git (and the hub) gives a file's content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class HubRepo:
    files: dict[str, bytes]
    commit: str
    branches: dict[str, str] = field(default_factory=dict)
    #: sizes the tree listing reports instead of the bytes' own (an LFS file's metadata)
    sizes: dict[str, int] = field(default_factory=dict)


@dataclass
class FakeHub:
    #: (repo type, repo id) -> the repository
    repos: dict[tuple[str, str], HubRepo] = field(default_factory=dict)
    #: "METHOD path" of every request, in order
    requests: list[str] = field(default_factory=list)
    url: str = ""

    def add(self, repo_type: str, repo_id: str, files: dict[str, bytes],
            sizes: dict[str, int] | None = None) -> str:
        """Publish ``files`` as one commit on branch main; returns the commit. ``sizes``
        are what the tree listing says of some files (the bytes are still ``files``')."""
        digest = hashlib.sha1(repo_id.encode())
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + files[name])
        commit = digest.hexdigest()
        self.repos[(repo_type, repo_id)] = HubRepo(files, commit, {"main": commit},
                                                   dict(sizes or {}))
        return commit

    def downloads(self) -> list[str]:
        """The repository paths whose bytes were sent."""
        return [r.split("/resolve/", 1)[1].split("/", 1)[1] for r in self.requests
                if r.startswith("GET ") and "/resolve/" in r]


def add_folder(files: dict[str, bytes], folder: Path, prefix: str) -> None:
    """Add every file of ``folder`` under ``prefix/`` to ``files``."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            files[f"{prefix}/{path.relative_to(folder).as_posix()}"] = path.read_bytes()


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
                  *, head: bool = False) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _error(self, code: str, head: bool = False) -> None:
            self._send(404, json.dumps({"error": code}).encode(), {"X-Error-Code": code,
                       "Content-Type": "application/json"}, head=head)

        def _repo(self, repo_type: str, parts: list[str]) -> tuple[HubRepo, str] | None:
            repo = hub.repos.get((repo_type, "/".join(parts[:2])))
            return (repo, "/".join(parts[:2])) if repo else None

        def _commit(self, repo: HubRepo, revision: str) -> str | None:
            return repo.branches.get(revision) or (revision if revision == repo.commit
                                                   else None)

        def do_HEAD(self) -> None:  # the http.server protocol names them
            self._answer(head=True)

        def do_GET(self) -> None:
            self._answer(head=False)

        def _answer(self, *, head: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append(f"{'HEAD' if head else 'GET'} {path}")
            parts = path.strip("/").split("/")
            if parts[0] == "api":  # /api/{models,datasets}/ORG/NAME/{revision,tree}/REV[/...]
                self._api(parts[1][:-1], parts[2:])
            else:  # [/datasets]/ORG/NAME/resolve/REV/PATH
                repo_type = "dataset" if parts[0] == "datasets" else "model"
                self._resolve(repo_type, parts[1:] if repo_type == "dataset" else parts, head)

        def _api(self, repo_type: str, parts: list[str]) -> None:
            found = self._repo(repo_type, parts)
            if found is None:
                return self._error("RepoNotFound")
            repo, repo_id = found
            commit = self._commit(repo, parts[3]) if len(parts) > 3 else None
            if commit is None:
                return self._error("RevisionNotFound")
            body: object
            if parts[2] == "revision":
                body = {"id": repo_id, "sha": commit, "private": False,
                        "siblings": [{"rfilename": name} for name in sorted(repo.files)]}
            else:  # tree[/FOLDER], always recursive (as huggingface_hub asks it)
                folder = "/".join(parts[4:])
                listed = sorted((name, data) for name, data in repo.files.items()
                                if not folder or name.startswith(f"{folder}/"))
                if folder and not listed:
                    return self._error("EntryNotFound")
                body = [{"type": "file", "path": name, "size": repo.sizes.get(name, len(data)),
                         "oid": git_blob_id(data)} for name, data in listed]
            return self._send(200, json.dumps(body).encode(),
                              {"Content-Type": "application/json"})

        def _resolve(self, repo_type: str, parts: list[str], head: bool) -> None:
            found = self._repo(repo_type, parts)
            if found is None or len(parts) < 5 or parts[2] != "resolve":
                return self._error("RepoNotFound", head)
            repo, _ = found
            commit = self._commit(repo, parts[3])
            if commit is None:
                return self._error("RevisionNotFound", head)
            data = repo.files.get("/".join(parts[4:]))
            if data is None:
                return self._error("EntryNotFound", head)
            return self._send(200, data, {"X-Repo-Commit": commit,
                                          "ETag": f'"{git_blob_id(data)}"',
                                          "Content-Type": "application/octet-stream"},
                              head=head)

    return Handler


@contextmanager
def serve(hub: FakeHub) -> Iterator[FakeHub]:
    """Serve ``hub`` on 127.0.0.1 for the duration; ``hub.url`` is its endpoint."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
