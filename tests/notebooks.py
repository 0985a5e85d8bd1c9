"""Run the project's *own* notebooks (written by ``train``, committed under notebooks/)
in-process with nbclient, sharing the test's activation cache. Submitted notebooks are
never run this way: ``probebench review`` runs them in the sandbox."""

from __future__ import annotations

from pathlib import Path

from probebench.intake.reproduce import parse_metrics_lines
from probebench.sandbox.notebook_runner import metrics_lines


def run_notebook(path: Path, *, timeout: int, cwd: Path) -> list[str]:
    """Execute a trusted notebook; its stream output lines. Raises on a cell error."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return [line for cell in nb.cells for out in cell.get("outputs", [])
            if out.get("output_type") == "stream"
            for line in str(out.get("text", "")).splitlines()]


def printed_metrics(lines: list[str]) -> dict[str, dict[str, float]]:
    """task -> metric -> value from the PROBEBENCH_METRICS lines (None values dropped)."""
    cells = [{"outputs": [{"output_type": "stream", "text": "\n".join(lines)}]}]
    metrics, problems = parse_metrics_lines(metrics_lines(cells))
    assert not problems, problems
    return {t: {k: v for k, v in m.items() if v is not None} for t, m in metrics.items()}
