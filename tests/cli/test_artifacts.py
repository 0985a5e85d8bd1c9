from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from probebench.cli import main
from probebench.schemas import write_schemas
from tests.artifacts import make_artifact
from tests.catalogs import PACKAGED_TASKS

REPO = Path(__file__).resolve().parents[2]


def test_validate_prints_every_check_and_exits_0(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder, *_ = make_artifact(tmp_path / "good")
    assert main(["validate", str(folder)]) == 0
    out = capsys.readouterr().out
    for name in ("limits", "required_files", "meta_schema", "notebooks", "bundle_hash",
                 "safe_load", "probe_type", "weights", "model_site", "license",
                 "reported_metrics"):
        assert f"PASS  {name}" in out
    assert out.strip().endswith(": valid")


def test_validate_json_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, *_ = make_artifact(tmp_path / "bad", meta={"layer": 999})
    assert main(["validate", str(folder), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert statuses["model_site"] == "fail" and statuses["weights"] == "pass"
    assert len(report["bundle_sha256"]) == 64


def test_validate_usage_error_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_validate_expected_sha256(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, *_ = make_artifact(tmp_path / "a")
    assert main(["hash", str(folder)]) == 0
    sha = capsys.readouterr().out.split()[0]
    assert main(["validate", str(folder), "--sha256", sha]) == 0
    capsys.readouterr()
    assert main(["validate", str(folder), "--sha256", "0" * 64]) == 1
    assert "differs from the expected" in capsys.readouterr().out


def test_hash_is_stable_and_writes_manifest(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder, *_ = make_artifact(tmp_path / "a")
    assert main(["hash", str(folder), "--manifest", "--write"]) == 0
    out = capsys.readouterr().out.splitlines()
    manifest_lines, last = out[:-1], out[-1]
    assert [line.split("  ")[1] for line in manifest_lines] == sorted(
        ["README.md", "eval.ipynb", "meta.yaml", "probe.joblib", "scaler.joblib",
         "train.ipynb"])
    assert (folder / "MANIFEST.sha256").read_text().splitlines() == manifest_lines
    # the manifest file does not change the hash it records
    assert main(["hash", str(folder)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == last


def test_hash_refuses_a_folder_with_a_symlink(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder, *_ = make_artifact(tmp_path / "a")
    (folder / "link").symlink_to("/etc/passwd")
    assert main(["hash", str(folder)]) == 1
    assert "symlink" in capsys.readouterr().err


def test_export_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, *_ = make_artifact(tmp_path / "src", probe_type="mlp")
    out = tmp_path / "native"
    assert main(["export", "--probe", str(src / "probe.joblib"), "--scaler",
                 str(src / "scaler.joblib"), "--meta", str(src / "meta.yaml"), "--out",
                 str(out)]) == 0
    assert "probe.safetensors" in capsys.readouterr().out
    assert main(["validate", str(out)]) == 0
    capsys.readouterr()
    # refuses to overwrite without --force; a mismatched probe_type is refused
    assert main(["export", "--probe", str(src / "probe.joblib"), "--meta",
                 str(src / "meta.yaml"), "--out", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err


def test_validate_of_malformed_meta_imports_no_torch_or_sklearn(tmp_path: Path) -> None:
    folder, *_ = make_artifact(tmp_path / "a")
    (folder / "meta.yaml").write_text("spec_version: [unclosed\n")
    code = ("import sys; from probebench.cli import main; rc = main(['validate', sys.argv[1]]); "
            "heavy = [m for m in ('torch', 'transformers', 'sklearn') if m in sys.modules]; "
            "print('HEAVY', heavy); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True,
                          text=True)
    assert proc.returncode == 1, proc.stderr
    assert "FAIL  meta_schema" in proc.stdout and "meta.yaml:2: malformed YAML" in proc.stdout
    assert "HEAVY []" in proc.stdout


def test_committed_json_schemas_match_the_code(tmp_path: Path) -> None:
    written = write_schemas(tmp_path)
    assert {p.name for p in written} == {"meta.schema.json", "submission.schema.json"}
    for path in written:
        committed = REPO / "schemas" / path.name
        assert committed.read_text() == path.read_text(), \
            "run `python -m probebench.schemas schemas` and commit the result"


def test_reported_metrics_must_use_the_registered_hash_of_their_task(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from probebench.tasks.catalog import TaskCatalog

    specs = TaskCatalog.default().specs
    own = specs["blimp_passive_1"].test_sha256
    other = specs["blimp_transitive"].test_sha256
    ok = {"blimp_passive_1": {"test_sha256": own, "auroc": 0.91}}
    folder, *_ = make_artifact(tmp_path / "ok", meta={"reported_metrics": ok})
    assert main(["validate", str(folder)]) == 0
    capsys.readouterr()
    wrong = {"blimp_passive_1": {"test_sha256": other, "auroc": 0.91}}
    folder, *_ = make_artifact(tmp_path / "wrong", meta={"reported_metrics": wrong})
    assert main(["validate", str(folder), "--tasks-file", str(PACKAGED_TASKS)]) == 1
    assert "belongs to task 'blimp_transitive'" in capsys.readouterr().out
