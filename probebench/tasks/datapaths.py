"""The one rule for a task's data paths, wherever a tasks file comes from.

A task names its files relative to the folder of the tasks file that registers it: the
packaged catalog, a ``--include`` file, a file ``probebench tasks add`` writes, or a task
proposal. Every one of them obeys the same rule, in two parts:

* **the text** (checked when a tasks file is parsed): a plain relative POSIX path, no
  absolute path, no ``..`` or ``.`` part, no backslash, no empty part, no control
  character;
* **the file system** (checked whenever a file is opened through :func:`data_file`): no
  part of the path below the folder is a symbolic link, and the path resolves inside the
  folder.

So a tasks file cannot make probebench read ``/etc/passwd`` or ``../outside.tsv``, and a
link planted in a data folder cannot either.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from probebench.errors import InputError

#: longest data path accepted (characters)
MAX_DATA_PATH = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def data_path_problem(rel: str) -> str | None:
    """Why ``rel`` is not a plain relative POSIX path (None when it is)."""
    if not rel:
        return "is empty"
    if len(rel) > MAX_DATA_PATH:
        return f"is {len(rel)} characters long, over {MAX_DATA_PATH}"
    if _CONTROL.search(rel):
        return "holds a control character"
    if "\\" in rel:
        return "holds a backslash (write a POSIX path with /)"
    if rel.startswith("/") or re.match(r"^[A-Za-z]:", rel):
        return "is absolute (a data path is relative to its tasks file's folder)"
    parts = rel.split("/")
    if ".." in parts:
        return "climbs out with '..' (a data path stays inside its tasks file's folder)"
    if "." in parts or "" in parts or PurePosixPath(rel).as_posix() != rel:
        return "is not a plain path (no '.', no empty part, no trailing '/')"
    return None


def check_data_path(rel: str) -> str:
    """``rel`` if it is a plain relative path; a ``ValueError`` naming the problem
    otherwise (pydantic reports it with the field)."""
    problem = data_path_problem(rel)
    if problem:
        raise ValueError(f"data path {rel!r} {problem}")
    return rel


def data_file(root: Path, rel: str) -> Path:
    """``root / rel`` when ``rel`` obeys the rule and no part of it below ``root`` is a
    symbolic link; an ``InputError`` naming the path otherwise."""
    problem = data_path_problem(rel)
    if problem:
        raise InputError(f"{root}: data path {rel!r} {problem}")
    path = root
    for part in rel.split("/"):
        path = path / part
        if path.is_symlink():
            raise InputError(f"{path}: a symbolic link in a task's data path; data files "
                             "are real files inside the tasks file's folder")
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except OSError as exc:
        raise InputError(f"{path}: cannot be resolved ({exc.strerror or exc})") from None
    if not inside:
        raise InputError(f"{path}: resolves outside {root}, the tasks file's folder")
    return path


__all__ = ["MAX_DATA_PATH", "check_data_path", "data_file", "data_path_problem"]
