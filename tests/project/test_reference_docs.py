"""docs/reference-probes.md and docs/layer-sweep.md repeat the stored results and sweeps
of the registry: ``tools/build_reference.py --docs-only`` writes them from the store, and
this test fails when the committed pages differ from what it writes (a stored number
moved, or a page was edited by hand)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = ("reference-probes.md", "layer-sweep.md")


def _write_docs(tmp_path: Path, registry: Path) -> Path:
    """Run the tool from a copy whose root is ``tmp_path``, so that it writes the pages
    there and not over the repository's; the registry it reads is ``registry``."""
    (tmp_path / "tools").mkdir()
    shutil.copy(REPO / "tools" / "build_reference.py", tmp_path / "tools")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, str(tmp_path / "tools" / "build_reference.py"),
                           "--docs-only", "--registry", str(registry)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp_path / "docs"


def test_the_docs_tables_are_the_stored_results(tmp_path: Path) -> None:
    written = _write_docs(tmp_path, REPO / "registry")
    for page in PAGES:
        assert (written / page).read_text("utf-8") == (REPO / "docs" / page).read_text(
            "utf-8"), f"docs/{page} is stale: run `python tools/build_reference.py " \
                      "--docs-only` and commit"


def test_a_moved_stored_number_changes_the_page(tmp_path: Path) -> None:
    """The page follows the store: a stored AUROC that moves shows on it."""
    import json

    registry = tmp_path / "registry"
    for part in ("probes", "results", "sweeps", "baselines"):
        shutil.copytree(REPO / "registry" / part, registry / part)
    path = (registry / "results" / "probebench" / "syntaxgym-number-prep-smollm2-135m-l15-v2"
            / "syntaxgym_number_prep.json")
    data = json.loads(path.read_text("utf-8"))
    data["history"][-1]["result"]["auroc"]["value"] = 0.5
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")
    (tmp_path / "out").mkdir()
    written = _write_docs(tmp_path / "out", registry)
    text = (written / "reference-probes.md").read_text("utf-8")
    assert text != (REPO / "docs" / "reference-probes.md").read_text("utf-8")
    assert "| `syntaxgym-number-prep-smollm2-135m-l15-v2` | syntaxgym_number_prep | " \
           "15:last_token (smollm2-135m) | linear | 0.500 [0.625, 0.867] |" in text
