"""Pull-request confinement: a submission touches one entry and its artifact, nothing else.

Run before any code from the pull request is installed or any artifact is loaded: a
PR that also edits workflows, the package, ``tasks.yaml``, tests or build files is
refused, so everything later in the job runs the base branch's probebench.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from probebench.errors import ProbebenchError

ENTRY_DIR = "registry/probes/"
ARTIFACT_DIR = "registry/artifacts/"


def changed_paths(repo: Path, base: str, head: str = "HEAD") -> list[str]:
    """Paths that differ between the merge base of ``base`` and ``head`` (any change)."""
    try:
        out = subprocess.run(["git", "diff", "--name-only", f"{base}...{head}"], cwd=repo,
                             capture_output=True, text=True, check=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise ProbebenchError(f"cannot diff {base}...{head}: {detail.strip()}") from None
    return sorted(line for line in out.splitlines() if line)


def confinement_problems(paths: list[str]) -> list[str]:
    """Why a set of changed paths is not a single-entry submission (empty when it is)."""
    problems = []
    entries = [p for p in paths if p.startswith(ENTRY_DIR) and p.endswith(".yaml")]
    artifacts = sorted({p.split("/")[2] for p in paths
                        if p.startswith(ARTIFACT_DIR) and p.count("/") >= 3})
    outside = [p for p in paths if p not in entries and not (
        p.startswith(ARTIFACT_DIR) and p.count("/") >= 3)]
    for p in outside:
        problems.append(f"{p}: outside one entry's YAML and its artifact folder (workflows, "
                        "the package, tasks.yaml, tests and build files are maintainers' "
                        "changes, never part of a submission)")
    if len(entries) != 1:
        problems.append(f"a submission adds or changes exactly one entry under {ENTRY_DIR}; "
                        f"this one changes {len(entries)}")
    if len(artifacts) > 1:
        problems.append(f"a submission brings at most one artifact folder; found "
                        f"{', '.join(artifacts)}")
    return problems
