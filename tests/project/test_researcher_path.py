"""A researcher's path, end to end, with a task and a probe made in the test: create a
task, evaluate a probe on it privately with ``--include``, propose the task in a
simulated pull request (it waits for a maintainer), register it as a maintainer would,
add the probe's entry, evaluate it into the registry and see both on the built leaderboard."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from probebench.artifact.checks import validate
from probebench.cli import main
from tests.actions_sim import Simulator, git
from tests.intake.test_proposal import _run_pr, github  # noqa: F401  (the fixture)

TASK = "researcher_tense"
FOLDER = f"tasks/proposed/{TASK}"
DATA = f"data/{TASK}/tense.tsv"
SUBJECTS = ["The child", "My neighbour", "The old farmer", "Our teacher", "The pilot",
            "A student", "The baker", "Her brother"]
VERBS = [("walked", "walks"), ("sang", "sings"), ("cooked", "cooks"), ("painted", "paints"),
         ("danced", "dances"), ("jumped", "jumps"), ("laughed", "laughs"),
         ("played", "plays"), ("worked", "works"), ("smiled", "smiles")]
PLACES = ["at home", "in the garden", "near the river", "after lunch"]


def tense_lines() -> list[str]:
    """Minimal pairs (past, present) sharing an id in column 3: 40 pairs, 28 in train,
    4 in val, 8 in test."""
    lines = []
    for n in range(40):
        subject = SUBJECTS[n % len(SUBJECTS)]
        past, present = VERBS[n % len(VERBS)]
        place = PLACES[(n // len(VERBS)) % len(PLACES)]
        part = "tr" if n < 28 else "va" if n < 32 else "te"
        lines.append(f"{part}\tpast\tp{n}\t{subject} {past} {place} .")
        lines.append(f"{part}\tpresent\tp{n}\t{subject} {present} {place} .")
    return lines


@pytest.mark.usefixtures("github")
def test_a_researchers_task_and_probe_reach_the_site(
        github: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(tmp_path / "cache"))
    # 1. the researcher's own task, laid out as a proposal, hashes computed by probebench
    fork = github.root / "forks" / "researcher"
    git(github.root, "clone", "-q", str(github.upstream), str(fork))
    git(fork, "checkout", "-q", "-b", "researcher")
    proposal = fork / FOLDER
    (proposal / DATA).parent.mkdir(parents=True)
    (proposal / DATA).write_text("\n".join(tense_lines()) + "\n", "utf-8")
    (proposal / "README.md").write_text("# Past or present\n\nWritten for this test.\n")
    assert main(["tasks", "add", str(proposal / DATA), "--to", str(proposal), "--id", TASK,
                 "--format", "senteval", "--title", "Past or present tense (pairs)",
                 "--option", "positive_class=past", "--option", "item_column=3",
                 "--label", "1=past tense", "--label", "0=present tense",
                 "--license", "CC-BY-4.0", "--source", "written for the probebench tests"
                 ]) == 0

    # 2. evaluated privately: trained and submitted with the task included
    artifact = tmp_path / "tense-smollm2-135m-l15-v1"
    include = ["--include", str(proposal)]
    assert main(["train", "--task", TASK, *include, "--site", "15:last_token",
                 "--probe-type", "linear", "--out", str(artifact), "--quiet"]) == 0
    private = tmp_path / "private.json"
    assert main(["submit", str(artifact), "--tasks", TASK, *include, "--no-guard",
                 "--bootstrap", "100", "--out", str(private), "--report",
                 str(tmp_path / "REPORT.md"), "--quiet"]) == 0
    (result,) = json.loads(private.read_text("utf-8"))["tasks"]
    assert result["id"] == TASK and result["n_items"] == 8 and result["n_prompts"] == 16
    assert result["auroc"]["value"] > 0.9  # tense is linearly readable at layer 15
    capsys.readouterr()

    # 3. proposed in a pull request: every check passes, and it waits for a maintainer
    git(fork, "add", "-A")
    git(fork, "commit", "-qm", f"Propose {TASK}")
    before = github.main_sha()
    done = _run_pr(github, 77, fork, "researcher")
    assert done["confine"].outputs == {"kind": "task"}
    assert done["proposal"].ok, done["proposal"].output
    assert "task proposal: needs a maintainer's review" in github.comment(77)
    assert github.main_sha() == before

    # 4. a maintainer registers it: the entry appended verbatim, the data moved beside it
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    shutil.copytree(proposal / "data" / TASK, repo / "data" / TASK)
    spec = yaml.safe_load((proposal / "tasks.yaml").read_text("utf-8"))["tasks"][0]
    (repo / "tasks.yaml").write_text(yaml.safe_dump({"version": 1, "tasks": [spec]},
                                                    sort_keys=False), "utf-8")
    assert main(["tasks", "--repo", str(repo), "verify"]) == 0

    # 5. the probe's entry, evaluated into the registry
    folder = repo / "registry" / "artifacts" / artifact.name
    shutil.copytree(artifact, folder)
    report = validate(folder)
    weights = report.weights
    assert weights is not None and report.bundle_sha256 is not None
    entry_id = f"researcher/{artifact.name}"
    entry = {
        "id": entry_id, "name": "Past or present tense", "short_name": "tense-l15",
        "author": "A. Researcher", "org": "researcher", "category": "grammar",
        "probe_type": "linear", "model": "smollm2-135m", "layer": 15,
        "position": "last_token", "paper": None, "paper_title": None,
        "artifact_url": f"registry/artifacts/{artifact.name}",
        "artifact_sha256": report.bundle_sha256, "reproducer_notebook": "train.ipynb",
        "colab_url": None, "license": "Apache-2.0", "release": "2026-11-23",
        "param_count": sum(int(w.size) for w in weights.weights)
        + sum(int(b.size) for b in weights.biases),
        "size_mb": round(sum(p.stat().st_size for p in folder.iterdir()) / 1e6, 4),
        "tagline": "Past or present: tense from the last token", "description": "A test.",
        "status": "live", "tasks": [TASK], "transfer_targets": [],
        "evalaware_imputation_acknowledged": True}
    entry_file = repo / "registry" / "probes" / "researcher" / f"{artifact.name}.yaml"
    entry_file.parent.mkdir(parents=True)
    entry_file.write_text(yaml.safe_dump(entry, sort_keys=False), "utf-8")
    monkeypatch.chdir(tmp_path)  # nothing may be read from the working directory
    assert main(["registry", "--repo", str(repo), "check"]) == 0
    assert main(["registry", "--repo", str(repo), "evaluate", entry_id, "--bootstrap", "100",
                 "--allow-dirty", "--quiet"]) == 0
    stored = repo / "registry" / "results" / "researcher" / artifact.name / f"{TASK}.json"
    assert stored.is_file()

    # 6. both on the built leaderboard
    site = tmp_path / "site"
    assert main(["leaderboard", "--repo", str(repo), "build", "--out", str(site)]) == 0
    pages = {p.relative_to(site).as_posix(): p.read_text("utf-8")
             for p in site.rglob("*.html")}
    task_pages = [text for name, text in pages.items() if TASK in name]
    assert task_pages and any("tense-l15" in text for text in task_pages)
    entry_pages = [text for text in pages.values() if "Past or present tense" in text
                   and "A. Researcher" in text]
    assert entry_pages
    index = pages["index.html"]
    assert "tense-l15" in index
