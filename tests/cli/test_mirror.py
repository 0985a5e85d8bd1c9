"""``probebench registry list``: a header row, live entries unless ``--status`` says
otherwise, and a count line that says what was left out (a synthetic registry folder:
no model, no network)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from tests.registry_fixture import synthetic_registry


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A folder registry of 11 synthetic entries and each one's status, read back from
    its YAML file (not from the fixture's rule)."""
    root = tmp_path_factory.mktemp("list") / "registry"
    ids = synthetic_registry(root, 11)
    statuses = {}
    for entry_id in ids:
        org, name = entry_id.split("/")
        statuses[entry_id] = yaml.safe_load(
            (root / "probes" / org / f"{name}.yaml").read_text("utf-8"))["status"]
    # the fixture must give every status, or the filter is not tested
    assert set(statuses.values()) == {"live", "pending_review", "deprecated"}
    return root, statuses


def _list(capsys: pytest.CaptureFixture[str], root: Path, *more: str) -> list[str]:
    assert main(["registry", "list", "--registry", str(root), "--quiet", *more]) == 0
    return capsys.readouterr().out.splitlines()


def _ids(rows: list[str]) -> set[str]:
    return {row.split()[0] for row in rows}


def test_list_shows_live_entries_under_a_header_by_default(
        registry: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    root, statuses = registry
    header, *rows, count = _list(capsys, root)
    assert header.split() == ["ID", "STATUS", "MODEL", "SITE", "PROBE", "AUROC", "per",
                              "task"]
    live = {i for i, s in statuses.items() if s == "live"}
    assert _ids(rows) == live
    others = len(statuses) - len(live)
    assert count == f"{len(live)} live entries ({others} others: --status all)"
    # every column starts where its header does
    for column in ("STATUS", "MODEL", "SITE", "PROBE", "AUROC"):
        at = header.index(column)
        assert all(row[at - 2:at] == "  " and row[at] != " " for row in rows), column


def test_list_status_all_and_one_status(registry: tuple[Path, dict[str, str]],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    root, statuses = registry
    header, *rows, count = _list(capsys, root, "--status", "all")
    assert header.startswith("ID") and _ids(rows) == set(statuses)
    counts = Counter(statuses.values())
    assert count == (f"{len(statuses)} entries ({counts['live']} live, "
                     f"{counts['pending_review']} pending_review, "
                     f"{counts['deprecated']} deprecated)")
    for status in ("deprecated", "pending_review"):
        header, *rows, count = _list(capsys, root, "--status", status)
        wanted = {i for i, s in statuses.items() if s == status}
        assert _ids(rows) == wanted
        assert all(row.split()[1] == status for row in rows)
        entries = "entry" if len(wanted) == 1 else "entries"
        assert count == (f"{len(wanted)} {status} {entries} ({len(statuses) - len(wanted)} "
                         "others: --status all)")
    with pytest.raises(SystemExit):
        main(["registry", "list", "--registry", str(root), "--status", "retired"])
    assert "invalid choice: 'retired'" in capsys.readouterr().err
