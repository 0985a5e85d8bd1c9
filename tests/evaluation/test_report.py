"""Per-prompt records (``submit --log-samples``) and what REPORT.md shows per task: the
selectivity numbers, the gap to the best baseline, the most confident errors with their
texts, and a multi-class report without blank cells. Real runs on the embedded SmolLM2:
a probe trained on blimp_passive_1 and submitted on its first 20 items, and (under
``-m slow``) the multi-class example task of ``test_multiclass``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.report import markdown_cell, render_report
from probebench.evaluation.results import (
    IntervalOut,
    Submission,
    read_submission,
)
from probebench.evaluation.samples import sample_records, write_samples
from probebench.tasks.catalog import TaskCatalog
from tests import report_tables as md
from tests.artifacts import train_task_probe
from tests.evaluation.test_multiclass import multiclass_run  # noqa: F401  (the fixture)

TASK = "blimp_passive_1"
LIMIT = 20


@pytest.fixture(scope="module")
def binary_run(tmp_path_factory: pytest.TempPathFactory, smollm: Any) -> dict[str, Any]:
    """A real probe on blimp_passive_1 submitted through the CLI with --limit and
    --log-samples (one activation cache for the module)."""
    root = tmp_path_factory.mktemp("samples")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROBEBENCH_ACTIVATION_CACHE", str(root / "cache"))
        probe = train_task_probe(root / "probe", smollm, TASK, n_train=100)
        out, report, samples = root / "submission.json", root / "REPORT.md", root / "s.jsonl"
        assert main(["submit", str(probe), "--tasks", TASK, "--limit", str(LIMIT),
                     "--no-guard", "--bootstrap", "100", "--latency-prompts", "2", "--out",
                     str(out), "--report",
                     str(report), "--log-samples", str(samples), "--quiet"]) == 0
    return {"submission": read_submission(out), "report": report.read_text("utf-8"),
            "lines": samples.read_text("utf-8").splitlines()}


def _iv(x: IntervalOut) -> str:
    assert x.value is not None and x.ci_low is not None and x.ci_high is not None
    return f"{x.value:.3f} [{x.ci_low:.3f}, {x.ci_high:.3f}]"


def test_log_samples_join_the_task_items_one_for_one(binary_run: dict[str, Any]) -> None:
    (result,) = binary_run["submission"].tasks
    pred = result.predictions
    records = [json.loads(line) for line in binary_run["lines"]]
    assert len(records) == result.n_labelled_prompts == len(pred.prompt_ids) > 0
    assert [r["prompt_id"] for r in records] == pred.prompt_ids
    items = TaskCatalog.default().load(TASK).test[:LIMIT]
    home = {p.id: (item.id, p) for item in items for p in item.prompts}
    for record, label, prob in zip(records, pred.labels, pred.probs, strict=True):
        item_id, prompt = home[record["prompt_id"]]
        assert record["task"] == TASK and record["item_id"] == item_id
        assert record["text"] == prompt.text and record["label"] == prompt.label == label
        assert record["probability"] == prob
        assert record["correct"] == ((prob >= 0.5) == (label == 1))
        assert record["slices"] == dict(prompt.slices) and record["slices"]
    # only the evaluated items: every one of the first 20, nothing after them
    assert {r["item_id"] for r in records} == {item.id for item in items}
    assert not all(r["correct"] for r in records)  # the errors test below has material


def test_report_shows_selectivity_gap_and_confident_errors(
        binary_run: dict[str, Any]) -> None:
    report: str = binary_run["report"]
    (result,) = binary_run["submission"].tasks
    control = result.selectivity
    assert control is not None
    header, rows = md.table(md.section(report, "Control-task selectivity"))
    (row,) = [r for r in rows if r[0] == TASK]
    if control.degenerate:
        assert control.degenerate_reason and markdown_cell(control.degenerate_reason) in row[4]
    else:
        assert row[1:4] == [_iv(control.accuracy), _iv(control.control_accuracy),
                            _iv(control.selectivity)]
    gap = result.baseline_gap
    assert gap is not None and result.beats_baselines is not None
    _, rows = md.table(md.section(report, "Gap to the best baseline"))
    (row,) = [r for r in rows if r[0] == TASK]
    assert row[1] == _iv(gap)
    assert row[2] == f"{gap.baseline} ({gap.baseline_auroc:.3f})"
    assert row[3].startswith("yes" if result.beats_baselines else "no")

    # the errors: prompts on the wrong side of 0.5, most confident first, with texts
    pred = result.predictions
    wrong = [(abs(p - 0.5), n) for n, (p, y) in enumerate(zip(pred.probs, pred.labels,
                                                               strict=True))
             if (p >= 0.5) != (y == 1)]
    expected = [pred.prompt_ids[n] for _, n in sorted(wrong, key=lambda w: (-w[0], w[1]))]
    header, rows = md.table(md.section(report, f"Most confident errors: {TASK}"))
    assert header == ["prompt id", "label", "P(label 1)", "text"]
    assert [r[0] for r in rows] == [markdown_cell(i) for i in expected[:10]]
    texts = {p.id: p.text for item in TaskCatalog.default().load(TASK).test[:LIMIT]
             for p in item.prompts}
    prob_of = dict(zip(pred.prompt_ids, pred.probs, strict=True))
    label_of = dict(zip(pred.prompt_ids, pred.labels, strict=True))
    first = expected[0]
    assert rows[0][3] == markdown_cell(texts[first])
    assert (prob_of[first] >= 0.5) != (label_of[first] == 1)
    assert rows[0][2] == f"{prob_of[first]:.3f}"


def test_report_without_texts_lists_error_ids(binary_run: dict[str, Any]) -> None:
    """The leaderboard renders stored results, which keep no texts."""
    text = render_report(binary_run["submission"])
    errors = md.section(text, f"Most confident errors: {TASK}")
    assert "texts are not available" in errors
    header, rows = md.table(errors)
    assert header == ["prompt id", "label", "P(label 1)"] and rows


def test_report_escapes_texts_in_table_cells(binary_run: dict[str, Any]) -> None:
    sub: Submission = binary_run["submission"]
    records = sample_records(sub, TaskCatalog.default())
    (result,) = sub.tasks
    wrong = [n for n, r in enumerate(records) if not r["correct"]]
    records[wrong[0]]["text"] = "a | b\nc *d* <x>"
    text = render_report(sub, samples=records)
    assert "a \\| b↵c \\*d\\* \\<x\\>" in text
    # every errors row still has its four cells
    _, rows = md.table(md.section(text, f"Most confident errors: {TASK}"))
    assert rows and all(len(r) == 4 for r in rows)
    # records that do not join the predictions are refused, not shown against wrong ids
    with pytest.raises(InputError, match="do not join"):
        render_report(sub, samples=records[1:])
    assert len(records) == result.n_labelled_prompts


def test_a_failed_samples_write_leaves_no_file(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", "utf-8")
    target = blocker / "samples.jsonl"
    with pytest.raises(InputError, match="cannot write the samples file"):
        write_samples(target, [{"task": "t", "text": "x"}])
    assert blocker.read_text("utf-8") == "x" and sorted(tmp_path.iterdir()) == [blocker]
    # a write that fails midway keeps the old file whole, with no temporary left
    old = tmp_path / "samples.jsonl"
    old.write_text('{"old": 1}\n', "utf-8")
    with pytest.raises(ValueError):
        write_samples(old, [{"ok": 1}, {"bad": float("nan")}])
    assert old.read_text("utf-8") == '{"old": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder", "samples.jsonl"]
    # the CLI refuses such a path before any model work, and writes nothing
    out = tmp_path / "submission.json"
    code = main(["submit", str(tmp_path / "nowhere"), "--tasks", TASK, "--out", str(out),
                 "--log-samples", str(target), "--quiet"])
    assert code == 2 and "not-a-folder is not a folder" in capsys.readouterr().err
    assert not out.exists() and not target.exists()


def test_multiclass_report_has_no_blank_cells(
        multiclass_run: dict[str, object],  # noqa: F811
        binary_run: dict[str, Any]) -> None:
    report = multiclass_run["report"]
    assert isinstance(report, str)
    sub = Submission.model_validate(multiclass_run["submission"])
    (result,) = sub.tasks
    assert result.classes is not None
    task_rows = [md.cells(line) for line in report.splitlines()
                 if line.startswith(f"| {result.id}")]
    assert len(task_rows) >= 6 and all(all(cells) for cells in task_rows), task_rows
    # where the binary report has numbers, the multi-class one says why it has none
    binary = binary_run["report"]
    for section, column in (("Summary", "FPR@99TPR"), ("Summary", "marks"),
                            ("Control-task selectivity", "selectivity [95% CI]")):
        header, rows = md.table(md.section(binary, section))
        assert re.search(r"\d\.\d{3}|\b[A-D]\b", rows[0][header.index(column)])
        header, rows = md.table(md.section(report, section))
        assert rows[0][header.index(column)].startswith("binary only"), (section, column)
    # no transfer target: the binary probe's is imputed, the multi-class probe has none
    header, rows = md.table(md.section(binary, "Robustness"))
    assert rows[0][header.index("cross-model transfer")].startswith("no target declared")
    header, rows = md.table(md.section(report, "Robustness"))
    assert rows[0][header.index("cross-model transfer")].startswith("binary only")
    assert rows[0][header.index("eval-awareness-corrected AUROC")].startswith("binary only")
    # the multi-class Brier, not the binary one
    definitions = md.section(report, "Definitions")
    assert "- **brier**: multi-class Brier: mean over prompts of sum over classes k" in \
        definitions and "(0 to 2)" in definitions
    assert "mean (P(positive) - label)^2" not in report
    assert "mean (P(positive) - label)^2" in binary
    # errors: the argmax is not the class, with the texts of the example task
    records = sample_records(sub, TaskCatalog.default().including(
        [Path(str(multiclass_run["tasks"]))]))
    assert [r["prompt_id"] for r in records] == result.predictions.prompt_ids
    for r in records:
        probs = r["probabilities"]
        assert list(probs) == result.classes and abs(sum(probs.values()) - 1) < 1e-4
        assert r["probability"] == probs[r["class"]]
        assert r["correct"] == (r["predicted_class"] == r["class"])
    errors = [r for r in records if not r["correct"]]
    header, rows = md.table(md.section(report, f"Most confident errors: {result.id}"))
    assert header[-1] == "text" and len(rows) == min(10, len(errors))
    top = max(errors, key=lambda r: r["probabilities"][r["predicted_class"]])
    assert rows[0][0] == markdown_cell(top["prompt_id"])
    assert rows[0][-1] == markdown_cell(top["text"])
