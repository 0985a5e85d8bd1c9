"""``probebench train`` and ``probebench sweep``."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from probebench.cli.common import (
    add_bootstrap,
    add_device,
    add_model,
    add_no_cache,
    add_probe_type,
    add_quiet,
    add_seed,
    add_workspace_options,
    raw,
    runtime,
    workspace,
)
from probebench.errors import InputError
from probebench.sites import POSITIONS

if TYPE_CHECKING:
    from probebench.train.trainer import Trained


def warn_grid_edges(trained: Trained) -> None:
    """A warning on stderr for each hyper-parameter chosen at an end of its grid: the
    value, the grid, and what to do (the choice itself stands)."""
    for edge in trained.grid_edges:
        print(f"probebench: warning: {edge.describe()}; {edge.advice()}", file=sys.stderr)


def cmd_train(args: argparse.Namespace) -> int:
    from probebench.sites import Site
    from probebench.train import TrainConfig, train
    from probebench.train.artifact import authorship, check_out, write_artifact

    out = Path(args.out)
    check_out(out, force=args.force)
    catalog = workspace(args).catalog
    catalog.spec(args.task, near=(out, out.parent))  # unknown: names a forgotten --include
    config = TrainConfig(task=args.task, site=Site.parse(args.site), model=args.model,
                         probe_type=args.probe_type, method=args.method, seed=args.seed,
                         hidden=args.hidden, bootstrap=args.bootstrap, **runtime(args))
    trained = train(config, catalog=catalog, progress=not args.quiet, cache=not args.no_cache)
    created = dt.date.fromisoformat(args.created_at) if args.created_at else None
    who = authorship(trained.data.spec, author=args.author, contact=args.contact,
                     license=args.license, near=out)
    for sentence in who.guessed:
        print(f"warning: {sentence}", file=sys.stderr)
    write_artifact(trained, out, author=who.author, contact=who.contact,
                   license=who.license, created_at=created, force=args.force)
    print(trained.describe())
    print(trained.metrics_table())
    warn_grid_edges(trained)
    include = "".join(f" --include {p}" for p in getattr(args, "include", None) or [])
    print(f"wrote {out} (validated); next: probebench submit {out} --tasks {args.task}"
          f"{include}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from probebench.hashing import atomic_write_bytes
    from probebench.train.sweep import layer_sweep, write_sweep

    layers = None
    if args.layers:
        try:
            layers = [int(x) for x in args.layers.split(",") if x.strip()]
        except ValueError:
            raise InputError(f"--layers: expected comma-separated integers, found "
                             f"{args.layers!r}") from None
    sweep = layer_sweep(args.task, args.model, args.position, probe_type=args.probe_type,
                        seed=args.seed, bootstrap=args.bootstrap, layers=layers,
                        catalog=workspace(args).catalog, progress=not args.quiet,
                        **runtime(args))
    write_sweep(sweep, Path(args.out))
    table = sweep.markdown()
    if args.markdown:
        atomic_write_bytes(Path(args.markdown), table.encode("utf-8"))
    print(table, end="")
    edges = sweep.grid_edges()
    if edges:
        named = ", ".join(str(r.layer) for r in edges)
        print(f"probebench: warning: at {len(edges)} of {len(sweep.rows)} layers ({named}) "
              f"the chosen C/alpha is at an end of its grid, e.g. layer {edges[0].layer}: "
              f"{edges[0].grid_edge}; the best value on validation may lie beyond the grid, so "
              f"those layers' AUROC may understate what they hold (the table marks them "
              f"'grid edge')", file=sys.stderr)
    best = sweep.best()
    print(f"best layer on test {best.layer}: AUROC {best.auroc:.3f}; wrote {args.out}")
    chosen = sweep.chosen_on_validation()
    if chosen is not None:
        print(f"layer chosen on validation data only (lowest validation log-loss "
              f"{chosen.val_log_loss:.4f}): {chosen.layer}; choose a probe's layer by "
              "this one, not by the test AUROC")
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from probebench.artifact.meta import METHODS
    from probebench.train import DEFAULT_HIDDEN
    from probebench.train.massmean import DEFAULT_METHOD

    trn = commands.add_parser(
        "train", help="fit a probe on a registered task and write a complete artifact",
        **raw("Extract activations of the task's train, validation and test prompts "
              "(through the cache), choose the regularisation on the validation split "
              "(SentEval protocol: logistic regression over C in 0.001..10, or a "
              "one-hidden-layer MLP over alpha in 1..0.0001; lowest validation log-loss; "
              "refit on train + validation; --method mass-mean takes the difference of "
              "the class means as the direction and grids only its calibration), score "
              "the test split as submit does, and "
              "write the artifact: probe.safetensors/probe.json (native), "
              "probe.joblib/scaler.joblib (the spec's files), meta.yaml with the "
              "reported metrics and test-set hash, README.md, train.ipynb and "
              "eval.ipynb. The folder is validated before it is moved into place. "
              "Tasks without a val split hold out a hashed 20% of their train items.",
              "example:\n  probebench train --task verb_grammar --site 15:last_token "
              "--probe-type linear --out ./verb-l15"))
    trn.add_argument("--task", required=True, help="registered task id (probebench tasks list)")
    add_model(trn)
    trn.add_argument("--site", required=True, metavar="LAYER:POSITION",
                     help="where the probe reads, e.g. 15:last_token")
    add_probe_type(trn)
    trn.add_argument("--method", default=DEFAULT_METHOD, choices=METHODS,
                     help="how a linear probe is fitted: a logistic regression, or "
                          "mass-mean, the difference of the class means with a fitted "
                          "scale and bias (Marks & Tegmark 2024); meta.yaml records "
                          "mass-mean (default: %(default)s)")
    trn.add_argument("--hidden", type=int, default=DEFAULT_HIDDEN,
                     help="MLP hidden units (default: %(default)s)")
    trn.add_argument("--out", required=True, type=Path, help="artifact folder to write")
    add_seed(trn, "seed of the MLP and the bootstrap")
    add_bootstrap(trn)
    trn.add_argument("--author", default=None,
                     help="meta.yaml author (default: git config user.name, with a "
                          "warning; without one: 'unknown (give --author)')")
    trn.add_argument("--contact", default=None,
                     help="meta.yaml contact, e-mail or URL (default: git config "
                          "user.email, with a warning; without one: 'unknown (give "
                          "--contact)')")
    trn.add_argument("--license", default=None,
                     help="SPDX id, custom or closed (default: the task's data license, "
                          "with a warning)")
    trn.add_argument("--created-at", default=None, metavar="YYYY-MM-DD",
                     help="meta.yaml created_at (default: today)")
    add_device(trn)
    trn.add_argument("--force", action="store_true", help="replace a non-empty --out")
    add_no_cache(trn)
    add_quiet(trn, "no progress bars")
    add_workspace_options(trn)
    trn.set_defaults(func=cmd_train)

    swp = commands.add_parser(
        "sweep", help="the train protocol at every layer: AUROC and accuracy per layer",
        **raw("Read every layer of the model at one position (one forward pass per batch, "
              "through the cache), run probebench train's protocol per layer (grid on "
              "validation, refit, test scored as submit does) and write a JSON the "
              "leaderboard draws, plus an optional Markdown table.",
              "example:\n  probebench sweep --task verb_grammar --position last_token "
              "--out registry/sweeps/smollm2-135m/verb_grammar-last_token.json"))
    swp.add_argument("--task", required=True, help="registered task id")
    add_model(swp)
    swp.add_argument("--position", default="last_token", choices=POSITIONS,
                     help="token position (default: %(default)s)")
    add_probe_type(swp)
    swp.add_argument("--layers", default=None, metavar="L,L,...",
                     help="only these layers (default: 0 to the last)")
    add_seed(swp, "seed of the MLP and the bootstrap")
    add_bootstrap(swp)
    swp.add_argument("--out", required=True, help="sweep JSON to write")
    swp.add_argument("--markdown", default=None, help="also write the table here")
    add_device(swp)
    add_quiet(swp, "no progress bars")
    add_workspace_options(swp)
    swp.set_defaults(func=cmd_sweep)
