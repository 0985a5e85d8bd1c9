"""``probebench registry check|check-task|confine|evaluate|publish|reproduce``: the
pull-request steps, and recording an entry's result (``review`` and ``reeval`` have
modules of their own).

What they print passes through the CLI's visible streams (``probebench.cli.main``); the
pull-request comments they write (``--markdown``) through ``safetext.visible``, so a
stranger's control or bidi character reaches neither a terminal nor a page raw."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from probebench.cli.common import (
    add_evaluation_options,
    add_holdout_key,
    add_quiet,
    add_sandbox_options,
    add_workspace_options,
    holdout_key,
    live_entry_ids,
    report_name,
    runtime,
    sandbox_limits_of,
    workspace,
)
from probebench.errors import InputError
from probebench.safetext import visible


def cmd_check(args: argparse.Namespace) -> int:
    from probebench.intake.check import check_registry

    included = getattr(args, "include", None)
    if included and args.changed:
        raise InputError("--include with --changed: a pull request is checked against the "
                         "registered tasks only; leave --include out (or --changed, to "
                         "check entries against your own tasks locally)")
    # --include only widens what this local check accepts: nothing is written or ranked
    ws = workspace(args, uses_registry=True, private=bool(included))
    results = check_registry(ws.registry, ws.repo, catalog=ws.catalog,
                             changed_since=args.base if args.changed else None,
                             author=args.author)
    if args.changed and not results:
        print(f"no entry changed since {args.base}")
        return 0
    for r in results:
        mark = "ok  " if r.ok else "FAIL"
        print(f"  {mark}  {r.entry_id or r.path}  {'; '.join(r.notes)}")
        for problem in r.problems:
            print(f"        {problem}")
    bad = [r for r in results if not r.ok]
    summary = f"{len(results) - len(bad)} of {len(results)} entries pass"
    print(summary + (" (with the --include tasks: the registry itself accepts only "
                     "registered tasks)" if included else ""))
    if args.markdown and bad:
        from probebench.hashing import atomic_write_bytes
        from probebench.intake.comment import capped, code_block

        lines = [f"{'ok  ' if r.ok else 'FAIL'}  {r.entry_id or r.path}" for r in results]
        lines += [f"      {p}" for r in results for p in r.problems]
        text = capped(f"## probebench: the entry check failed\n\n{code_block(lines)}\n\n"
                      f"{summary}. Fix the entry and push again; `probebench registry check "
                      "--changed --base origin/main --author YOUR_LOGIN` shows the same locally.\n")
        atomic_write_bytes(Path(args.markdown), visible(text, lines=True).encode("utf-8"))
    return 1 if bad else 0


def cmd_confine(args: argparse.Namespace) -> int:
    from probebench.hashing import atomic_write_bytes
    from probebench.intake.confine import (
        base_orgs,
        changes,
        confinement_problems,
        git_toplevel,
        ownership_problems,
        pr_kind,
        proposed_task,
        published_artifacts,
        read_changes_file,
        republished_problems,
        shown,
        submitted_entry,
        tree_orgs,
    )

    ws = workspace(args, uses_tasks=False)  # plain git: reads nothing the PR could change
    if args.changes_file:
        found = read_changes_file(Path(args.changes_file))
        published: dict[str, str] = {}  # no git here: `registry check --changed` applies it
        orgs = tree_orgs(ws.repo)  # --repo is the default branch's checkout (comment.yml)
    else:
        top = git_toplevel(ws.repo)
        found = changes(top, args.base, args.head)
        published = published_artifacts(top, args.base, args.head)
        orgs = base_orgs(top, args.base, args.head)
    kind = pr_kind(found)
    problems = (confinement_problems(found) + republished_problems(found, published)
                + ownership_problems(found, orgs, args.author))
    for change in found:
        print(f"  {change.status}  {shown(change.path)}")
    for problem in problems:
        print(f"  REFUSED  {problem}")
    entry = submitted_entry(found) if not problems else None
    task = proposed_task(found) if not problems else None
    if entry is not None:
        print(f"confined to one entry and its artifact: {entry}")
        if args.entry_file:
            atomic_write_bytes(Path(args.entry_file), f"{entry}\n".encode())
    elif task is not None:
        print(f"confined to one task proposal: tasks/proposed/{task}/ (checked by `probebench "
              "registry check-task`, then reviewed by a maintainer)")
    else:
        what = "task proposal" if kind == "task" else "probe pull request"
        print(f"{len(problems)} problem(s): the {what} is refused")
        if args.markdown:
            from probebench.intake.comment import capped, code_block

            rule = (
                "A task proposal adds one folder `tasks/proposed/<task id>/`: its "
                "`tasks.yaml` (the one task), its data under `data/<task id>/` and "
                "optionally `README.md` and `training/`; it changes, deletes, moves and "
                "touches nothing else (registered tasks are immutable)." if kind == "task" else
                "A probe pull request adds or updates one entry "
                "`registry/probes/<org>/<name>.yaml` and regular files in one folder "
                "`registry/artifacts/<folder>/` that no entry on the base branch "
                "references (a published artifact never changes); it deletes, moves and "
                "touches nothing else.")
            text = capped(
                f"## probebench: {what} refused\n\n{rule} A pull request proposes a probe "
                "or a task, never both."
                f"\n\n{code_block(problems)}\n")
            atomic_write_bytes(Path(args.markdown), visible(text, lines=True).encode("utf-8"))
    if not problems and args.github_output:
        # a step output for the workflow's routing (appended, as GITHUB_OUTPUT wants)
        with Path(args.github_output).open("a", encoding="utf-8") as handle:
            handle.write(f"kind={kind}\n")
    return 1 if problems else 0


def cmd_check_task(args: argparse.Namespace) -> int:
    from probebench.hashing import atomic_write_bytes
    from probebench.intake.confine import (
        changes,
        confinement_problems,
        git_toplevel,
        pr_kind,
        proposed_task,
    )
    from probebench.intake.proposal import check_proposal

    # the registered tasks only (--include refused): a proposal's id must be new
    ws = workspace(args, uses_registry=True)
    if (args.folder is None) == (not args.changed):
        raise InputError("give the proposal's folder (tasks/proposed/<task id>), or --changed "
                         "to find it from git")
    if args.changed:
        top = git_toplevel(ws.repo)
        found = changes(top, args.base, "HEAD")
        task = proposed_task(found)
        if task is None:
            why = ("; ".join(confinement_problems(found)) if pr_kind(found) == "task"
                   else "the pull request proposes no task (nothing under tasks/proposed/)")
            raise InputError(f"--changed: not one confined task proposal since {args.base}: "
                             f"{why} (see `probebench registry confine`)")
        folder, label = top / "tasks" / "proposed" / task, f"tasks/proposed/{task}"
    else:
        folder, label = Path(args.folder), None
    report = check_proposal(folder, catalog=ws.catalog, label=label)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.text(), end="")
    if args.markdown:
        atomic_write_bytes(Path(args.markdown),
                           visible(report.markdown(), lines=True).encode("utf-8"))
    return 0 if report.passed else 1


def cmd_evaluate(args: argparse.Namespace) -> int:
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.hashing import atomic_write_bytes
    from probebench.leaderboard.columns import moves_the_model
    from probebench.runs.evaluate import evaluate_entry

    ws = workspace(args, uses_registry=True)
    if args.submission and len(args.entries) != 1:
        raise InputError("--submission writes one entry's submission: give one ENTRY_ID")
    session = Session(ws.catalog, SubmitOptions(seed=args.seed, bootstrap=args.bootstrap,
                                                **runtime(args), progress=not args.quiet,
                                                causal=args.causal))
    status = 0
    key = holdout_key(args)
    for entry_id in args.entries:
        done = evaluate_entry(entry_id, ws.registry, ws.repo, session, store=not args.no_store,
                              allow_dirty=args.allow_dirty, holdout_key=key)
        if args.submission:
            atomic_write_bytes(Path(args.submission), done.submission.to_json().encode())
        print(f"{entry_id}: {len(done.changed)} result file(s) updated"
              + ("" if done.changed or args.no_store else " (same results as stored)"))
        for task_id, held in sorted(done.holdouts.items()):
            print(f"  sealed holdout {task_id} gen {held.generation}: AUROC "
                  f"{held.auroc.value:.3f} [{held.auroc.ci_low:.3f}, {held.auroc.ci_high:.3f}]"
                  f", retention {_fmt(held.retention)}")
        for task_id in done.sealed_unscored:
            print(f"  NOT STORED {task_id}: its sealed holdout needs the key")
        for task_id, causal in sorted((done.submission.causal or {}).items()):
            print(f"  causal test {task_id}: moves the model: {moves_the_model(causal).text}")
        for problem in done.precision:
            print(f"  PRECISION {problem}")
            status = 1
    return status


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _add_allow_dirty(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-dirty", action="store_true",
                        help="store results even though probebench runs from a working tree "
                             "with uncommitted changes (its commit ends in +dirty; refused "
                             "by default): for local evaluations, marked on the leaderboard")


def cmd_publish(args: argparse.Namespace) -> int:
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.runs.publish import publish_pending

    ws = workspace(args, uses_registry=True)
    session = Session(ws.catalog, SubmitOptions(seed=args.seed, bootstrap=args.bootstrap,
                                                **runtime(args), progress=not args.quiet))
    report = publish_pending(ws.registry, ws.repo, session, allow_dirty=args.allow_dirty,
                             holdout_key=holdout_key(args))
    for entry_id in report.published:
        print(f"  live     {entry_id}")
    for entry_id, why in report.failed.items():
        print(f"  FAILED   {entry_id}: {why} (stays pending_review)")
    for path in report.changed:
        print(f"  changed  {path.resolve().relative_to(ws.repo)}")
    if not report.published and not report.failed:
        print("no entry is pending review")
    return 1 if report.failed else 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from probebench.errors import ProbebenchError
    from probebench.hashing import atomic_write_bytes
    from probebench.intake.reproduce import ReproducerRun, reproduce_entry
    from probebench.registry.entry import entry_path

    ws = workspace(args, uses_registry=True, uses_tasks=False)
    if (args.entry is None) == (not args.live):
        raise InputError("give one ENTRY_ID, or --live for every live entry")
    limits = sandbox_limits_of(args)
    ids = [args.entry] if args.entry else live_entry_ids(ws.registry)
    for entry_id in ids:  # a malformed id is refused before any report is written
        entry_path(ws.registry, entry_id)
    ok = True
    for entry_id in ids:
        try:
            run = reproduce_entry(entry_id, ws.registry, ws.repo, timeout=args.timeout,
                                  limits=limits)
        except ProbebenchError as exc:  # still a report: the judge says why nothing ran
            run = ReproducerRun(entry=entry_id, notebook="(not found)", ran=False,
                                error=f"not run: {exc}", metrics={}, problems=[])
        out = Path(args.out) / report_name(entry_id) if args.live else Path(args.out)
        atomic_write_bytes(out, run.to_json().encode("utf-8"))
        state = "ran" if run.ran else f"failed: {run.error}"
        print(f"{entry_id}: {run.notebook} {state}; "
              f"{sum(len(m) for m in run.metrics.values())} metric(s) printed; wrote {out}")
        for problem in run.problems:
            print(f"  problem  {problem}")
        if run.sandbox:
            print(f"  sandbox  {run.sandbox}")
        ok = ok and run.ran and bool(run.metrics) and not run.problems
    return 0 if ok else 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from probebench.intake.reproduce import NOTEBOOK_TIMEOUT

    reg = commands.add_parser("registry", help="registry entries: list, show, check, confine, "
                              "evaluate, publish, reproduce; task proposals: check-task")
    add_workspace_options(reg, registry=True)
    reg_sub = reg.add_subparsers(dest="registry_command", metavar="ACTION", required=True)
    from probebench.cli import mirror

    mirror.register(reg_sub)

    rcheck = reg_sub.add_parser(
        "check", help="schema, unique ids, file names, artifacts and their hashes",
        description="Check registry entries: schema, unique ids, file name = id, license, "
                    "tasks registered, artifact resolvable (a registry/artifacts folder, or "
                    "hf://, https://huggingface.co/ or https://github.com/ at a 40-hex "
                    "commit) "
                    "and valid with a bundle hash equal to artifact_sha256.")
    rcheck.add_argument("--changed", action="store_true",
                        help="only entries added or modified since --base (git), with the "
                             "pull-request rules: status pending_review, and no artifact "
                             "folder changed but the entry's own")
    rcheck.add_argument("--base", default="origin/main", help="git base for --changed")
    rcheck.add_argument("--author", default=None, metavar="LOGIN",
                        help="with --changed (required there: without it every changed "
                             "entry is refused): the pull request's author, its GitHub "
                             "login, who must own the entry's org in registry/owners.yaml "
                             "on the base branch (an org with no entries there is new: "
                             "open to its first submitter)")
    rcheck.add_argument("--markdown", default=None, metavar="FILE",
                        help="when an entry fails, write the PR comment (escaped) here")
    add_workspace_options(rcheck, registry=True, include=True)
    rcheck.set_defaults(func=cmd_check)

    rconf = reg_sub.add_parser(
        "confine", help="refuse a PR that is not one entry and its artifact, or one task "
                        "proposal",
        description="List the paths changed since the merge base of --base and --head "
                    "(renames as delete + add) and classify the pull request: a task "
                    "proposal when it touches tasks/proposed/, else a probe pull request. A "
                    "probe pull request is refused unless it is one added or modified entry "
                    "registry/probes/<org>/<name>.yaml and files in at most one folder "
                    "registry/artifacts/<folder>/; a task proposal unless it only adds "
                    "regular files to one folder tasks/proposed/<task id>/ (within the size "
                    "limits). A probe pull request's --author must own the entry's org "
                    "(registry/owners.yaml on the base branch). Plain git: nothing of the "
                    "pull request is loaded. Exit 0 when confined.")
    rconf.add_argument("--base", default="origin/main", help="base branch or commit")
    rconf.add_argument("--head", default="HEAD", help="head commit (default: %(default)s)")
    rconf.add_argument("--entry-file", default=None, metavar="FILE",
                       help="write the submitted entry's id here when the PR is confined")
    rconf.add_argument("--markdown", default=None, metavar="FILE",
                       help="when refused, write the PR comment (escaped) here")
    add_quiet(rconf, "no workspace line on stderr")
    rconf.add_argument("--changes-file", default=None, metavar="FILE",
                       help="judge these changes instead of git's: STATUS<TAB>PATH"
                            "[<TAB>PREVIOUS] lines, STATUS a git letter or a GitHub API file "
                            "status (comment.yml feeds it the PR's file list)")
    rconf.add_argument("--author", default=None, metavar="LOGIN",
                       help="the pull request's author, its GitHub login (required for a "
                            "probe pull request: without it the entry is refused): it must "
                            "own the entry's org in registry/owners.yaml on the base branch "
                            "(with --changes-file: in the --repo checkout); an org with no "
                            "entries there is new, open to its first submitter")
    rconf.add_argument("--github-output", default=None, metavar="FILE",
                       help="when confined, append kind=probe or kind=task to FILE (a "
                            "workflow step's $GITHUB_OUTPUT: it routes the pull request to "
                            "the probe jobs or the task-proposal job)")
    add_workspace_options(rconf, registry=True)
    rconf.set_defaults(func=cmd_confine)

    rtask = reg_sub.add_parser(
        "check-task", help="the checks of a task proposal (tasks/proposed/<task id>/)",
        description="Check a task proposal's folder tasks/proposed/<task id>/: its files "
                    "(regular, in the layout, within the size limits), tasks.yaml holding "
                    "one TaskSpec of a new task id, provenance (source) and license, every hash "
                    "recomputed, personal data in every prompt, prompts shared between "
                    "splits, and leakage of test prompts into the author's declared training "
                    "data (training/). Failures name the file and line. Exit 0 when every "
                    "check passes; a maintainer still reviews the proposal.")
    rtask.add_argument("folder", nargs="?", metavar="FOLDER",
                       help="the proposal's folder, e.g. tasks/proposed/my_task")
    rtask.add_argument("--changed", action="store_true",
                       help="find the folder from git: the one task proposal added since "
                            "--base (refused unless the changes are confined to it)")
    rtask.add_argument("--base", default="origin/main", help="git base for --changed")
    rtask.add_argument("--json", action="store_true", help="print JSON instead of text")
    rtask.add_argument("--markdown", default=None, metavar="FILE",
                       help="also write the PR comment (escaped) here, passed or not")
    add_quiet(rtask, "no workspace line on stderr")
    add_workspace_options(rtask, registry=True)
    rtask.set_defaults(func=cmd_check_task)

    reval = reg_sub.add_parser("evaluate",
                               help="record: re-evaluate entries and store their results",
                               description="Record: re-evaluate entries on their declared tasks "
                                           "and append the results to registry/results (history "
                                           "is kept; identical results add nothing). With the "
                                           "holdout key, each task's current sealed holdout is "
                                           "scored too (in memory) and stored apart; without "
                                           "it, a task that has one is re-evaluated but not "
                                           "stored, so a keyless run never replaces a keyed "
                                           "one.")
    reval.add_argument("entries", nargs="+", metavar="ENTRY_ID")
    reval.add_argument("--submission", default=None, metavar="FILE",
                       help="also write the submission.json of the (one) entry here")
    reval.add_argument("--no-store", action="store_true",
                       help="re-evaluate only; record nothing in registry/results")
    reval.add_argument("--causal", action="store_true",
                       help="also run the causal test of the probe's direction on each task "
                            "(docs/causal.md) and store it beside the results "
                            "(_causal.json); reported on the leaderboard, never ranked")
    _add_allow_dirty(reval)
    add_holdout_key(reval, "score the tasks' current sealed holdouts and store them")
    add_evaluation_options(reval)
    add_workspace_options(reval, registry=True)
    reval.set_defaults(func=cmd_evaluate)

    rpub = reg_sub.add_parser(
        "publish", help="after merge: record pending entries' results, make them live",
        description="Record every entry whose status is pending_review (a merged pull "
                    "request), append its results to registry/results and set its status "
                    "to live (only that line of the YAML changes). An entry whose "
                    "evaluation fails stays pending and the command exits 1. Run by the "
                    "publish workflow on push to main, which opens a pull request with the "
                    "changes.")
    _add_allow_dirty(rpub)
    add_holdout_key(rpub, "score the tasks' current sealed holdouts; an entry on a task "
                          "with one stays pending without it")
    add_evaluation_options(rpub)
    add_workspace_options(rpub, registry=True)
    rpub.set_defaults(func=cmd_publish)

    rrep = reg_sub.add_parser(
        "reproduce", help="run an entry's reproducer notebook in the sandbox",
        description="Run the entry's reproducer notebook in the bubblewrap sandbox (no "
                    "network, no environment, no files outside a scratch copy of the "
                    "artifact; memory, processes, /tmp, /scratch and wall clock limited over "
                    "the whole process tree, each named when hit) and write what it printed on "
                    "PROBEBENCH_METRICS lines as JSON: the only output, judged later by "
                    "`probebench review --reproduced FILE`. Refuses to run anything when "
                    "bwrap is missing. Exit 0 when the notebook ran and printed metrics.")
    rrep.add_argument("entry", metavar="ENTRY_ID", nargs="?")
    rrep.add_argument("--live", action="store_true",
                      help="every live entry; --out is then a folder with one "
                           "<org>__<name>.json per entry")
    rrep.add_argument("--out", default="reproduced.json",
                      help="where to write the report (default: %(default)s)")
    rrep.add_argument("--timeout", type=int, default=NOTEBOOK_TIMEOUT,
                      help="seconds per notebook cell (default: %(default)s)")
    add_sandbox_options(rrep)
    add_workspace_options(rrep, registry=True)
    rrep.set_defaults(func=cmd_reproduce)
