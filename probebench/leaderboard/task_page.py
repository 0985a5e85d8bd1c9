"""What a task page says about the task's data: where it comes from, its license, its
size per split, its pinned hashes and files, and a few example items.

The examples come from the train split when the task has one (the test items are
public in the repository, but the page that ranks probes on them need not print them),
else from the test split. A task whose files cannot be loaded (drifted, or not in this
checkout) keeps its page and says why instead.
"""

from __future__ import annotations

from typing import Any

from probebench.errors import InputError
from probebench.leaderboard.files import LeaderboardFiles
from probebench.tasks.catalog import TaskCatalog

#: example items shown per task, and prompts per item
EXAMPLES = 3
EXAMPLE_PROMPTS = 4


def task_data(catalog: TaskCatalog, task_id: str, files: LeaderboardFiles) -> dict[str, Any] | None:
    """The data section of ``task_id``'s page (None for a task the catalog lacks)."""
    spec = catalog.specs.get(task_id)
    if spec is None:
        return None
    root = catalog.root_of(task_id)
    file_rows = []
    for role, rel in sorted(spec.files.items()):
        link = files.repository_file(root / rel, f"files/tasks/{task_id}/{rel}",
                                     name=rel)
        file_rows.append({"role": role, "path": rel, "link": link,
                          "sha256": spec.files_sha256.get(rel, "not pinned")})
    view: dict[str, Any] = {
        "description": spec.description, "source": spec.source, "license": spec.license,
        "labels": sorted(spec.labels.items(), reverse=True), "files": file_rows,
        "splits": [], "examples": [], "examples_from": None, "problem": None,
        "holdouts": [h.version for h in spec.holdouts],
    }
    try:
        data = catalog.load(task_id)
    except (InputError, OSError) as exc:
        view["problem"] = str(exc)
        return view
    for name in ("train", "val", "test"):
        items = data.splits.get(name)
        if items:
            view["splits"].append((name, len(items), sum(len(i.prompts) for i in items)))
    split = "train" if data.splits.get("train") else "test"
    view["examples_from"] = split
    for item in data.splits[split][:EXAMPLES]:
        view["examples"].append({
            "id": item.id, "slices": sorted(item.slices.items()),
            "prompts": [(p.text, "not scored", "") if p.label is None else
                        (p.text, f"label {p.label}", spec.labels.get(p.label, ""))
                        for p in item.prompts[:EXAMPLE_PROMPTS]],
            "more": max(0, len(item.prompts) - EXAMPLE_PROMPTS)})
    return view


__all__ = ["EXAMPLES", "task_data"]
