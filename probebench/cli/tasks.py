"""``probebench tasks``: list, show, verify and hash registered tasks; add and remove
your own; the verb-grammar set's own checks and generator."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from probebench.cli.common import add_workspace_options, workspace
from probebench.errors import InputError
from probebench.tasks.catalog import TaskCatalog

if TYPE_CHECKING:
    from probebench.tasks.spec import TaskSpec
    from probebench.tasks.verbs.checks import VerbCheckReport


def cmd_list(args: argparse.Namespace) -> int:
    catalog = workspace(args).catalog
    print(f"{'id':<38} {'format':<10} {'family':<10} {'version':>7}  title")
    for task_id in catalog.ids:
        task = catalog.spec(task_id)
        print(f"{task.id:<38} {task.format:<10} {task.family_key:<10} {task.version:>7}  "
              f"{task.title}")
    print(f"{len(catalog.ids)} tasks")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    catalog = workspace(args).catalog
    data = catalog.load(args.task)
    spec = data.spec
    print(f"{spec.id} (v{spec.version}): {spec.title}")
    from probebench.tasks.catalog import effective_license

    print(f"  format {spec.format}; family {spec.family_key}; license "
          f"{effective_license(spec)}; source: {spec.source}")
    for role, rel in spec.files.items():
        print(f"  file {role}: {rel}  sha256 {spec.files_sha256.get(rel, '?')[:16]}...")
    for label, meaning in sorted(spec.labels.items(), reverse=True):
        print(f"  label {label}: {meaning}")
    for split, items in data.splits.items():
        prompts = [p for item in items for p in item.prompts]
        labels = Counter("none" if p.label is None else str(p.label) for p in prompts)
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(labels.items()))
        print(f"  {split:<6} {len(items):>6} items {len(prompts):>6} prompts  (labels {shown})")
    for name in spec.slices:
        values = Counter(p.slices.get(name, "-") for item in data.test for p in item.prompts)
        top = ", ".join(f"{v} ({n})" for v, n in values.most_common(6))
        print(f"  slice {name}: {top}{', ...' if len(values) > 6 else ''}")
    print(f"  test_sha256 {spec.test_sha256} (verified)")
    if spec.control is not None:
        control = spec.control
        extra = f"; license {control.license}" if control.license else ""
        print(f"  control {control.file}: {len(catalog.load_control(spec.id))} "
              f"prompts, sha256 {control.sha256} (verified){extra}: {control.description}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import verify_holdouts

    catalog = workspace(args).catalog
    # sealed holdouts as `holdout verify` checks them: a tampered sealed file is drift too
    results = catalog.verify(verify_holdouts(catalog))
    for r in results:
        print(f"  {'ok   ' if r.ok else 'DRIFT'}  {r.task:<38} {r.message}")
    bad = [r for r in results if not r.ok]
    print(f"{len(results) - len(bad)} of {len(results)} tasks match their registered hashes")
    return 1 if bad else 0


def cmd_hash(args: argparse.Namespace) -> int:
    catalog = workspace(args).catalog
    unknown = set(args.tasks) - set(catalog.specs)
    if unknown:
        raise InputError(f"unknown task(s): {', '.join(sorted(unknown))}")
    for task_id in args.tasks or catalog.ids:
        files_sha256, test_sha256 = catalog.current_hashes(task_id)
        print(f"- id: {task_id}")
        print("  files_sha256:")
        for rel, sha in files_sha256.items():
            print(f"    {rel}: {sha}")
        print(f"  test_sha256: {test_sha256}")
        control = catalog.current_control_hash(task_id)
        if control is not None:
            print("  control:")
            print(f"    sha256: {control}")
    return 0


def _pairs(values: list[str] | None, what: str) -> dict[str, str]:
    out = {}
    for value in values or []:
        key, eq, rest = value.partition("=")
        if not eq or not key.strip():
            raise InputError(f"{what} {value!r}: expected NAME=VALUE")
        out[key.strip()] = rest
    return out


def _option_value(text: str) -> object:
    """An --option value: an integer when it reads as one, else the string."""
    return int(text) if text.lstrip("-").isdigit() else text


def cmd_add(args: argparse.Namespace) -> int:
    from probebench.tasks.families import get_format
    from probebench.tasks.scaffold import add_task, new_spec

    tasks_file = Path(args.to)
    if tasks_file.is_dir():
        tasks_file = tasks_file / "tasks.yaml"
    files = {role: Path(p) for role, p in _pairs(args.file, "--file").items()}
    if args.data is not None:
        roles = get_format(args.format).roles
        if len(roles) != 1:
            raise InputError(f"format {args.format} reads {len(roles)} files "
                             f"({', '.join(roles)}): give each with --file ROLE=PATH")
        files[roles[0]] = Path(args.data)
    options = {k: _option_value(v) for k, v in _pairs(args.option, "--option").items()}
    labels = {}
    for key, meaning in _pairs(args.label, "--label").items():
        if not key.lstrip("-").isdigit():
            raise InputError(f"--label {key}={meaning}: the label is an integer (1, 0)")
        labels[int(key)] = meaning
    spec = new_spec(task_id=args.id, fmt=args.format, files=files, folder=tasks_file.parent,
                    title=args.title or args.id, license=args.license, source=args.source,
                    description=args.description, options=options, labels=labels or None,
                    slices=args.slice, test_fraction=args.test_fraction, salt=args.salt)
    if args.control is not None:
        spec = _with_control(spec, args, tasks_file.parent)
    catalog = add_task(tasks_file, spec)
    data = catalog.load(spec.id)
    counts = ", ".join(f"{name} {len(items)}" for name, items in data.splits.items())
    classes = data.format.classes(data)
    kind = f"{len(classes)} classes" if classes else "binary"
    print(f"added task {spec.id} ({spec.format}, {kind}; items: {counts}) to {tasks_file}")
    print(f"  test_sha256 {spec.test_sha256}")
    if spec.control is not None:
        print(f"  control {spec.control.file}: sha256 {spec.control.sha256}")
    print(f"evaluate it privately: probebench submit ARTIFACT --tasks {spec.id} "
          f"--include {tasks_file}")
    print("propose it for the registry: docs/tasks.md, \"Proposing a task\"")
    return 0


def _with_control(spec: TaskSpec, args: argparse.Namespace, folder: Path) -> TaskSpec:
    """``spec`` with the control set of ``--control`` (hashed as it is now)."""
    from probebench.licenses import check_license
    from probebench.tasks.catalog import control_sha256, read_control
    from probebench.tasks.spec import ControlSpec

    if not args.control_description:
        raise InputError("--control needs --control-description: what the control prompts "
                         "are and where they come from")
    if args.control_license is not None:
        problem = check_license(args.control_license)
        if problem is not None:
            raise InputError(f"--control-license: {problem}")
    path = Path(args.control)
    try:
        rel = path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        raise InputError(f"{path}: the control file is outside {folder}, the folder of the "
                         "tasks file; put it beside the task's data") from None
    control = ControlSpec(file=rel, sha256="0" * 64, description=args.control_description,
                          license=args.control_license)
    pending = spec.model_copy(update={"control": control})
    sha = control_sha256(read_control(pending, folder))
    return spec.model_copy(update={"control": control.model_copy(update={"sha256": sha})})


def cmd_remove(args: argparse.Namespace) -> int:
    from probebench.tasks.scaffold import remove_task

    removed = remove_task(Path(args.from_file), args.id)
    spec = removed.spec
    print(f"removed task {spec.id} ({spec.format}, v{spec.version}) from "
          f"{removed.tasks_file}")
    folder = removed.tasks_file.parent
    if removed.unreferenced:
        print("no task in the file reads these any more (left on disk; delete them "
              "yourself if you no longer need them):")
        for rel in removed.unreferenced:
            print(f"  {folder / rel}")
    else:
        print("every data file it read is still read by another task")
    return 0


def _verb_tasks(catalog: TaskCatalog, task: str | None) -> list[TaskSpec]:
    """The verbs tasks an action reads: ``task``, or every one of the catalog."""
    verbs = catalog.with_format("verbs")
    if not verbs:
        raise InputError(f"{catalog.describe()} registers no verb-grammar task")
    if task is None:
        return verbs
    chosen = [spec for spec in verbs if spec.id == task]
    if not chosen:
        raise InputError(f"{task!r} is not a verb-grammar task of {catalog.describe()}; "
                         f"its verbs tasks: {', '.join(spec.id for spec in verbs)}")
    return chosen


def _print_verb_report(name: str, report: VerbCheckReport, mode: str) -> None:
    counts = ", ".join(f"{k} {v}" for k, v in report.counts.items())
    print(f"{name}: {counts} lines; two right answers: {mode} (options.ambiguity_check)")
    for key in ("language", "regularity", "tense", "person", "reason_code"):
        values = ", ".join(f"{k} {v}" for k, v in sorted(report.coverage.get(key, {}).items()))
        print(f"  {key:<12} {values}")
    for warning in report.warnings:
        print(f"  WARN  {warning}")
    for failure in report.failures:
        print(f"  FAIL  {failure}")
    if report.warnings:
        print(f"  {len(report.warnings)} warning(s): second right answers, listed but not "
              "failed because the task is frozen; deprecate their lines in a new version")


def cmd_check_verbs(args: argparse.Namespace) -> int:
    from probebench.tasks.families.verbs.format import ambiguity_mode, verb_files
    from probebench.tasks.verbs.checks import check_verbs

    catalog = workspace(args).catalog
    failed = 0
    for spec in _verb_tasks(catalog, args.task):
        mode = ambiguity_mode(spec)
        files = catalog.files_of(spec)
        report = check_verbs(verb_files(files), ambiguity=mode)
        _print_verb_report(spec.id, report, mode)
        failed += len(report.failures)
        for holdout in spec.holdouts:
            if "adversarial" not in holdout.files:
                continue  # a generated holdout: its per-line rules are checked on loading
            held = {**files, **{role: catalog.root_of(spec.id) / rel
                                for role, rel in holdout.files.items()}}
            report = check_verbs(verb_files(held), ambiguity=mode)
            own = tuple(str(held[role]) for role in holdout.files)
            # train/val lines were listed with the task: a holdout's report lists its own
            report.warnings = [w for w in report.warnings if w.startswith(own)]
            _print_verb_report(f"{spec.id} holdout v{holdout.version}", report, mode)
            failed += len(report.failures)
    print("all checks pass" if not failed else f"{failed} check(s) failed")
    return 0 if not failed else 1


def cmd_generate_verbs(args: argparse.Namespace) -> int:
    from probebench.tasks.families.verbs.format import ambiguity_mode
    from probebench.tasks.verbs.generator import write_holdout, write_train_val

    catalog = workspace(args).catalog
    spec = _verb_tasks(catalog, args.task)[0]
    files, single = catalog.files_of(spec), ambiguity_mode(spec) == "error"
    if args.holdout:
        path = write_holdout(files, seed=args.seed, n=args.holdout, out=args.out,
                             single_answer=single)
        print(f"wrote {args.holdout} holdout sentences of {spec.id} to {path} (seed "
              f"{args.seed}); register them under the task's holdouts with the hashes "
              "`probebench tasks hash` prints")
        return 0
    train, val = write_train_val(files, seed=args.seed, n_train=args.train, n_val=args.val,
                                 out=args.out, single_answer=single)
    counts = [len(p.read_text("utf-8").splitlines()) for p in (train, val)]
    print(f"wrote {counts[0]} train and {counts[1]} val sentences of {spec.id} to "
          f"{train.parent} (seed {args.seed})")
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tasks = commands.add_parser(
        "tasks", help="registered tasks: list, show, verify, hash; add and remove your own",
        description="The registered tasks of REPO/tasks.yaml, or of the tasks shipped with "
                    "probebench when the repository has none (see --tasks-file).")
    add_workspace_options(tasks)
    tasks_sub = tasks.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)

    def action(name: str, func: object, **kwargs: object) -> argparse.ArgumentParser:
        parser = tasks_sub.add_parser(name, **kwargs)  # type: ignore[arg-type]
        add_workspace_options(parser)
        parser.set_defaults(func=func)
        return parser

    action("list", cmd_list, help="every registered task")
    show = action("show", cmd_show, help="one task: files, labels, splits, slices")
    show.add_argument("task", help="task id")
    action("verify", cmd_verify,
           help="recompute every file and test-set hash and check every sealed holdout "
                "as `holdout verify` does (form only without the key); exit 1 on any drift")
    thash = action("hash", cmd_hash,
                   help="print the hashes a task's files and test set have now",
                   description="Compute files_sha256 and test_sha256 as they are on disk (for "
                               "registering a new task or version); registered values are "
                               "not read.")
    thash.add_argument("tasks", nargs="*", metavar="TASK", help="task ids (default: all)")
    add = tasks_sub.add_parser(
        "add", help="register your own task in a tasks file, hashes computed",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Append a task to TASKS_YAML (created when missing) with every file "
                    "hash and the canonical test-set hash computed from the files as they "
                    "are, then read it back and verify it. The data files must be inside "
                    "the tasks file's folder (paths are relative to it).",
        epilog="examples:\n"
               "  # a multi-class SentEval file (tr/va/te<TAB>label<TAB>sentence)\n"
               "  probebench tasks add my-tasks/sentence_length.txt --to my-tasks \\\n"
               "      --id my_sentence_length --format senteval --license CC-BY-4.0 \\\n"
               "      --source 'built from ...'\n"
               "  # binary, with minimal pairs grouped by an id in column 3\n"
               "  probebench tasks add my-tasks/tense.tsv --to my-tasks --id my_tense \\\n"
               "      --format senteval --option positive_class=past --option item_column=3 \\\n"
               "      --license MIT --source 'written by hand'\n"
               "  # then evaluate privately\n"
               "  probebench submit ./my-probe --tasks my_tense --include my-tasks")
    add.set_defaults(func=cmd_add)
    add.add_argument("data", nargs="?", type=Path,
                     help="the data file, for a format that reads one (senteval: data)")
    add.add_argument("--to", type=Path, required=True, metavar="TASKS_YAML",
                     help="the tasks file to add to (or its folder; created when missing)")
    add.add_argument("--id", required=True, help="the new task's id (lowercase, _ and -)")
    add.add_argument("--format", required=True,
                     help="task format: senteval, blimp, syntaxgym, verbs, or one you "
                          "registered")
    add.add_argument("--license", required=True,
                     help="the data's license: an SPDX id or expression (CC-BY-4.0, "
                          "'MIT OR Apache-2.0'), custom or closed")
    add.add_argument("--source", required=True,
                     help="provenance: where the data comes from, who made it, how")
    add.add_argument("--title", default=None, help="one line (default: the id)")
    add.add_argument("--description", default="", help="longer description")
    add.add_argument("--file", action="append", metavar="ROLE=PATH",
                     help="a file by role, for formats that read several; repeatable")
    add.add_argument("--option", action="append", metavar="NAME=VALUE",
                     help="a format option, e.g. positive_class=past or item_column=3 "
                          "(senteval); repeatable")
    add.add_argument("--label", action="append", metavar="N=MEANING",
                     help="what label N means, e.g. 1='past tense'; repeatable (default: "
                          "from the format; a multi-class task lists its classes)")
    add.add_argument("--slice", action="append", default=None,
                     help="a slice tag the prompts carry (default: class for senteval)")
    add.add_argument("--test-fraction", type=float, default=None,
                     help="for formats without a split of their own (blimp, syntaxgym): "
                          "the share of items hashed into the test split")
    add.add_argument("--salt", default=None,
                     help="salt of that hashed split (default: probebench-<id>-v1)")
    add.add_argument("--control", type=Path, default=None, metavar="PATH",
                     help="a control set in the task's format (statements: every prompt "
                          "labelled 0), on which the recall at 1%% false positives sets its "
                          "threshold; hashed into control.sha256")
    add.add_argument("--control-description", default=None, metavar="TEXT",
                     help="what the control prompts are and where they come from (needed "
                          "with --control)")
    add.add_argument("--control-license", default=None, metavar="SPDX",
                     help="the control data's license, where it differs from --license "
                          "(the task's effective license is then both, joined by AND)")
    remove = tasks_sub.add_parser(
        "remove", help="remove one of your own tasks from a tasks file",
        description="Remove task ID from TASKS_YAML: only that task's lines go (comments "
                    "and the other tasks stay as they are), the file is replaced "
                    "atomically once the rest reads back unchanged, and no data file is "
                    "deleted: the command names those no task reads any more. The tasks "
                    "shipped with probebench are never removed.")
    remove.set_defaults(func=cmd_remove)
    remove.add_argument("id", metavar="ID", help="the task to remove")
    remove.add_argument("--from", dest="from_file", type=Path, required=True,
                        metavar="TASKS_YAML",
                        help="the tasks file to remove it from (or its folder)")
    check = action("check-verbs", cmd_check_verbs,
                   help="every rule of the verb-grammar set: fields, coverage, leakage, "
                        "one right answer",
                   description="Validate the files of every verb-grammar task (and of its "
                               "hand-written holdouts): fields and value sets, expected among "
                               "the candidates, forms against the verb tables, unique ids, "
                               "coverage minimums, train/val leakage, and lines with two right "
                               "answers (a failure where the task's options.ambiguity_check is "
                               "error, as in verb_grammar_v2; a WARN line in the frozen "
                               "verb_grammar). Exit 1 on any failure, naming the line.")
    check.add_argument("--task", default=None, metavar="TASK",
                       help="check this verbs task only (default: every verbs task)")
    gen = action("generate-verbs", cmd_generate_verbs,
                 help="write the deterministic train/val sentences",
                 description="Generate a verb-grammar task's train and val files; the same "
                             "--seed gives byte-identical files. Sentences that leak into the "
                             "test set are skipped, and, where the task's "
                             "options.ambiguity_check is error, sentences with two right "
                             "answers.")
    gen.add_argument("--task", default=None, metavar="TASK",
                     help="the verbs task (default: the first registered, verb_grammar)")
    gen.add_argument("--seed", type=int, default=42, help="random seed (default: %(default)s)")
    gen.add_argument("--train", type=int, default=1600,
                     help="train sentences (default: %(default)s)")
    gen.add_argument("--val", type=int, default=400, help="val sentences (default: %(default)s)")
    gen.add_argument("--out", type=Path, default=None,
                     help="output folder (default: the registered files' folder)")
    gen.add_argument("--holdout", type=int, default=0, metavar="N",
                     help="write N fresh holdout sentences (use a new seed) instead of "
                          "train/val")
