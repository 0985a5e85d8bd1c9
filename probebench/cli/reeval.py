"""``probebench reeval [plan|run|merge]``: audit every live entry on its holdout."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from probebench.cli.common import (
    add_bootstrap,
    add_device,
    add_holdout_key,
    add_no_cache,
    add_quiet,
    add_seed,
    add_workspace_options,
    holdout_key,
    raw,
    runtime,
    workspace,
)


def _print_changes(changes: Any, out: Path) -> int:
    for c in changes:
        old = "n/a" if c.old_auroc is None else f"{c.old_auroc:.3f}"
        held = (f"sealed gen {c.sealed_generation}" if c.sealed_generation is not None
                else f"public v{c.version}")
        print(f"  {c.action:<9} {c.entry} {c.task} {held}: {old} -> {c.new_auroc:.3f} "
              f"({c.drop_points:+.1f} points dropped)")
    for entry_id, why in sorted(changes.failures.items()):
        print(f"  SKIPPED   {entry_id}: {why}")
    print(f"wrote {out / 'DIFF.md'} ({changes.passes} forward pass(es) of a model)")
    return 1 if changes.failures else 0


def _reeval_session(args: argparse.Namespace, catalog: Any, seed: int, bootstrap: int) -> Any:
    from probebench.evaluation.session import Session, SubmitOptions

    return Session(catalog, SubmitOptions(seed=seed, bootstrap=bootstrap, **runtime(args),
                                          cache=not args.no_cache, progress=not args.quiet))


def cmd_reeval(args: argparse.Namespace) -> int:
    from probebench.runs.reeval import reeval

    ws = workspace(args, uses_registry=True)
    out = Path(args.out)
    changes = reeval(ws.registry, ws.repo, out, catalog=ws.catalog, seed=args.seed,
                     bootstrap=args.bootstrap, holdout_key=holdout_key(args),
                     session=_reeval_session(args, ws.catalog, args.seed, args.bootstrap))
    return _print_changes(changes, out)


def cmd_reeval_plan(args: argparse.Namespace) -> int:
    import os

    from probebench.hashing import atomic_write_bytes
    from probebench.runs.reeval import make_plan

    ws = workspace(args, uses_registry=True)
    plan = make_plan(ws.registry, ws.catalog, groups=args.groups, seed=args.seed,
                     bootstrap=args.bootstrap, gpu_runner=args.gpu_runner or None)
    atomic_write_bytes(Path(args.out), plan.to_json().encode("utf-8"))
    units = sum(len(g.units) for g in plan.groups)
    print(f"wrote {args.out}: {len(plan.groups)} group(s), {units} (model, task) unit(s)")
    if args.github_output:
        # the matrix of the workflow's run job, and whether there is anything to run
        with Path(os.environ["GITHUB_OUTPUT"]).open("a", encoding="utf-8") as handle:
            handle.write(f"matrix={json.dumps(plan.matrix(), separators=(',', ':'))}\n")
            handle.write(f"groups={len(plan.groups)}\n")
    return 0


def cmd_reeval_run(args: argparse.Namespace) -> int:
    from probebench.runs.reeval import read_plan, run_group, write_group_result

    ws = workspace(args, uses_registry=True)
    plan = read_plan(Path(args.plan))
    result = run_group(plan, args.group, ws.registry, ws.repo, catalog=ws.catalog,
                       holdout_key=holdout_key(args),
                       session=_reeval_session(args, ws.catalog, plan.seed, plan.bootstrap))
    path = write_group_result(Path(args.out), result)
    for entry_id, why in sorted(result.failures.items()):
        print(f"  SKIPPED   {entry_id}: {why}")
    print(f"wrote {path}: {len(result.changes)} (entry, task) pair(s), "
          f"{result.passes} forward pass(es) of a model")
    return 0


def cmd_reeval_merge(args: argparse.Namespace) -> int:
    from probebench.runs.reeval import merge, read_group_result, read_plan

    ws = workspace(args, uses_registry=True)
    plan = read_plan(Path(args.plan))
    results = [read_group_result(Path(r)) for r in args.results]
    out = Path(args.out)
    return _print_changes(merge(plan, results, ws.registry, out), out)




AUDIT_KEY = ("with it, each task's current sealed holdout generation is decrypted in memory "
             "and audited; without it, the run says so and audits the public generation 0")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ree = commands.add_parser(
        "reeval", help="audit: re-evaluate every live entry on its holdout, flag drops",
        **raw("Audit the registry: score every live entry (AUROC, item-bootstrap CI) on the "
              "newest holdout of "
              "each task (its current sealed generation with the holdout key, else the "
              "public generation 0), write a diff per entry and task, list drops over 5 points in "
              "DIFF.md and deprecate entries that drop over 10 (a YAML change for review).\n\n"
              "With no action, plans, runs and merges in this process. To spread the work "
              "(a CI matrix, a Slurm array, Ray tasks), `plan` writes the groups as JSON, "
              "`run` re-evaluates one group (one CLI call per group), and `merge` writes "
              "the same DIFF.md an unsharded run writes. Per (model, task) one forward "
              "pass serves every live probe: the cost grows with models and tasks, not "
              "with probes.",
              "examples:\n"
              "  probebench reeval --out reeval\n"
              "  probebench reeval plan --groups 3 --out plan.json\n"
              "  probebench reeval run --plan plan.json --group g2 --out reeval-g2\n"
              "  probebench reeval merge --plan plan.json reeval-g1 reeval-g2 reeval-g3 "
              "--out reeval"))
    ree.add_argument("--out", default="reeval", help="diff folder (default: %(default)s)")
    add_seed(ree)
    add_bootstrap(ree)
    add_device(ree)
    add_no_cache(ree)
    add_quiet(ree)
    add_holdout_key(ree, AUDIT_KEY)
    add_workspace_options(ree, registry=True)
    ree.set_defaults(func=cmd_reeval)
    ree_sub = ree.add_subparsers(dest="reeval_action", metavar="[ACTION]")

    plan = ree_sub.add_parser(
        "plan", help="write the re-evaluation plan (groups of (model, task) units) as JSON",
        description="Group the live entries' (model, task) units, one group per model by "
                    "default, and write the plan; each group is one `reeval run` call.")
    plan.add_argument("--out", default="plan.json", help="plan file (default: %(default)s)")
    plan.add_argument("--groups", type=int, default=None, metavar="N",
                      help="split the units into N groups, keeping each model's units "
                           "together where it can (default: one group per model)")
    plan.add_argument("--gpu-runner", default=None, metavar="LABEL",
                      help="runner label every group runs on (default: a CPU runner)")
    plan.add_argument("--github-output", action="store_true",
                      help="also append matrix=... and groups=... to $GITHUB_OUTPUT")
    add_seed(plan)
    add_bootstrap(plan)
    add_workspace_options(plan, registry=True)
    plan.set_defaults(func=cmd_reeval_plan)

    run = ree_sub.add_parser("run", help="re-evaluate one group of a plan",
                             description="Re-evaluate one group of a plan and write "
                                         "OUT/result.json for `reeval merge`.")
    run.add_argument("--plan", required=True, help="the plan `reeval plan` wrote")
    run.add_argument("--group", required=True, metavar="ID", help="group id, e.g. g1")
    run.add_argument("--out", required=True, help="folder for result.json")
    add_device(run)
    add_no_cache(run)
    add_quiet(run)
    add_holdout_key(run, AUDIT_KEY)
    add_workspace_options(run, registry=True)
    run.set_defaults(func=cmd_reeval_run)

    mrg = ree_sub.add_parser(
        "merge", help="merge every group's result into DIFF.md and the deprecations",
        description="Check that every group of the plan has exactly one result, then write "
                    "the per-entry diffs, DIFF.md, diff.json and the deprecations (edits "
                    "of registry/probes for review).")
    mrg.add_argument("results", nargs="+", metavar="RESULT",
                     help="result.json files or the folders holding them")
    mrg.add_argument("--plan", required=True, help="the plan the groups ran")
    mrg.add_argument("--out", default="reeval", help="diff folder (default: %(default)s)")
    add_quiet(mrg)
    add_workspace_options(mrg, registry=True)
    mrg.set_defaults(func=cmd_reeval_merge)
