"""Artifacts on the Hugging Face hub, fetched with ``huggingface_hub`` at a revision.

Only the artifact's folder is downloaded (``allow_patterns``), into the ordinary hub
cache, and copied from there into the artifact cache as regular files (see
``landing``). With ``HF_HUB_OFFLINE`` set the hub cache is all there is.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from probebench.errors import InputError
from probebench.paths import artifact_cache_dir, hub_cache_dir, hub_offline
from probebench.sources.landing import (
    Fetched,
    land,
    landing_place,
    refuse_links,
    staging_folder,
)
from probebench.sources.urls import COMMIT, ArtifactRef

#: seconds for the one question asked of the hub before downloading
HUB_TIMEOUT = 10


def fetch_hub(ref: ArtifactRef) -> Fetched:
    """The folder ``ref`` names, at the commit its revision is (see module docstring)."""
    assert ref.kind == "hub" and ref.repo_id and ref.revision and ref.repo_type
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
        snapshot, how = _download(ref, cache), "hub"
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
            _copy(source, snapshot.parent.parent / "blobs", staged, ref.url)
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


def _download(ref: ArtifactRef, cache: Path) -> Path:
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    what = f"the {ref.repo_type} repository {ref.repo_id}"
    try:
        # one quick question first: a failing download retries for ~25 s
        HfApi().repo_info(ref.repo_id or "", repo_type=ref.repo_type,
                          revision=ref.revision, timeout=HUB_TIMEOUT)
        # by the revision as written, so that the cache records which commit a branch
        # was (refs/<branch>) for later offline use
        return Path(snapshot_download(ref.repo_id or "", repo_type=ref.repo_type,
                                      revision=ref.revision, cache_dir=cache,
                                      allow_patterns=_patterns(ref)))
    except RevisionNotFoundError:
        raise InputError(f"artifact {ref.url!r}: {what} has no revision "
                         f"{ref.revision!r}") from None
    except (RepositoryNotFoundError, GatedRepoError):
        raise InputError(f"artifact {ref.url!r}: the hub has no {ref.repo_type} repository "
                         f"{ref.repo_id} that you may read (private or gated ones need "
                         "HF_TOKEN)") from None
    except (HfHubHTTPError, LocalEntryNotFoundError) as exc:
        raise InputError(f"artifact {ref.url!r}: the hub refused or failed "
                         f"({str(exc).splitlines()[0]})") from None
    except ValueError as exc:
        raise InputError(f"artifact {ref.url!r}: {exc}") from None
    except Exception as exc:  # network errors come from the HTTP library, many types
        raise InputError(f"artifact {ref.url!r}: not in the local Hugging Face cache and "
                         f"the hub could not be reached ({type(exc).__name__}: {exc})"
                         ) from None


def _copy(source: Path, blobs: Path, dest: Path, url: str) -> None:
    """Copy ``source``'s files to ``dest``, following a snapshot's links only into its
    own repository's ``blobs/`` (hub caches without symlinks hold the files themselves)."""
    blobs = blobs.resolve()
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        target = dest / rel
        if path.is_symlink():
            real = path.resolve()
            if not real.is_relative_to(blobs) or not real.is_file():
                raise InputError(f"artifact {url!r}: {rel.as_posix()} in the hub cache "
                                 f"links to {real}, outside the repository's blobs")
            shutil.copyfile(real, target)
        elif path.is_dir():
            target.mkdir()
        elif path.is_file():
            shutil.copyfile(path, target)
        else:
            raise InputError(f"artifact {url!r}: {rel.as_posix()} in the hub cache is not "
                             "a regular file")
