"""Where an entry's artifact lives: a repository path, ``file://`` or ``hf://``."""

from __future__ import annotations

import re
from pathlib import Path

from probebench.errors import InputError
from probebench.paths import hub_offline

#: where a registry entry's artifact may live: a folder of registry/artifacts/, or the hub
REGISTRY_ARTIFACT = re.compile(r"^(registry/artifacts/[A-Za-z0-9][A-Za-z0-9._\-]*/?|"
                               r"hf://[A-Za-z0-9][\w.\-]*/[\w.\-]+@[0-9a-f]{40}(/[\w.\-]+)*)$")


def registry_artifact_problem(url: str) -> str | None:
    """Why ``url`` may not be a registry entry's ``artifact_url`` (None when it may)."""
    if REGISTRY_ARTIFACT.match(url) and ".." not in url.split("/"):
        return None
    return (f"artifact_url {url!r}: a registry entry's artifact is a folder "
            "registry/artifacts/<folder> or hf://ORG/REPO@COMMIT[/SUBFOLDER] with COMMIT the "
            "40-hex revision (a branch or tag can move); file:// and other paths are for "
            "local use only")


def resolve_artifact(url: str, repo_root: Path) -> tuple[Path, str]:
    """(local folder, how it was found). ``hf://REPO@REVISION[/SUBFOLDER]`` goes through
    ``huggingface_hub`` at the pinned revision; offline, only the local cache is used."""
    if url.startswith("file://"):
        path = Path(url[len("file://"):])
        how = "file"
    elif url.startswith("hf://"):
        return _from_hub(url)
    elif "://" in url:
        raise InputError(f"artifact_url {url!r}: only repository paths, file:// and hf:// "
                         "are supported")
    else:
        rel = Path(url)
        if rel.is_absolute() or ".." in rel.parts:
            raise InputError(f"artifact_url {url!r}: a repository path is relative and stays "
                             "inside the repository")
        path = repo_root / rel
        how = "repository path"
        if path.exists() and not path.resolve().is_relative_to(Path(repo_root).resolve()):
            raise InputError(f"artifact_url {url!r}: leads outside the repository")
    if not path.is_dir():
        raise InputError(f"artifact_url {url!r}: {path} is not a folder")
    return path, how


def _from_hub(url: str) -> tuple[Path, str]:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    parts = url[len("hf://"):].split("/")
    if ".." in parts:
        raise InputError(f"artifact_url {url!r}: '..' is not allowed")
    repo_part, subfolder = "/".join(parts[:2]), "/".join(parts[2:])
    repo_id, at, revision = repo_part.partition("@")
    if not at or not revision:
        raise InputError(f"artifact_url {url!r}: hf:// URLs pin a revision: "
                         "hf://org/repo@<commit>[/subfolder]")
    offline = hub_offline()
    try:
        folder = Path(snapshot_download(repo_id, revision=revision, local_files_only=offline))
    except LocalEntryNotFoundError:
        raise InputError(f"artifact_url {url!r}: not in the local Hugging Face cache "
                         "(HF_HUB_OFFLINE is set)" if offline else
                         f"artifact_url {url!r}: the hub could not be reached") from None
    except (HfHubHTTPError, ValueError, OSError) as exc:
        raise InputError(f"artifact_url {url!r}: {exc}") from None
    path = folder / subfolder if subfolder else folder
    how = "hub cache (offline)" if offline else "hub"
    return path, how
