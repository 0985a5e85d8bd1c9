"""``probebench submit``: re-evaluate probe artifacts on registered tasks."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from probebench.cli.artifacts import artifact_or_entry
from probebench.cli.common import (
    add_bootstrap,
    add_device,
    add_no_cache,
    add_quiet,
    add_seed,
    add_workspace_options,
    csv_list,
    positive_int,
    raw,
    runtime,
    workspace,
)
from probebench.cli.mirror import add_source_options
from probebench.errors import InputError
from probebench.evaluation.definitions import EVALAWARE_IMPUTE, LATENCY_PROMPTS, LATENCY_WARMUP

if TYPE_CHECKING:
    from probebench.evaluation.results import Submission
    from probebench.evaluation.session import CausalMethod
    from probebench.tasks.catalog import TaskCatalog


def cmd_submit(args: argparse.Namespace) -> int:
    from probebench.evaluation.session import SubmitOptions, stages_to_skip
    from probebench.runs.submit import FROM_REGISTRY, Outputs, submit_many

    if len(args.artifacts) > 1 and args.out_dir is None:
        raise InputError("several artifacts need --out-dir (one folder per probe)")
    if args.no_guard and args.guard is not None:
        raise InputError("--guard and --no-guard contradict each other")
    samples = args.log_samples
    if samples is not None and args.out_dir is not None and Path(samples).name != str(samples):
        raise InputError(f"with --out-dir, --log-samples takes a file name (each artifact's "
                         f"records go to <dir>/<artifact>/NAME), found {samples}")
    if args.quick and args.stages is not None:
        raise InputError("--quick and --stages contradict each other (--quick runs the "
                         "activations stage only)")
    skip = stages_to_skip(None if args.stages is None else csv_list(args.stages),
                          csv_list(args.skip or []))
    ws = workspace(args, private=True)
    folders = [_checked_folder(a, args, ws.catalog) for a in args.artifacts]
    if args.out_dir is not None:
        outputs = [Outputs.in_folder(Path(args.out_dir) / f.resolve().name, samples)
                   for f in folders]
    else:
        outputs = [Outputs(Path(args.out), Path(args.report),
                           None if samples is None else Path(samples))]
    options = SubmitOptions(seed=args.seed, bootstrap=args.bootstrap, **runtime(args),
                            transfer_targets=args.transfer_to or (),
                            cache=not args.no_cache, progress=not args.quiet,
                            limit=args.limit, latency_prompts=args.latency_prompts,
                            generalisation=not args.no_generalisation, skip=skip,
                            quick=args.quick, causal=args.causal,
                            causal_method=_causal_method(args.causal))
    results = submit_many(folders, tasks=csv_list(args.tasks), options=options,
                          catalog=ws.catalog, registry=args.registry_source,
                          registry_sha256=args.registry_sha256,
                          guard=None if args.no_guard else args.guard or FROM_REGISTRY,
                          compute_baselines=args.compute_baselines, outputs=outputs,
                          repo=ws.repo)
    for result, out in zip(results, outputs, strict=True):
        files = [str(f) for f in out.files()]
        print(f"{result.probe.id}: wrote {', '.join(files[:-1])} and {files[-1]}")
        _print_summary(result)
    return 0


def _causal_method(wanted: bool) -> CausalMethod | None:
    """The causal test ``--causal`` runs (its module loads only then)."""
    if not wanted:
        return None
    from probebench.causal.effect import SUBMISSION_METHOD

    return SUBMISSION_METHOD


def _checked_folder(text: str, args: argparse.Namespace, catalog: TaskCatalog) -> Path:
    """The folder ARTIFACT names; for a registry id, its artifact found as ``load_probe``
    finds it and required, before any model work, to hash to the entry's
    ``artifact_sha256`` (an artifact that is not the registered one is refused)."""
    from probebench.artifact.checks import validate

    folder, found = artifact_or_entry(text, args, check_folder=False)
    if found is None:
        return folder
    report = validate(folder, catalog=catalog, expected_sha256=found.entry.artifact_sha256)
    if not report.valid:
        failed = "; ".join(f"{c.name}: {c.message}" for c in report.failed())
        raise InputError(f"{text}: the artifact of the registry entry ({folder}) does not "
                         f"validate, nothing was run ({failed})")
    return folder


def _print_summary(result: Submission) -> None:
    if result.limit is not None:
        print(f"  NOTE: {result.limit.note}")
    if result.stages_skipped:
        what = "the quick profile" if result.profile == "quick" else "stages skipped"
        print(f"  NOTE: {what}, not run: {', '.join(result.stages_skipped)} (not for the "
              "registry)")
    for task in result.tasks:
        auroc = task.auroc
        shown = "n/a" if auroc.value is None else (
            f"{auroc.value:.3f} [{auroc.ci_low:.3f}, {auroc.ci_high:.3f}]")
        acc = task.accuracy.value
        name = "AUROC" if task.classes is None else "macro AUROC"
        print(f"  {task.id:<32} {name} {shown}  {task.accuracy_name} "
              f"{'n/a' if acc is None else f'{acc:.3f}'}  "
              f"marks {', '.join(f'{k} {m.mark}' for k, m in sorted(task.marks.items()))}")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub = commands.add_parser(
        "submit", help="re-evaluate a probe artifact on registered tasks",
        **raw("Re-evaluate artifacts (stores nothing: `registry evaluate` records an entry's "
              "result). Validate the artifact (nothing runs on an invalid one), load the "
              "model once, "
              "extract activations through the cache, apply the probe and write "
              "submission.json and REPORT.md: AUROC with a 95% item-bootstrap CI, ECE, "
              "Brier, FPR at 99% TPR, latency, distribution-shift AUROC, "
              "eval-awareness-corrected AUROC, transfer, per-slice accuracy, baselines, the gap "
              "to the best baseline, control-task selectivity, the most confident errors "
              "with their texts and marks, then the probe on the sibling tasks of its "
              "tasks' family (--no-generalisation skips them). --log-samples also writes "
              "one JSON line per labelled test prompt.",
              "examples:\n  probebench submit ./my-probe --tasks verb_grammar,blimp_passive_1\n"
              "  probebench submit ./my-probe --tasks blimp_passive_1 --limit 20 "
              "--log-samples samples.jsonl"))
    sub.add_argument("artifacts", nargs="+", metavar="ARTIFACT",
                     help="artifact folder(s), URL(s) of one at a revision, or registry "
                          "id(s) ORG/NAME (the forms `probebench validate --help` lists: an "
                          "id's artifact comes from --registry and must hash to the entry's "
                          "artifact_sha256); several share one model load and the cache")
    sub.add_argument("--tasks", action="append", required=True, metavar="ID[,ID...]",
                     help="task ids, comma-separated or repeated (see `probebench tasks list`)")
    sub.add_argument("--out", default="submission.json",
                     help="results JSON for one artifact (default: %(default)s)")
    sub.add_argument("--report", default="REPORT.md",
                     help="Markdown report for one artifact (default: %(default)s)")
    sub.add_argument("--out-dir", type=Path, default=None,
                     help="with several artifacts: write <dir>/<artifact>/submission.json")
    sub.add_argument("--log-samples", default=None, metavar="PATH",
                     help="also write one JSON line per labelled test prompt of every task "
                          "(task, item_id, prompt_id, text, label, probability, correct, "
                          "slices), in the order of submission.json's predictions; with "
                          "--out-dir a file name, written in each artifact's folder")
    add_device(sub)
    add_seed(sub)
    add_bootstrap(sub)
    sub.add_argument("--transfer-to", action="append", metavar="MODEL@LAYER:POSITION",
                     help="a transfer target, e.g. minilm-l6@4:token_avg: the probe reads "
                          "that site of MODEL (any hidden size) through a ridge map fitted "
                          "on a fixed neutral corpus; repeat for several")
    guard = sub.add_argument_group(
        "eval-awareness guard",
        "By default each model's guard is the one the registry's guards.yaml names: the "
        "registry given with --registry (a folder, a built leaderboard or the URL of its "
        "registry.json), else $PROBEBENCH_REGISTRY, the checkout's registry/, the published "
        "leaderboard (none: the corrected AUROC is imputed as "
        f"{EVALAWARE_IMPUTE} x AUROC and flagged).")
    guard.add_argument("--guard", type=Path, default=None,
                       help="use this guard artifact for the probe's model instead")
    guard.add_argument("--no-guard", action="store_true",
                       help="use no guard: impute the eval-awareness-corrected AUROC")
    sub.add_argument("--compute-baselines", action="store_true",
                     help="compute each task's baselines (random-init control, surprisal, "
                          "length, majority) in this run even when the registry publishes "
                          "them for exactly this run's inputs (by default those are read: "
                          "timing.baselines_published names the record)")
    sub.add_argument("--limit", type=positive_int, default=None, metavar="N",
                     help="a quick look: evaluate only the first N items of each split of each "
                          "task (test, train and validation, so every stage is bounded; "
                          "marked 'not for the registry' in the output, which the "
                          "registry refuses)")
    stages = sub.add_argument_group(
        "stages",
        "Which stages run (default: all): activations (the headline's pass; always runs), "
        "shift (the distribution-shift pass), surprisal (the model's own scores for the "
        "surprisal and own-answer baselines), random-init (the random-init control's pass), "
        "baselines (computing the task baselines; the registry's published ones are still "
        "read), selectivity, latency. A stage not run leaves its fields empty with the "
        "reason, submission.json's stages_skipped names it, and the registry refuses the "
        "submission.")
    stages.add_argument("--stages", action="append", default=None, metavar="NAME[,NAME...]",
                        help="run only these stages (activations always runs)")
    stages.add_argument("--skip", action="append", default=None, metavar="NAME[,NAME...]",
                        help="leave these stages out")
    stages.add_argument("--quick", action="store_true",
                        help="the quick profile: test AUROC with its CI, ECE, per-slice "
                             "accuracy and the registry's published baselines where they "
                             "apply; no shift pass, no computed baselines, no selectivity, "
                             "no latency, no generalisation block (profile: quick)")
    sub.add_argument("--no-generalisation", action="store_true",
                     help="skip the sibling tasks: by default the probe is also read on every "
                          "other registered task of its tasks' declared family (tasks.yaml "
                          "'family:', e.g. truth), each with its AUROC and 95%% CI, in "
                          "submission.json's generalisation block and REPORT.md (reported, "
                          "never ranked; --limit bounds these passes too)")
    sub.add_argument("--causal", action="store_true",
                     help="also run the causal test of a linear probe's direction on each "
                          "task (docs/causal.md): steer the residual stream at the probe's "
                          "site by -4..4 standard deviations along the direction and read "
                          "the model's own behaviour (the task's declared readout), against "
                          "16 random control directions and the wrong sign, and project the "
                          "direction out (readout accuracy and AUROC before -> after). "
                          "Defaults: the first 200 test items (--limit N: at most N), seed "
                          "--seed. Costs about 1 + 6 x 17 + 1 = 104 passes of the blocks "
                          "above the site over those prompts per task; cached, so a rerun "
                          "on the same inputs reads it. Opt-in and not a skipped stage: "
                          "submission.json's causal block and a REPORT.md section, reported, "
                          "never ranked; an MLP probe or a task without a readout gets the "
                          "reason instead of numbers")
    sub.add_argument("--latency-prompts", type=positive_int, default=LATENCY_PROMPTS,
                     metavar="N",
                     help=f"test prompts timed one at a time for the latency, after "
                          f"{LATENCY_WARMUP} warm-up runs; the median is reported "
                          "(default: %(default)s; fewer: a quicker, noisier figure). A "
                          "measurement made on this machine for the same inputs is reused "
                          "from the cache unless --no-cache is given")
    add_no_cache(sub)
    add_quiet(sub)
    add_workspace_options(sub, include=True)
    add_source_options(sub)
    sub.set_defaults(func=cmd_submit)
