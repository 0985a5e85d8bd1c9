"""The sealed-holdout listing (``holdouts.yaml``) is parsed once per version of the file."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_sealed_listing_is_reread_when_the_file_changes(tmp_path: Path) -> None:
    import yaml

    from probebench.tasks.sealed import read_listing

    tasks, holdouts = tmp_path / "tasks.yaml", tmp_path / "holdouts.yaml"
    data = yaml.safe_load((REPO / "probebench" / "catalog" / "holdouts.yaml").read_text("utf-8"))
    holdouts.write_text(yaml.safe_dump(data), encoding="utf-8")
    listed = read_listing(tasks).sealed_holdouts
    assert listed and listed == read_listing(tasks).sealed_holdouts
    listing = read_listing(tasks)
    listing.sealed_holdouts.clear()  # a caller's edit stays its own
    assert read_listing(tasks).sealed_holdouts == listed
    del data["sealed_holdouts"]
    holdouts.unlink()  # a new file, as an atomic rewrite makes it
    holdouts.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert read_listing(tasks).sealed_holdouts == {}
