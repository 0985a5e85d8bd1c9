"""The registry index at scale: ``parse_index`` accepts the common linked artifact (a Hub
repository at a commit) without parsing its URL, and that shortcut accepts nothing the
full check (``registry_artifact_problem``) refuses; a bad ``artifact_url`` is still named
with the file and the field. The slow test times a 10,000-entry index against the bound
the docs state."""

from __future__ import annotations

import itertools
import json
import time
import tracemalloc
from typing import Any

import pytest

import probebench.registry.mirror as mirror
from probebench.errors import InputError
from probebench.registry.mirror import INDEX_FORMAT_LINKED, parse_index
from probebench.sources.resolve import registry_artifact_problem
from probebench.sources.urls import parse_artifact_ref

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SHA = "ab" * 32


def _urls() -> list[str]:
    """Linked-artifact URLs, good and hostile, built from parts that each break a rule."""
    prefixes = ["hf://", "hf://datasets/", "hf://models/", "hf://spaces/", "HF://", " hf://",
                "hf:///", "https://huggingface.co/"]
    orgs = ["lab", "datasets", "-lab", ".", "..", "a.b_c-d", "", "l%61b", "lab?x", "la\x00b"]
    repos = ["probes", "p..q", ".git", "..", "p@q"]
    revs = [COMMIT, COMMIT.upper(), COMMIT[:39], "main", COMMIT + "0", "", COMMIT + "/"]
    tails = ["", "/verb", "/a/b.c", "/..", "/.", "/", "//x", "/-x", "/x#y", "/x\\y", "/x\n",
             "/x\u202e", "/caf\u00e9"]
    return [f"{p}{o}/{r}@{v}{t}"
            for p, o, r, v, t in itertools.product(prefixes, orgs, repos, revs, tails)]


def test_the_fast_path_accepts_only_what_the_full_check_accepts() -> None:
    urls = _urls()
    fast = [u for u in urls if mirror._pinned_on_hub(u)]
    assert f"hf://lab/probes@{COMMIT}/verb" in fast and f"hf://datasets/lab/probes@{COMMIT}" in fast
    assert 20 < len(fast) < len(urls) // 4
    for url in fast:
        assert registry_artifact_problem(url) is None, url
        ref = parse_artifact_ref(url)
        assert ref.remote and ref.pinned and ref.kind == "hub", url


def _index(entries: list[dict[str, Any]]) -> bytes:
    files = {e["entry_file"]: {"sha256": SHA, "size": 1} for e in entries}
    return json.dumps({"format": INDEX_FORMAT_LINKED, "probebench_version": "0",
                       "spec_version": "0.3.0", "catalog": {}, "entries": entries,
                       "files": files}).encode()


def _entry(k: int, artifact_url: str) -> dict[str, Any]:
    return {"id": f"lab/p{k}-m-l1-v1", "status": "live", "name": f"p{k}", "model": "m",
            "layer": 1, "position": "last_token", "probe_type": "linear", "license": "MIT",
            "tasks": ["verb_grammar"], "artifact_sha256": SHA,
            "entry_file": f"registry/probes/lab/p{k}-m-l1-v1.yaml",
            "artifact_path": f"registry/artifacts/_remote/lab__p{k}-m-l1-v1",
            "artifact_files": [], "artifact_url": artifact_url}


@pytest.mark.parametrize(("url", "found"), [
    ("hf://lab/probes@main/verb", "not a commit"),
    (f"hf://lab/probes@{COMMIT}/../x", "not a plain name"),
    ("registry/artifacts/verb", "a repository folder is mirrored, not linked"),
    (f"file:///tmp/{COMMIT}", "artifact_url"),
])
def test_a_bad_artifact_url_is_named_with_file_and_field(url: str, found: str) -> None:
    good = _entry(0, f"hf://lab/probes@{COMMIT}/p0")
    assert parse_index(_index([good]), "site/registry.json").entries[0].artifact_url
    with pytest.raises(InputError) as caught:
        parse_index(_index([good, _entry(1, url)]), "site/registry.json")
    message = str(caught.value)
    assert message.startswith("site/registry.json: entries[1].artifact_url")
    assert found in message


@pytest.mark.slow
def test_an_index_of_10000_entries_parses_within_the_documented_bound() -> None:
    """9,000 linked entries and 1,000 with their files, as a large registry: within
    ``parse_index``'s documented cost of 0.15 ms of CPU and 20 KB per entry."""
    entries, files = [], {}
    for k in range(10_000):
        entry = _entry(k, f"hf://lab/probes@{COMMIT}/p{k}")
        entry["results"] = {"verb_grammar": f"registry/results/lab/p{k}-m-l1-v1/verb_grammar.json"}
        entry["auroc"] = {"verb_grammar": 0.9}
        if k % 10 == 0:
            del entry["artifact_url"]
            entry["artifact_path"] = f"registry/artifacts/p{k}"
            entry["artifact_files"] = [f"registry/artifacts/p{k}/{n}" for n in
                                       ("README.md", "config.yaml", "probe.safetensors")]
        for path in [entry["entry_file"], *entry["artifact_files"],
                     *entry["results"].values()]:
            files[path] = {"sha256": SHA, "size": 100}
        entries.append(entry)
    data = json.dumps({"format": INDEX_FORMAT_LINKED, "probebench_version": "0",
                       "spec_version": "0.3.0", "catalog": {}, "entries": entries,
                       "files": files}, indent=1, sort_keys=True).encode()
    parse_index(data, "warm-up")
    cpu = time.process_time()
    index = parse_index(data, "registry.json")
    cpu = time.process_time() - cpu
    tracemalloc.start()
    parse_index(data, "registry.json")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(index.entries) == 10_000
    assert cpu < 10_000 * 0.15e-3, cpu
    assert peak < 10_000 * 20_000, peak
