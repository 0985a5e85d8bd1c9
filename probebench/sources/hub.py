"""Artifacts on the Hugging Face hub, fetched with ``huggingface_hub`` at a revision,
within a budget.

The revision is resolved to its commit (``repo_info``) and the folder's file metadata
is listed at that commit (``list_repo_tree``, recursive: paths and sizes, LFS files'
real sizes included); a folder over the ``FetchBudget`` (file count, depth, one file's
bytes, all bytes) is refused before any file is downloaded. Then only that folder is
downloaded at that same commit (``snapshot_download`` with ``allow_patterns``) into the
ordinary hub cache, the branch it was asked by is recorded there as ``huggingface_hub``
does (``refs/<branch>``), and the folder is copied into the artifact cache as regular
files (see ``landing``), sizes checked again before the copy. With ``HF_HUB_OFFLINE`` set
the hub cache is all there is.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from probebench.errors import InputError
from probebench.hashing import atomic_write_bytes
from probebench.paths import artifact_cache_dir, hub_cache_dir, hub_offline
from probebench.sources.budget import FetchBudget
from probebench.sources.landing import (
    Fetched,
    land,
    landing_place,
    refuse_links,
    staging_folder,
)
from probebench.sources.urls import COMMIT, ArtifactRef

if TYPE_CHECKING:
    from huggingface_hub import HfApi

#: seconds for the one question asked of the hub before downloading
HUB_TIMEOUT = 10


def fetch_hub(ref: ArtifactRef, budget: FetchBudget | None = None) -> Fetched:
    """The folder ``ref`` names, at the commit its revision is, within ``budget``
    (default: the artifact's limits; see module docstring)."""
    assert ref.kind == "hub" and ref.repo_id and ref.revision and ref.repo_type
    budget = budget or FetchBudget.default()
    offline = hub_offline()
    cache = hub_cache_dir()
    snapshot = _cached(ref, cache)
    how = "hub cache (offline)" if offline else "hub cache"
    if snapshot is None:
        if offline:
            raise InputError(
                f"artifact {ref.url!r}: not in the local Hugging Face cache {cache} "
                f"(HF_HUB_OFFLINE is set). Fetch it once online, or with `hf download "
                f"{ref.repo_id} --repo-type {ref.repo_type} --revision {ref.revision}"
                + (f" --include '{ref.subfolder}/**'" if ref.subfolder else "") + "`")
        snapshot, how = _download(ref, cache, budget), "hub"
    commit = snapshot.name  # a snapshot folder is named by the commit it holds
    if not COMMIT.match(commit) or (ref.pinned and commit != ref.revision):
        raise InputError(f"artifact {ref.url!r}: the hub cache gave {snapshot}, not the "
                         f"snapshot of commit {ref.revision}")
    source = snapshot / ref.subfolder if ref.subfolder else snapshot
    where = f"the {ref.repo_type} repository {ref.repo_id} at commit {commit}"
    if source.is_symlink() or not source.is_dir():
        raise InputError(f"artifact {ref.url!r}: {where} has no folder "
                         f"{ref.subfolder or '(root)'}"
                         + (" in the local Hugging Face cache" if offline else ""))
    final = landing_place(artifact_cache_dir() / "huggingface.co" / f"{ref.repo_type}s",
                          ref, commit)
    if not final.is_dir():
        staged = staging_folder(final)
        try:
            _copy(source, snapshot.parent.parent / "blobs", staged, ref.url,
                  (budget, f"{where}, folder {ref.subfolder or '(root)'} in the hub cache,"))
            refuse_links(staged, ref.url)
            land(staged, final)
        finally:
            if staged.exists():
                shutil.rmtree(staged, ignore_errors=True)
    return Fetched(final, commit, how)


def _patterns(ref: ArtifactRef) -> list[str] | None:
    return [f"{ref.subfolder}/**"] if ref.subfolder else None


def _cached(ref: ArtifactRef, cache: Path) -> Path | None:
    """The cached snapshot holding the folder (a branch as the cache last saw it), or
    None: a pinned commit that is cached is never asked about again; a branch online is."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    if not ref.pinned and not hub_offline():
        return None
    try:
        folder = Path(snapshot_download(ref.repo_id or "", repo_type=ref.repo_type,
                                        revision=ref.revision, cache_dir=cache,
                                        allow_patterns=_patterns(ref), local_files_only=True))
    except (LocalEntryNotFoundError, ValueError, OSError):
        return None
    # without a cached tree listing an absent subfolder is not noticed: look
    return folder if (folder / ref.subfolder).is_dir() else None


def _download(ref: ArtifactRef, cache: Path, budget: FetchBudget) -> Path:
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    what = f"the {ref.repo_type} repository {ref.repo_id}"
    try:
        # one quick question first (a failing download retries for ~25 s); it also turns
        # a branch into the commit that is listed and downloaded, so the two agree
        api = HfApi()
        commit = api.repo_info(ref.repo_id or "", repo_type=ref.repo_type,
                               revision=ref.revision, timeout=HUB_TIMEOUT).sha or ""
        if not COMMIT.match(commit) or (ref.pinned and commit != ref.revision):
            raise InputError(f"artifact {ref.url!r}: the hub gave commit {commit!r} for "
                             f"the revision {ref.revision}")
        _check_listing(api, ref, commit, budget)
        folder = Path(snapshot_download(ref.repo_id or "", repo_type=ref.repo_type,
                                        revision=commit, cache_dir=cache,
                                        allow_patterns=_patterns(ref)))
        if not ref.pinned:  # for later offline use, as huggingface_hub records a branch
            _record_revision(cache, ref, commit)
        return folder
    except RevisionNotFoundError:
        raise InputError(f"artifact {ref.url!r}: {what} has no revision "
                         f"{ref.revision!r}") from None
    except (RepositoryNotFoundError, GatedRepoError):
        raise InputError(f"artifact {ref.url!r}: the hub has no {ref.repo_type} repository "
                         f"{ref.repo_id} that you may read (private or gated ones need "
                         "HF_TOKEN)") from None
    except EntryNotFoundError:
        raise InputError(f"artifact {ref.url!r}: {what} has no folder "
                         f"{ref.subfolder or '(root)'} at {ref.revision}") from None
    except (HfHubHTTPError, LocalEntryNotFoundError) as exc:
        raise InputError(f"artifact {ref.url!r}: the hub refused or failed "
                         f"({str(exc).splitlines()[0]})") from None
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(f"artifact {ref.url!r}: {exc}") from None
    except Exception as exc:  # network errors come from the HTTP library, many types
        raise InputError(f"artifact {ref.url!r}: not in the local Hugging Face cache and "
                         f"the hub could not be reached ({type(exc).__name__}: {exc})"
                         ) from None


def _check_listing(api: HfApi, ref: ArtifactRef, commit: str, budget: FetchBudget) -> None:
    """Refuse the folder at ``commit`` unless its listed files fit ``budget``: the hub's
    metadata only, before a byte of any file is downloaded."""
    from huggingface_hub.hf_api import RepoFile

    where = (f"the {ref.repo_type} repository {ref.repo_id} at commit {commit}, folder "
             f"{ref.subfolder or '(root)'},")
    prefix = f"{ref.subfolder}/" if ref.subfolder else ""
    sizes: dict[str, int | None] = {}
    for entry in api.list_repo_tree(ref.repo_id or "", path_in_repo=ref.subfolder or None,
                                    recursive=True, revision=commit,
                                    repo_type=ref.repo_type):
        if not isinstance(entry, RepoFile):
            continue
        if entry.path == ref.subfolder:
            raise InputError(f"artifact {ref.url!r}: {where.rstrip(',')} is a file, not a "
                             "folder")
        if not entry.path.startswith(prefix):  # the hub lists only the folder asked
            raise InputError(f"artifact {ref.url!r}: the hub listed {entry.path!r} outside "
                             f"the folder {ref.subfolder}")
        if len(sizes) == budget.files:  # a long listing is not read to its end
            budget.check_paths(ref.url, where, list(sizes), more=True)
        sizes[entry.path[len(prefix):]] = entry.size
    if not sizes:
        raise InputError(f"artifact {ref.url!r}: {where.rstrip(',')} holds no files")
    budget.check_paths(ref.url, where, list(sizes))
    budget.check_sizes(ref.url, where, sizes, before="download")


def _record_revision(cache: Path, ref: ArtifactRef, commit: str) -> None:
    """Write ``refs/<revision>`` as ``huggingface_hub`` does when asked by a branch."""
    from huggingface_hub.file_download import repo_folder_name

    assert ref.revision is not None and ref.repo_type is not None
    storage = cache / repo_folder_name(repo_id=ref.repo_id or "", repo_type=ref.repo_type)
    path = storage / "refs" / ref.revision
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != commit:
        atomic_write_bytes(path, commit.encode())


def _copy(source: Path, blobs: Path, dest: Path, url: str,
          budget: tuple[FetchBudget, str]) -> None:
    """Copy ``source``'s files to ``dest``, following a snapshot's links only into its
    own repository's ``blobs/`` (hub caches without symlinks hold the files themselves);
    nothing is copied unless all of it fits the budget (``(budget, where)``)."""
    blobs = blobs.resolve()
    folders: list[Path] = []
    files: dict[str, Path] = {}
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if path.is_symlink():
            real = path.resolve()
            if not real.is_relative_to(blobs) or not real.is_file():
                raise InputError(f"artifact {url!r}: {rel.as_posix()} in the hub cache "
                                 f"links to {real}, outside the repository's blobs")
            files[rel.as_posix()] = real
        elif path.is_dir():
            folders.append(rel)
        elif path.is_file():
            files[rel.as_posix()] = path
        else:
            raise InputError(f"artifact {url!r}: {rel.as_posix()} in the hub cache is not "
                             "a regular file")
    limits, where = budget
    limits.check_paths(url, where, list(files), before="copying")
    limits.check_sizes(url, where, {name: real.stat().st_size
                                    for name, real in files.items()}, before="copying")
    for folder in folders:
        (dest / folder).mkdir()
    for name, real in files.items():
        shutil.copyfile(real, dest / name)
