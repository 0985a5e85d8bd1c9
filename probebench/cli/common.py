"""Options shared by several commands, declared once, and the workspace they resolve to.

Every command that reads tasks, the registry or artifact paths resolves them here, once,
from the repository root: ``--repo`` (default: the enclosing git checkout, else the
current folder), ``--tasks-file`` (default: ``<repo>/tasks.yaml`` when the repository
has one, else the tasks shipped with probebench), ``--include`` (more tasks files
added to those: your own tasks, evaluated privately; only commands whose results stay
with the user have it) and ``--registry`` (default: ``<repo>/registry``). The command
says on stderr which it used.

Shared options are accepted before or after the action (``registry --registry X check``
and ``registry check --registry X`` mean the same): they are declared on both parsers
with ``default=SUPPRESS`` and their defaults are applied here.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probebench.artifact.meta import EVALUABLE_PROBE_TYPES as PROBE_TYPES
from probebench.errors import InputError
from probebench.evaluation.metrics import N_RESAMPLES
from probebench.models.builtin import DEFAULT_MODEL
from probebench.paths import enclosing_repo
from probebench.tasks.catalog import TaskCatalog

if TYPE_CHECKING:
    from probebench.sandbox.bwrap import SandboxLimits

DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class Workspace:
    """Where a command reads tasks, registry entries and artifact paths from."""

    repo: Path
    registry: Path
    tasks: TaskCatalog | None = None

    @property
    def catalog(self) -> TaskCatalog:
        assert self.tasks is not None, "this command resolved its workspace without tasks"
        return self.tasks

    def describe(self, *, registry: bool) -> str:
        text = f"repo {self.repo}"
        if self.tasks is not None:
            text += f"; tasks: {self.tasks.describe()}"
        if registry and not (self.registry / "probes").is_dir():
            return text + f"; registry {self.registry} (absent: no entries, no guards)"
        return text + (f"; registry {self.registry}" if registry else "")


def add_workspace_options(parser: argparse.ArgumentParser, *, registry: bool = False,
                          include: bool | None = None) -> None:
    """--repo and --tasks-file, --include where the command accepts it, and --registry
    (``registry=True``); see the module docstring. ``include`` defaults to ``not
    registry``: a command that reads the registry writes or ranks it, and those read
    only registered tasks, so it never lists an option it would refuse; ``submit``,
    whose results stay with the user, passes ``include=True``."""
    group = parser.add_argument_group("where tasks and entries come from")
    group.add_argument("--repo", type=Path, default=argparse.SUPPRESS,
                       help="repository root for artifact paths, tasks.yaml and registry/ "
                            "(default: the enclosing git checkout, else the current folder)")
    group.add_argument("--tasks-file", type=Path, default=argparse.SUPPRESS,
                       metavar="TASKS_YAML",
                       help="registered tasks (default: REPO/tasks.yaml if REPO is a git "
                            "checkout or given with --repo and has one, else the tasks "
                            "shipped with probebench)")
    if include if include is not None else not registry:
        group.add_argument("--include", type=Path, action="append", default=argparse.SUPPRESS,
                           metavar="TASKS_YAML",
                           help="add the tasks of another tasks file (or a folder holding a "
                                "tasks.yaml) to the registered ones, e.g. your own task made "
                                "with `probebench tasks add`; repeatable. Results on "
                                "included tasks are yours: the registry accepts only "
                                "registered tasks")
    if registry:
        group.add_argument("--registry", type=Path, default=argparse.SUPPRESS,
                           help="registry folder with probes/ and results/ "
                                "(default: REPO/registry)")


def workspace(args: argparse.Namespace, *, uses_registry: bool = False,
              uses_tasks: bool = True, private: bool = False) -> Workspace:
    """Resolve --repo, --tasks-file, --include and --registry once, and say which were
    used. ``--include`` is refused where the registry is written or ranked (only
    registered tasks reach it), unless the command is ``private`` (its results stay
    with the user, as ``submit``'s do); such commands do not declare the option
    (``add_workspace_options``), so the refusal here only guards a parser that would."""
    given_repo = getattr(args, "repo", None)
    repo = Path(given_repo or enclosing_repo()).resolve()
    tasks_file = getattr(args, "tasks_file", None)
    catalog = None
    if uses_tasks:
        if tasks_file is not None:
            catalog = TaskCatalog.from_file(Path(tasks_file))
        elif given_repo is not None or (repo / ".git").exists():
            catalog = TaskCatalog.for_repo(repo)
        else:  # a folder that is no checkout (an artifact, say) never supplies the tasks
            catalog = TaskCatalog.default()
        included = getattr(args, "include", None)
        if included and uses_registry and not private:
            raise InputError("--include adds your own tasks for private evaluation; the "
                             "registry and the leaderboard read only registered tasks "
                             "(propose yours: docs/tasks.md, \"Proposing a task\")")
        if included:
            catalog = catalog.including(included)
    given = getattr(args, "registry", None)
    registry = Path(given or repo / "registry")
    if uses_registry and given is not None and not (registry / "probes").is_dir():
        why = ("" if registry.is_dir() else
               f": the folder {registry.resolve()} does not exist")
        raise InputError(f"--registry {registry}: not a registry (no probes/ folder){why}; "
                         "leave it out to use REPO/registry")
    ws = Workspace(repo, registry, catalog)
    if not getattr(args, "quiet", False):
        print(f"probebench: {ws.describe(registry=uses_registry)}", file=sys.stderr)
    return ws


def add_evaluation_options(parser: argparse.ArgumentParser) -> None:
    """--seed, --bootstrap, --device and --quiet: the options of every command that
    re-evaluates registry entries."""
    add_seed(parser)
    add_bootstrap(parser)
    add_device(parser)
    add_quiet(parser)


def add_quiet(parser: argparse.ArgumentParser, what: str = "no progress output") -> None:
    parser.add_argument("--quiet", action="store_true", help=what)


def add_holdout_key(parser: argparse.ArgumentParser, what: str) -> None:
    """``--key FILE``: the maintainers' holdout key, for the sealed holdouts."""
    parser.add_argument("--key", type=Path, default=None, metavar="FILE",
                        help=f"the holdout key file (else $PROBEBENCH_HOLDOUT_KEY holds the "
                             f"key's text; no default path is read): {what}")


def holdout_key(args: argparse.Namespace) -> bytes | None:
    """The key from ``--key`` or the environment, or None (a contributor's clone)."""
    from probebench.tasks.sealed import read_key

    return read_key(getattr(args, "key", None), required=False)


def add_seed(parser: argparse.ArgumentParser, what: str = "bootstrap seed") -> None:
    parser.add_argument("--seed", type=int, default=0, help=f"{what} (default: %(default)s)")


def add_bootstrap(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap", type=int, default=N_RESAMPLES, metavar="N",
                        help="item-bootstrap resamples for every 95%% CI "
                             "(default: %(default)s)")


def add_device(parser: argparse.ArgumentParser, *, batching: bool = True) -> None:
    """--device, --dtype, --batch-tokens and --max-batch-size: where and how a command
    runs the model (every command that runs one has them; ``batching=False`` leaves out
    the activation batch options for commands that read logits instead)."""
    group = parser.add_argument_group(
        "model runtime",
        "float32 is the reference precision on every device; bfloat16/float16 results "
        "are accepted when they agree with it within the measured tolerances "
        "(METHODOLOGY.md, \"Precision policy\").")
    group.add_argument("--device", default="auto", choices=DEVICES,
                       help="auto picks CUDA when present (default: %(default)s)")
    group.add_argument("--dtype", default="auto", choices=DTYPES,
                       help="model precision; auto is float32 on every device "
                            "(default: %(default)s)")
    if not batching:
        return
    group.add_argument("--batch-tokens", type=positive_int, default=None, metavar="N",
                       help="padded tokens per forward batch (default: sized from the "
                            "device: 4096 on the CPU, from the GPU's memory on CUDA)")
    group.add_argument("--max-batch-size", type=positive_int, default=None, metavar="N",
                       help="prompts per forward batch (default: sized from the device: "
                            "64 on the CPU, up to 1024 on CUDA)")


def runtime(args: argparse.Namespace) -> dict[str, Any]:
    """The model-runtime options of ``add_device`` as keyword arguments."""
    return {"device": args.device, "dtype": args.dtype,
            "batch_tokens": getattr(args, "batch_tokens", None),
            "max_batch_size": getattr(args, "max_batch_size", None)}


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, found {value}")
    return value


def add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help="built-in alias, Hugging Face folder or hub id "
                             "(default: %(default)s)")


def add_no_cache(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the on-disk cache (activations, "
                             "and the model's own scores in submit)")


def add_probe_type(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--probe-type", default="linear", choices=PROBE_TYPES,
                        help="logistic regression or a one-hidden-layer MLP "
                             "(default: %(default)s)")
    # the option's name before probe_type was the one word for it; still accepted
    parser.add_argument("--kind", dest="probe_type", choices=PROBE_TYPES,
                        help=argparse.SUPPRESS)


def csv_list(values: list[str] | None) -> list[str]:
    """``--tasks a,b --tasks c`` -> ``[a, b, c]``."""
    return [v.strip() for group in values or [] for v in group.split(",") if v.strip()]


def raw(description: str, epilog: str | None = None) -> dict[str, Any]:
    """Parser keywords for a description and an epilog whose line breaks matter."""
    return {"description": description, "epilog": epilog,
            "formatter_class": argparse.RawDescriptionHelpFormatter}


def live_entry_ids(registry: Path) -> list[str]:
    """The ids of the registry's live entries (``--live``)."""
    from probebench.registry.entry import entries_with_status

    return [entry.id for _, entry in entries_with_status(registry, "live")]


def report_name(entry_id: str) -> str:
    """The file of one entry's reproducer report in a ``--live`` folder."""
    return entry_id.replace("/", "__") + ".json"


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    """--memory-limit and --time-limit (alias --wall-limit): the sandbox's limits for a
    reproducer notebook (``review`` and ``registry reproduce``)."""
    group = parser.add_argument_group(
        "the sandbox's limits",
        "over the notebook's whole process tree (a cgroup where one can be made, else "
        "per-process limits and a watchdog); a limit hit is named in the report, and one "
        "clamped to this process's own hard limits is said so")
    group.add_argument("--memory-limit", type=float, default=None, metavar="GIB",
                       help="memory in GiB, /tmp and /scratch (memory too) included "
                            "(default: 8)")
    group.add_argument("--time-limit", "--wall-limit", dest="time_limit", type=float,
                       default=None, metavar="SECONDS",
                       help="wall-clock seconds for the whole run (default: 3 x --timeout "
                            "+ 120, at most 1800)")


def sandbox_limits_of(args: argparse.Namespace) -> SandboxLimits:
    from probebench.intake.reproduce import sandbox_limits

    if args.memory_limit is not None and args.memory_limit <= 0:
        raise InputError(f"--memory-limit {args.memory_limit}: give a positive number of GiB")
    if args.time_limit is not None and args.time_limit <= 0:
        raise InputError(f"--time-limit {args.time_limit}: give a positive number of seconds")
    return sandbox_limits(args.timeout, memory_gib=args.memory_limit,
                          time_limit=args.time_limit)
