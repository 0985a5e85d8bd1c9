"""An artifact named on the command line: a folder, or a URL of one (fetched here)."""

from __future__ import annotations

import sys
from pathlib import Path

from probebench.errors import InputError

ARTIFACT_HELP = ("the artifact folder, or its URL at a revision: hf://[datasets/]ORG/REPO@REV"
                 "[/SUBFOLDER], https://huggingface.co/[datasets/]ORG/REPO/tree/REV"
                 "[/SUBFOLDER], https://github.com/ORG/REPO/tree/REV[/PATH] (REV a commit, "
                 "or a branch or tag: the commit it is now is printed)")


def artifact_folder(text: str, *, check_folder: bool = True) -> Path:
    """The folder ``text`` names: a path as given, ``file://``, or a remote URL fetched at
    its revision (offline with ``HF_HUB_OFFLINE``: from the local caches only). Says on
    stderr which commit a URL gave, so a branch can be pinned in a registry entry.
    ``check_folder=False`` leaves a local path that is not a folder to the caller's own
    checks (``submit`` reports it as an invalid artifact)."""
    from probebench.sources.resolve import fetch_artifact
    from probebench.sources.urls import parse_artifact_ref

    ref = parse_artifact_ref(text)
    if not ref.remote:
        path = Path(ref.path or text)
        if check_folder and not path.is_dir():
            raise InputError(f"{path}: not a folder; an artifact is a folder holding "
                             "meta.yaml, the probe files, README.md and notebooks")
        return path
    fetched = fetch_artifact(ref)
    moved = "" if ref.pinned else f"{ref.revision!r} is "
    print(f"probebench: {text}: {moved}commit {fetched.commit} (via {fetched.how}); "
          f"folder {fetched.folder}", file=sys.stderr)
    if not ref.pinned:
        print(f"probebench: a registry entry pins it: {ref.at(fetched.commit)}",
              file=sys.stderr)
    return fetched.folder

