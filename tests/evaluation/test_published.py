"""A submit reads the task baselines the registry publishes for exactly its inputs
(issue 29: "compute every (task, model, site) baseline once and reuse it across entries
and runs"), says so, and computes them for any other inputs, with --compute-baselines,
and in the registry's own evaluation.

Real model (MiniLM: the smallest embedded one, and the lookup does not depend on the
architecture), a real BLiMP task and its reference artifact, limited to a few items; the
registry is a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import probebench.evaluation.task_baselines as task_baselines
from probebench.cli import main
from probebench.evaluation.published import no_published_baselines
from probebench.evaluation.report import render_report
from probebench.evaluation.results import Submission, read_submission
from probebench.evaluation.session import Session, SubmitOptions
from probebench.evaluation.submit import submit
from probebench.evaluation.task_baselines import baselines_inputs
from probebench.hashing import sha256_json
from probebench.registry.baselines import RegistryBaselines, store_baselines
from probebench.runs.submit import NO_GUARD_ASKED
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "registry" / "artifacts" / "blimp-det-noun-minilm-l6-l4-v2"
TASK = "blimp_determiner_noun_agreement_1"
MODEL = "minilm-l6"
SITE = Site(4, "token_avg")  # the reference probe's site
FILE = f"registry/baselines/{TASK}/{MODEL}__4-token_avg.json"


#: item-bootstrap resamples of these runs (few: the intervals are not what is tested)
BOOTSTRAP = 50


def _submit(**options: Any) -> Submission:
    """What ``probebench submit --no-guard`` computes (its imputed correction's note)."""
    options.setdefault("bootstrap", BOOTSTRAP)
    options.setdefault("guards", NO_GUARD_ASKED)
    return submit(REFERENCE, [TASK], SubmitOptions(limit=4, progress=False,
                                                   latency_prompts=2, **options))


# the module's submits read the same prompts: one activation cache for all of them
pytestmark = pytest.mark.usefixtures("share_module_cache")


@pytest.fixture(scope="module")
def computed(module_cache: Path) -> Submission:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROBEBENCH_ACTIVATION_CACHE", str(module_cache))
        return _submit()


def _publish(root: Path, submission: Submission) -> Path:
    """The registry's baselines file as ``registry evaluate`` writes it (the store
    refuses a limited submission, so its limit is taken off first)."""
    (root / "registry" / "probes").mkdir(parents=True, exist_ok=True)
    changed = store_baselines(root / "registry", submission.model_copy(update={"limit": None}))
    assert [p.relative_to(root).as_posix() for p in changed] == [FILE]
    return changed[0]


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("the baselines were computed, not read from the registry")


def test_a_submit_reads_the_registrys_baselines_for_the_same_inputs(
        computed: Submission, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _publish(tmp_path, computed)
    stored = json.loads(path.read_text("utf-8"))["history"][-1]
    assert stored["inputs_sha256"] == computed.baselines_sha256[TASK]
    assert len(computed.baselines_sha256[TASK]) == 64
    assert computed.timing is not None and computed.timing.baselines_published == {}

    asked: list[list[str]] = []
    lookup = RegistryBaselines(tmp_path / "registry", tmp_path, ensure=asked.append)
    # neither the random-init control, nor the model's own scores, nor any fit may run
    monkeypatch.setattr(Session, "random_activations", _refuse)
    monkeypatch.setattr(Session, "surprisal_scores", _refuse)
    monkeypatch.setattr(task_baselines, "_compute", _refuse)
    read = _submit(published_baselines=lookup)
    assert asked == [[FILE]]  # a mirror is asked for exactly that file
    assert read.timing is not None
    where = read.timing.baselines_published[TASK]
    assert where.startswith(f"{FILE}, record 1")
    assert read.tasks[0].baselines == computed.tasks[0].baselines
    # the same numbers, the gap to the best baseline included
    assert read.deterministic_json() == computed.deterministic_json()
    report = render_report(read)
    assert "Task baselines read from the registry's record" in report and FILE in report


def test_other_inputs_a_changed_record_and_no_record_find_nothing(
        computed: Submission, tmp_path: Path) -> None:
    path = _publish(tmp_path, computed)
    lookup = RegistryBaselines(tmp_path / "registry", tmp_path)
    digest = computed.baselines_sha256[TASK]
    assert lookup(TASK, MODEL, "4:token_avg", digest) is not None
    # every input is in the digest: another seed, bootstrap or item set names other inputs
    catalog = TaskCatalog.default()
    options = [SubmitOptions(limit=4, bootstrap=BOOTSTRAP),
               SubmitOptions(limit=4, bootstrap=BOOTSTRAP, seed=1),
               SubmitOptions(limit=4, bootstrap=BOOTSTRAP + 1),
               SubmitOptions(limit=5, bootstrap=BOOTSTRAP)]
    digests = {sha256_json(baselines_inputs(Session(catalog, o), MODEL, TASK, SITE))
               for o in options}
    assert len(digests) == 4 and digest in digests
    for other in digests - {digest}:
        assert lookup(TASK, MODEL, "4:token_avg", other) is None
    assert lookup(TASK, MODEL, "3:token_avg", digest) is None  # another site

    doc = json.loads(path.read_text("utf-8"))
    doc["history"][-1]["inputs_sha256"] = "0" * 64  # the latest record: other inputs
    path.write_text(json.dumps(doc), "utf-8")
    assert lookup(TASK, MODEL, "4:token_avg", digest) is None
    path.unlink()
    assert lookup(TASK, MODEL, "4:token_avg", digest) is None


def test_the_cli_reads_them_unless_told_to_compute(computed: Submission,
                                                   tmp_path: Path) -> None:
    _publish(tmp_path, computed)
    base = ["submit", str(REFERENCE), "--tasks", TASK, "--limit", "4",
            "--latency-prompts", "2", "--bootstrap", str(BOOTSTRAP), "--no-guard", "--quiet",
            "--registry", str(tmp_path / "registry")]
    for flag, expected in (([], True), (["--compute-baselines"], False)):
        out = tmp_path / f"submission{len(flag)}.json"
        report = tmp_path / f"REPORT{len(flag)}.md"
        assert main([*base, *flag, "--out", str(out), "--report", str(report)]) == 0
        result = read_submission(out)
        assert result.timing is not None
        assert (TASK in result.timing.baselines_published) is expected
        assert ("read from the registry's record" in report.read_text("utf-8")) is expected
        assert result.deterministic_json() == computed.deterministic_json()


def test_the_registry_computes_the_baselines_it_publishes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``registry evaluate`` never reads its own records back, and leaves the session's
    lookup as it found it."""
    import probebench.runs.evaluate as evaluate_module
    from probebench.runs.evaluate import evaluate_entry

    seen: list[bool] = []

    def fake_submit(*args: object, session: Session, **kwargs: object) -> None:
        seen.append(session.options.published_baselines is no_published_baselines)
        raise RuntimeError("stop here")

    lookup = RegistryBaselines(REPO / "registry", REPO)
    monkeypatch.setattr(evaluate_module, "submit", fake_submit)
    session = Session(TaskCatalog.default(),
                      SubmitOptions(progress=False, published_baselines=lookup))
    with pytest.raises(RuntimeError, match="stop here"):
        evaluate_entry("probebench/blimp-det-noun-minilm-l6-l4-v2", REPO / "registry",
                       REPO, session, store=False)
    assert seen == [True] and session.options.published_baselines is lookup
