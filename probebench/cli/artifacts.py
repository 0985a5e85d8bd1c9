"""``probebench validate``, ``hash`` and ``export``: the artifact commands.

``validate`` and ``submit`` take an ARTIFACT as a folder, a URL of one, or a registry id
(``org/name``, when no such folder exists here): the entry's artifact is found as
``load_probe`` finds it (``registry.mirror.entry_artifact``: from a mirror, every file
checked against the signed index) and must hash to the entry's ``artifact_sha256``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from probebench.cli.common import add_workspace_options, raw, workspace
from probebench.cli.locate import ARTIFACT_HELP, artifact_folder
from probebench.cli.mirror import add_source_options
from probebench.errors import InputError

if TYPE_CHECKING:
    from probebench.registry.mirror import EntryArtifact

#: what a registry id looks like (``org/name``); the entry's own pattern is stricter
_ENTRY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*/[A-Za-z0-9][A-Za-z0-9.\-_]*\Z")
ID_HELP = ("; or a registry id ORG/NAME (when no such folder exists here), whose artifact "
           "is read from --registry and must hash to the entry's artifact_sha256")


def looks_like_entry_id(text: str) -> bool:
    """Whether ``text`` is read as a registry id: ``org/name``, and no such path here."""
    return "://" not in text and _ENTRY_ID.match(text) is not None and not Path(text).exists()


def artifact_or_entry(text: str, args: argparse.Namespace, *, check_folder: bool = True
                      ) -> tuple[Path, EntryArtifact | None]:
    """(the folder ARTIFACT names, the registry entry it came from or None): a folder or
    URL as ``locate.artifact_folder`` reads it, or a registry id, whose artifact is
    found in ``--registry`` (``--registry-sha256``; with ``--repo`` alone, its
    ``registry/``; else the default order of ``open_registry``) as ``load_probe`` finds
    it."""
    if not looks_like_entry_id(text):
        return artifact_folder(text, check_folder=check_folder), None
    from probebench.registry.mirror import entry_artifact

    try:
        found = entry_artifact(text, args.registry_source, sha256=args.registry_sha256,
                               repo=getattr(args, "repo", None))
    except InputError as exc:
        raise type(exc)(f"{text}: no such folder here, so read as a registry id: {exc}") \
            from None
    if not getattr(args, "quiet", False):
        print(f"probebench: {text}: the artifact of the registry entry, in {found.folder} "
              f"({found.source.describe()}); it must hash to {found.entry.artifact_sha256}",
              file=sys.stderr)
    return found.folder, found


def cmd_validate(args: argparse.Namespace) -> int:
    from probebench.artifact.checks import FAIL, PASS, validate

    path, found = artifact_or_entry(args.path, args)
    shown = args.path if "://" in args.path or found is not None else path
    expected = args.sha256
    if found is not None:
        if expected is not None and expected != found.entry.artifact_sha256:
            raise InputError(f"--sha256 {expected} disagrees with the artifact_sha256 of the "
                             f"registry entry {found.entry.id} ({found.entry.artifact_sha256})")
        expected = found.entry.artifact_sha256
    ws = workspace(args)
    report = validate(path, catalog=ws.catalog, expected_sha256=expected)
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
        print(f"{shown}: {verdict}")
    return 0 if report.valid else 1


def cmd_hash(args: argparse.Namespace) -> int:
    from probebench.artifact import bundle

    path = Path(args.path)
    if not path.is_dir():
        raise InputError(f"{path}: not a folder")
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


def cmd_export(args: argparse.Namespace) -> int:
    from probebench.artifact.export import export_native
    from probebench.artifact.meta import COMPANION_FILES

    weights, files = export_native(args.probe, args.scaler, args.meta, args.out,
                                   force=args.force, allow_missing=args.allow_missing)
    layers = " -> ".join(str(n) for n in [weights.n_features, *weights.hidden_sizes, 1])
    print(f"wrote {args.out}: {', '.join(files)} ({weights.probe_type} probe, {layers})")
    missing = [n for n in COMPANION_FILES if n not in files]
    if missing:
        print(f"note: add {', '.join(missing)} before submitting; then run "
              f"`probebench validate {args.out}`")
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    val = commands.add_parser(
        "validate", help="check that an artifact folder is what it claims",
        **raw("Run every artifact check and print each as PASS, FAIL or SKIP with its "
              "reason. Nothing is unpickled with plain pickle and no model is loaded.",
              "exit status: 0 valid, 1 invalid, 2 usage error"))
    val.add_argument("path", metavar="ARTIFACT", help=ARTIFACT_HELP + ID_HELP)
    val.add_argument("--json", action="store_true", help="print the report as JSON")
    val.add_argument("--sha256", metavar="HASH",
                     help="also require this bundle hash (e.g. the registry's "
                          "artifact_sha256; a registry id requires the entry's)")
    val.add_argument("--quiet", action="store_true",
                     help="do not say which repository and tasks were used")
    add_workspace_options(val)
    add_source_options(val)
    val.set_defaults(func=cmd_validate)

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
    hsh.set_defaults(func=cmd_hash)

    exp = commands.add_parser(
        "export", help="convert your own sklearn probe to the pickle-free native form",
        **raw("Convert a trusted local scikit-learn probe (LogisticRegression or "
              "MLPClassifier, with its StandardScaler; or a Pipeline of the two, which is "
              "split) into probe.safetensors + probe.json. The files are loaded with "
              "joblib/skops as they are: run this only on probes you made.\n\n"
              "README.md, train.ipynb and eval.ipynb beside meta.yaml are copied, with every "
              "file the notebooks name that lies there (a data file they name that is "
              "missing is an error); a notebook that names probe.joblib/scaler.joblib (or "
              "the .skops pair) gets that form written from the same estimator and scaler.",
              "examples:\n  probebench export --probe probe.joblib --scaler scaler.joblib "
              "--meta meta.yaml --out my-probe/\n"
              "  probebench export --probe pipeline.joblib --meta meta.yaml --out my-probe/"))
    exp.add_argument("--probe", type=Path, required=True,
                     help="probe .joblib/.pkl/.skops: the estimator, or a Pipeline of a "
                          "StandardScaler and the estimator")
    exp.add_argument("--scaler", type=Path, default=None,
                     help="StandardScaler .joblib/.pkl/.skops (default: none, identity)")
    exp.add_argument("--meta", type=Path, required=True, help="meta.yaml (validated)")
    exp.add_argument("--out", type=Path, required=True, help="output artifact folder")
    exp.add_argument("--force", action="store_true", help="replace a non-empty --out")
    exp.add_argument("--allow-missing", action="store_true",
                     help="export even when the notebooks name data files that are not "
                          "beside meta.yaml (files the notebooks write themselves)")
    exp.set_defaults(func=cmd_export)
