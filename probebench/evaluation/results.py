"""``submission.json``: the result of re-evaluating one probe artifact.

Everything outside ``timing`` and ``run`` is a deterministic function of the artifact, the tasks,
the model, the seed and the library versions: two runs on the same machine write identical bytes
there, and other machines agree within the reproducibility contract
(``probebench.evaluation.reproducibility``; continuous numbers are stored rounded to its
decimals).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from probebench.evaluation.reproducibility import rounded

SCHEMA_VERSION = "1"

#: a continuous number as stored: rounded to the reproducibility contract's decimals
#: (``probebench.evaluation.reproducibility``), so float noise never reaches the file
Number = Annotated[float, AfterValidator(rounded)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IntervalOut(_Model):
    value: Number | None = Field(description="Point estimate on the full test set.")
    ci_low: Number | None = Field(description="2.5th percentile of the item bootstrap.")
    ci_high: Number | None = Field(description="97.5th percentile of the item bootstrap.")
    resamples: int = Field(description="Bootstrap resamples used.")
    dropped: int = Field(description="Resamples dropped because a class was absent.")


class FlaggedOut(_Model):
    value: Number | None
    ci_low: Number | None = None
    ci_high: Number | None = None
    imputed: bool = Field(description="True when the value is a stated default, not measured.")
    note: str = Field(description="How the value was obtained, or why it was imputed.")


class TransferOut(_Model):
    """Cross-model transfer to one declared target (``probebench.evaluation.transfer``):
    the probe reads the target model's activations through an affine ridge map fitted on
    a fixed neutral corpus. Results stored before ProbeScore 0.2.0 hold a ``FlaggedOut``
    (a Pearson r of logits, or the imputed 0.5) in its place."""

    target: str = Field(description="MODEL@LAYER:POSITION: the target model and its site.")
    auroc: IntervalOut | None = Field(description="AUROC of the probe on the mapped target "
                                      "activations of the test prompts, item-bootstrap CI "
                                      "(None: not measured).")
    source_auroc: Number | None = Field(description="The probe's AUROC on its own model "
                                        "over the same prompts: the ratio's denominator.")
    transfer: Number | None = Field(description="(auroc - 0.5) / (source_auroc - 0.5), "
                                    "clamped to [0, 1]; None when source_auroc <= 0.5 or "
                                    "not measured.")
    map_r2: Number | None = Field(description="R² of the map on the held-out part of the "
                                  "corpus, in the probe's standardised coordinates.")
    alpha: Number | None = Field(description="The ridge alpha chosen on the held-out part.")
    control_auroc: Number | None = Field(description="Mean AUROC through the shuffled-pair "
                                         "control maps (same alpha, shape and output "
                                         "variance; pairs permuted).")
    control_transfer: Number | None = Field(description="The ratio for control_auroc.")
    control_r2: Number | None = Field(description="Mean held-out R² of the control maps.")
    corpus_sha256: str | None = Field(description="The corpus the map was fitted on.")
    note: str = Field(description="How it was measured, or why it was not.")


class SliceOut(_Model):
    n_items: int
    accuracy: IntervalOut


class BaselineOut(_Model):
    auroc: IntervalOut | None
    accuracy: IntervalOut | None
    note: str
    scores: list[Number] | None = Field(
        default=None, description="Binary: the baseline's score of every labelled test "
                                  "prompt, in the order of the result's predictions (so the "
                                  "gap to a probe can be resampled on the same items); None "
                                  "where the baseline has no per-prompt score (SyntaxGym's "
                                  "own protocol) and on baselines stored before they were "
                                  "kept.")
    class_scores: list[list[Number]] | None = Field(
        default=None, description="Multi-class only: every class's probability under the "
                                  "baseline, per test prompt, in the task's class order.")


class BaselineGapOut(IntervalOut):
    """The probe's AUROC minus the best baseline's on the same task, model and site,
    with a paired item-bootstrap CI (``probebench.evaluation.baselines.auroc_gap``)."""

    baseline: str = Field(description="The baseline with the highest AUROC point estimate "
                          "among those with an AUROC (a multi-class task: macro AUROC).")
    baseline_auroc: Number = Field(description="That baseline's AUROC on the full test set.")


class ControlSetOut(_Model):
    """The control set a recall's threshold was set on, as the task registers it
    (``TaskSpec.control``)."""

    task_id: str = Field(description="The task whose control set it is.")
    file: str = Field(description="The control file, relative to the task's tasks.yaml.")
    sha256: str = Field(description="The registered SHA-256 of the control prompts' "
                        "canonical records (verified when the task was loaded).")
    description: str = Field(description="What the control prompts are.")


class RecallOut(IntervalOut):
    """Recall at 1% false positives (``recall_at_1pct_fpr``): the threshold is set on
    the task's control set, the recall read on its test positives; the CI resamples both
    independently (``probebench.evaluation.metrics.two_sample_bootstrap``)."""

    threshold: Number = Field(description="The k-th smallest control score, k = ceil(0.99 "
                              "x n_control): P(positive) above it is flagged.")
    control_fpr: Number = Field(description="Share of the control prompts scoring "
                                "strictly above the threshold (at most 0.01).")
    n_positives: int = Field(description="Test prompts labelled 1 that the recall reads.")
    n_control: int = Field(description="Control prompts the threshold was set on (the "
                           "first --limit of them in a limited run).")
    control: ControlSetOut


class CostOut(_Model):
    """The probe's analytical inference cost (``probebench.models.cost``): the same on
    every machine, unlike the measured latency."""

    flops_per_prompt: float = Field(description="Mean FLOPs per test prompt: the blocks up "
                                    "to the probe's layer, pooling, scaler and classifier.")
    tokens_per_prompt: Number = Field(description="Mean tokens per test prompt.")
    blocks: int = Field(description="Transformer blocks that must run.")


class SelectivityOut(_Model):
    """Hewitt and Liang (2019): the entry's architecture re-trained with ``train``'s
    protocol on the task and on a control task (same inputs, labels a fixed random
    function of word type); selectivity = accuracy - control accuracy. A degenerate
    control (``probebench.evaluation.selectivity``) reports neither control accuracy nor
    selectivity (values None) and says why."""

    accuracy: IntervalOut = Field(description="Prompt accuracy (P >= 0.5) of the re-trained "
                                  "probe on the task's test prompts.")
    control_accuracy: IntervalOut = Field(description="The same on the control labels "
                                          "(value None when the control is degenerate).")
    selectivity: IntervalOut = Field(description="accuracy - control accuracy, paired item "
                                     "bootstrap (value None when the control is "
                                     "degenerate).")
    control_positive_rate: Number = Field(description="Share of train prompts the control "
                                          "task labels 1 (matched to the task's).")
    control: str = Field(default="sentence-vote", description="Which words vote: "
                         "'sentence-vote' (every word of the prompt) or 'differing-types' "
                         "(minimal pairs: the word types where an item's prompts differ).")
    control_types: int | None = Field(default=None, description="Distinct word types the "
                                      "control's labels are a function of (train, "
                                      "validation and test prompts).")
    pairs_split: Number | None = Field(default=None, description="Share of the test items' "
                                       "(label 1, label 0) prompt pairs whose control "
                                       "labels differ; None without such pairs.")
    degenerate: bool = Field(default=False, description="The control cannot give a "
                             "selectivity worth reporting (degenerate_reason says why).")
    degenerate_reason: str | None = None
    note: str


class HoldoutOut(_Model):
    """A stored result's holdout part: the probe on the task's current sealed holdout
    generation. Kept apart from the compared part of a record, as timing is: a run
    without the key has none, and never replaces a record that has one."""

    generation: int = Field(description="The sealed generation scored (tasks' holdout "
                            "listing).")
    commitment: str = Field(description="Its public commitment, sha256(nonce || "
                            "plaintext): which items these numbers are about.")
    n_items: int
    n_labelled_prompts: int
    auroc: IntervalOut = Field(description="AUROC on the holdout, item-bootstrap CI.")
    test_auroc: Number = Field(description="The probe's AUROC on the registered test set, "
                               "from the same evaluation.")
    retention: Number | None = Field(description="(auroc - 0.5) / (test_auroc - 0.5), "
                                     "clamped to [0, 1]; None when test_auroc <= 0.5.")
    minimum_detectable_drop: Number | None = Field(
        description="AUROC points this holdout's size detects with 80% power at AUROC "
                    "0.75 (probebench.evaluation.power).")


class MarkOut(_Model):
    mark: str
    straddles: list[str] = Field(default_factory=list)


class PromptScores(_Model):
    """The probe's output on every labelled test prompt (for curves and rank bootstraps)."""

    prompt_ids: list[str]
    items: list[int] = Field(description="Item index of each prompt (0-based, test order).")
    labels: list[int] = Field(description="Binary: the label (1, 0); multi-class: the index "
                              "of the prompt's class in the task's classes.")
    probs: list[Number] = Field(description="Binary: P(positive); multi-class: P(the "
                                "prompt's class).")
    class_probs: list[list[Number]] | None = Field(
        default=None, description="Multi-class only: every class's probability, in the "
                                  "task's class order.")


class TaskResult(_Model):
    """One task's result: headline metrics with item-bootstrap CIs, shift and guard
    corrections, slices, baselines, marks, cost, selectivity and the per-prompt
    predictions (``predictions``)."""

    id: str
    version: int
    format: str
    test_sha256: str = Field(description="The registered canonical test-set hash.")
    n_items: int
    n_prompts: int
    n_labelled_prompts: int
    accuracy_name: str = Field(description="What 'accuracy' means for this format.")
    auroc: IntervalOut
    accuracy: IntervalOut
    ece: Number
    brier: Number
    fpr_at_99tpr: Number | None = Field(description="None for a multi-class task.")
    distshift_auroc: FlaggedOut
    evalaware_auroc: FlaggedOut
    transfer: dict[str, TransferOut | FlaggedOut] = Field(
        description="Target (MODEL@LAYER:POSITION) -> its TransferOut; empty when no "
                    "target is declared. Results stored before ProbeScore 0.2.0 hold "
                    "FlaggedOut values ('undeclared': the imputed 0.5, or a Pearson r).")
    slices: dict[str, dict[str, SliceOut]]
    baselines: dict[str, BaselineOut]
    baseline_gap: BaselineGapOut | None = Field(
        default=None, description="AUROC minus the best baseline's AUROC, paired item "
                                  "bootstrap (None: no baseline has an AUROC, or a result "
                                  "stored before the gap was kept).")
    beats_baselines: bool | None = Field(
        default=None, description="True when the gap's CI lies above 0 (its lower bound > "
                                  "0); None when the gap is unknown.")
    marks: dict[str, MarkOut]
    predictions: PromptScores
    cost: CostOut | None = Field(default=None, description="Analytical inference cost (None "
                                 "on results stored before ProbeScore 0.1.0).")
    selectivity: SelectivityOut | None = Field(default=None, description="Control-task "
                                               "selectivity (None when the task has no train "
                                               "split, for a multi-class task, and on older "
                                               "results).")
    recall_at_1pct_fpr: RecallOut | None = Field(
        default=None, description="Recall of the test positives at 1% false positives on "
                                  "the task's control set, with its 95% CI; None when the "
                                  "task declares no control set (and for a multi-class "
                                  "task).")
    classes: list[str] | None = Field(
        default=None, description="A multi-class task's classes, in the probe's output "
                                  "order (None for a binary task). Then auroc is the "
                                  "one-vs-rest macro AUROC, accuracy the argmax accuracy, "
                                  "ece the top-label ECE and brier the multi-class Brier "
                                  "(probebench.evaluation.metrics).")


class ProbeInfo(_Model):
    id: str
    bundle_sha256: str
    probe_type: str
    model: str
    layer: int
    position: str
    license: str


class StageTiming(_Model):
    """One stage of a submit run: its wall time and the model's work in it."""

    seconds: float = Field(description="Wall seconds, cache reads and model loading "
                                       "included, stages timed inside it excluded.")
    passes: int = Field(default=0, description="Forward passes over a prompt list that ran "
                                               "the model (cache hits are not passes).")
    tokens: int = Field(default=0, description="Tokens the model read in those passes.")
    cpu_seconds: float | None = Field(default=None, description="The process's CPU seconds "
                                      "(every thread), counted as seconds are; None on "
                                      "older submissions.")


class RegistryRef(_Model):
    """Which registry a run read (``RegistrySource.reference``)."""

    source: str = Field(description="The folder or URL given or found.")
    kind: str = Field(description="folder, leaderboard or url.")
    index_sha256: str | None = Field(description="SHA-256 of its registry.json (None: a "
                                     "source folder, which has no index).")
    signed_by: str | None = Field(description="The key id (SHA-256 of the Ed25519 public "
                                  "key) whose signature of the index was verified; None "
                                  "when it was read unsigned.")
    index_version: int | None = Field(description="The signed index's version.")
    expires: str | None = Field(description="When the signature expires (UTC).")


class Timing(_Model):
    latency_ms: dict[str, float] = Field(description="Median ms per prompt, batch size 1, "
                                         "text to probability, after warm-up, per task "
                                         "(each prompt's fastest of its repeats); a task "
                                         "whose measurement was withheld is absent.")
    latency_prompts: int = Field(description="The most test prompts a task's latency timed "
                                 "(--latency-prompts, at most N with --limit N; 0 when "
                                 "the latency stage was skipped).")
    latency_withheld: dict[str, str] = Field(
        default_factory=dict,
        description="Tasks whose latency was measured while the machine was loaded (this "
                    "process waited for a CPU, or its repeats disagreed: "
                    "probebench.evaluation.latency) and is therefore not reported or "
                    "stored: what was measured and why it was withheld.")
    latency_reused: dict[str, str] = Field(
        default_factory=dict,
        description="Tasks whose latency this run read from the disk cache (a measurement "
                    "made earlier on this machine with the same model, device, precision, "
                    "site, probe shape, timed prompts, threads and library versions) "
                    "instead of measuring it: the UTC time it was measured. Empty when "
                    "every latency was measured in this run (always with --no-cache).")
    latency_matmul_gflops: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="Per task with a latency (reported, reused or withheld): the machine's "
                    "float32 matmul rate in GFLOP/s (probebench.evaluation.latency."
                    "matmul_gflops): 'measured', read beside the latency; 'now', read in "
                    "this run (the same reading unless the latency was reused). A cached "
                    "latency is reused only while the two agree within latency."
                    "RATE_TOLERANCE.")
    latency_remeasured: dict[str, str] = Field(
        default_factory=dict,
        description="Tasks whose latency in this machine's disk cache was not reused: why "
                    "(the matmul rate moved beyond the band, or the record has no rate); "
                    "the latency was measured again in this run.")
    baselines_published: dict[str, str] = Field(
        default_factory=dict,
        description="Tasks whose baselines this run read from the registry's record for "
                    "exactly its inputs (baselines_sha256) instead of computing them: the "
                    "file and record. Empty when every baseline was computed in this run "
                    "(always with --compute-baselines and in the registry's evaluation).")
    registry: RegistryRef | None = Field(
        default=None,
        description="The registry this run read its eval-awareness guard and published "
                    "baselines from (`probebench.submit` and the command line): where, the "
                    "SHA-256 of its registry.json, and the signature that was verified "
                    "(None there: a local folder read unsigned). None when no registry was "
                    "read.")
    wall_seconds: float
    stages: dict[str, StageTiming] = Field(
        default_factory=dict,
        description="Each stage of the run (activations, distribution-shift pass, "
                    "random-init control, surprisal baseline, task baselines, "
                    "selectivity, latency, generalisation: the sibling tasks' passes and "
                    "AUROCs): its wall seconds, forward passes and tokens.")


class RunInfo(_Model):
    """When, where and with what code a result was measured (provenance). The device,
    dtype (in the model identity) and library versions are stored beside it."""

    evaluated_at: str = Field(description="UTC time the evaluation finished, ISO 8601.")
    probebench_commit: str | None = Field(description="Git commit of the probebench code "
                                          "(None for an installed wheel without one).")
    hardware: str = Field(description="CPU model and cores, or the GPU's name.")
    python: str = Field(description="Python version.")


class LimitOut(_Model):
    """Set by ``submit --limit N``: a quick look at a probe, never a registry result."""

    items: int = Field(description="Only the first N items of each task's test set were "
                       "evaluated (in the test set's order).")
    note: str = Field(description="'limited to N items per task: not for the registry'.")


class SiblingOut(_Model):
    """The probe on one sibling task (``probebench.evaluation.generalisation``): another
    registered task of its family, read at the probe's own site. Reported, never ranked."""

    version: int = Field(description="The sibling task's version.")
    test_sha256: str = Field(description="The sibling's registered canonical test-set hash "
                             "(the leaderboard shows the cell only while it is current).")
    auroc: Number | None = Field(description="AUROC of the probe on the sibling's test "
                                 "prompts (None: not measured; note says why).")
    ci: tuple[Number | None, Number | None] = Field(
        description="Its 95% item-bootstrap interval [low, high], seeded as the sibling's "
                    "own headline AUROC is.")
    n: int = Field(description="Test items evaluated (the first N with --limit).")
    note: str | None = Field(default=None, description="Why the sibling was not measured "
                             "(None: measured).")


class GeneralisationOut(_Model):
    """A submission's generalisation block: the probe, evaluated on its tasks, read on
    every other registered task of their family (the row of the family's generalisation
    matrix). Kept apart from the tasks' results: no ProbeScore axis and no ranking reads
    it."""

    family: str = Field(description="The family of the tasks trained on (a declared "
                        "`family:` of tasks.yaml; 'cross-family' when several).")
    trained_on: list[str] = Field(description="The submission's tasks of that family.")
    siblings: dict[str, SiblingOut] = Field(description="Sibling task id -> the probe on "
                                            "its test set.")


class CausalAblationOut(_Model):
    """The readout on the task's labels before and after projecting the direction out."""

    accuracy_before: Number | None = Field(description="Share of items whose readout is on "
                                           "the side of its label (above 0: label 1).")
    accuracy_after: Number | None = Field(description="The same with the direction "
                                          "projected out of the site's layer.")
    accuracy_change: Number | None = Field(description="after - before.")
    auroc_before: Number | None = Field(description="AUROC of the readout for the labels.")
    auroc_after: Number | None = Field(description="The same after the ablation.")
    auroc_change: Number | None = Field(description="auroc_after - auroc_before.")
    mean_readout_change: Number | None = Field(description="Mean change of the readout "
                                               "(readout units) under the ablation.")


class CausalOut(_Model):
    """The causal test of the probe's direction on one task (``probebench.causal``): does
    moving the residual stream along it move the model's own behaviour? Reported, never
    ranked (no ProbeScore axis reads it)."""

    applicable: bool = Field(description="False for a probe with no single direction (an "
                             "MLP) or a task without a declared readout; reason says which.")
    reason: str | None = Field(default=None, description="Why the test does not apply.")
    readout: dict[str, Any] | None = Field(default=None, description="The task's declared "
                                           "readout (kind and its strings).")
    alphas: list[Number] = Field(default_factory=list, description="The steering grid, in "
                                 "standard deviations of the activations along the "
                                 "direction.")
    seed: int = Field(default=0, description="The seed of the controls and the bootstrap.")
    effect: Number | None = Field(default=None, description="Mean over items of the "
                                  "readout's least-squares slope over the grid (readout "
                                  "units per standard deviation).")
    ci: tuple[Number | None, Number | None] | None = Field(
        default=None, description="Its 95% item-bootstrap interval.")
    wrong_sign_effect: Number | None = Field(default=None, description="The effect of the "
                                             "opposite direction.")
    curve: list[Number] = Field(default_factory=list, description="Mean readout change "
                                "from alpha = 0 at each alpha of the grid.")
    controls: list[Number] = Field(default_factory=list, description="The effects of the "
                                   "random control directions.")
    control_percentile: Number | None = Field(default=None, description="Percent of "
                                              "control effects below the probe's (ties "
                                              "count half).")
    direction_std: Number | None = Field(default=None, description="Standard deviation of "
                                         "the site's activations along the direction.")
    ablation: CausalAblationOut | None = Field(default=None, description="The readout's "
                                               "accuracy and AUROC before and after the "
                                               "direction is projected out.")
    items: dict[str, Any] = Field(default_factory=dict, description="Units read, items "
                                  "skipped (and why), the item cap.")


class Submission(_Model):
    """What ``submit`` returns and ``submission.json`` holds: the probe, the model's
    identity, the run's seed and versions, the metric definitions and one ``TaskResult``
    per task. ``to_dict()`` is the JSON document as a dict, ``to_json()`` its text, and
    ``read_submission`` reads the file back."""

    schema_version: str = SCHEMA_VERSION
    spec_version: str
    probebench_version: str
    probe: ProbeInfo
    model: dict[str, Any]
    device: str
    seed: int
    bootstrap_resamples: int
    versions: dict[str, str]
    definitions: dict[str, str]
    tasks: list[TaskResult]
    timing: Timing | None = None
    run: RunInfo | None = Field(default=None, description="Provenance: when and where.")
    limit: LimitOut | None = Field(
        default=None, description="Set when only the first N items of each task were "
                                  "evaluated (`submit --limit N`): not for the registry, "
                                  "whose evaluation and results store refuse it.")
    generalisation: GeneralisationOut | None = Field(
        default=None, description="The probe on the other tasks of its tasks' family "
                                  "(probebench.evaluation.generalisation); None when the "
                                  "family declares no siblings, with --no-generalisation "
                                  "and on older submissions. Reported, never ranked.")
    baselines_sha256: dict[str, str] = Field(
        default_factory=dict,
        description="Task -> the SHA-256 of every input its baselines depend on (the model "
                    "and its random-init copy, the test and train items, the site, seed, "
                    "bootstrap and code versions; not the device). The registry stores it "
                    "with the baselines, so that a later submit on the same inputs reads "
                    "them (timing.baselines_published). Empty on older results and in "
                    "reduced precision.")
    causal: dict[str, CausalOut] | None = Field(
        default=None, description="Task -> the causal test of the probe's direction on it "
                                  "(`submit --causal`, probebench.causal); None when not "
                                  "asked for. Reported, never ranked.")
    stages_skipped: dict[str, str] = Field(
        default_factory=dict,
        description="The stages this run left out (`submit --skip`, `--stages`, `--quick`): "
                    "stage (shift, surprisal, random-init, baselines, selectivity, latency; "
                    "generalisation in the quick profile) -> why. Their fields hold no "
                    "numbers: the shift's note says it did not run, selectivity and the gap "
                    "to the baselines are None, a skipped baseline has no AUROC, and the "
                    "latency is absent. Not for the registry, whose evaluation and results "
                    "store refuse it. Empty: every stage ran.")
    profile: str | None = Field(
        default=None, description="'quick' for `submit --quick` (test AUROC with its CI, "
                                  "ECE, per-slice accuracy and the registry's published "
                                  "baselines, nothing else); None: the stages the run "
                                  "chose (stages_skipped).")

    def registry_problem(self) -> str | None:
        """Why the registry cannot keep this submission (a ``--limit`` run, or one that
        skipped stages), or None when it can."""
        if self.limit is not None:
            return self.limit.note
        if self.stages_skipped:
            return stages_note(self.stages_skipped)
        return None

    def deterministic_json(self) -> str:
        """The JSON without the timing and run blocks (what determinism is judged on)."""
        import json

        return json.dumps(self.model_dump(mode="json", exclude={"timing", "run"}), indent=2,
                          sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """The submission as plain JSON types: ``json.loads(self.to_json())``, without
        the round trip through text."""
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """``submission.json``'s text: ``to_dict()`` with sorted keys, indent 2."""
        import json

        return json.dumps(self.to_dict(), indent=2, sort_keys=True,
                          ensure_ascii=False, allow_nan=False) + "\n"


def stages_note(skipped: dict[str, str]) -> str:
    """What a submission that skipped stages says about itself (``Submission.
    registry_problem``), e.g. "without the stages shift, latency: not for the registry"."""
    return f"without the stage{'s' if len(skipped) > 1 else ''} " \
           f"{', '.join(skipped)}: not for the registry"


def read_submission(path: str | Path) -> Submission:
    """A ``submission.json`` written by ``probebench submit`` or ``registry evaluate``.

    Raises:
        InputError: the file cannot be read, or is no submission of this version (the
            message names the file and the field).
    """
    from pydantic import ValidationError

    from probebench.errors import InputError, field_problem

    path = Path(path)

    try:
        return Submission.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    except ValidationError as exc:
        raise InputError(f"{path}: {field_problem(exc)} (not a submission.json of this "
                         "probebench version)") from None
