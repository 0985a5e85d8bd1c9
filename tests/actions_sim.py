"""A small GitHub Actions runner for the tests: it runs a workflow job's ``run:`` steps
verbatim (bash -e, the step's ``env:`` with its ``${{ }}`` expressions filled from the
simulated event), from a fresh checkout of the simulated repository.

What it stands in for, and how:

- ``actions/checkout``: a clone of the upstream bare repository at the event's ref; for a
  pull request, GitHub's merge commit of the PR head into the base (``--no-ff``). The
  workflow file itself is read from that same commit, as GitHub does: a PR that edits a
  workflow runs its own edit.
- ``actions/upload-artifact`` / ``download-artifact``: a folder per artifact name.
- ``actions/setup-python``: nothing (the test's Python is used).
- Steps named ``Install ...``: package installation, which the test environment already
  has (probebench from this working tree is the trusted code under test). They are not
  skipped: they run with ``python -m pip``, ``sudo`` and ``apt-get`` replaced by shims that
  only record the call (``pip wheel`` leaves a placeholder wheel). :func:`install_lines`
  checks such a step holds nothing but installation commands, so no real command can hide
  in one.
- The GitHub CLI ``gh``: a shim that answers ``pr view --json headRefOid`` (and
  ``--json author``: the ``sim.author`` login) from the simulated PR and records
  ``pr comment`` / ``pr create`` bodies and labels added through
  ``gh api .../issues/N/labels``.
- Step and job outputs: each step gets its own ``$GITHUB_OUTPUT`` file; a step with an
  ``id`` exposes its ``key=value`` lines as ``steps.<id>.outputs.<key>``, and the job's
  ``outputs:`` are filled from them. :meth:`Simulator.should_run` decides whether a job
  runs from its ``needs`` and its ``if:`` (``needs.<job>.outputs.<key> == '<value>'``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"
#: the only commands an ``Install ...`` step may run
INSTALL_COMMANDS = re.compile(
    r"^(python -I -m pip (install|wheel) .*|sudo apt-get update -qq|sudo apt-get install .*|"
    r"sudo sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0|"
    r'git worktree add --detach "\$RUNNER_TEMP/base" "\$BASE_SHA")$')
_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")

_PYTHON_SHIM = """#!/usr/bin/env bash
# python shim: records pip calls, runs anything else with the real interpreter
if [ "$1" = "-I" ] && [ "$2" = "-m" ] && [ "$3" = "pip" ]; then shift; set -- "$@"; fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  echo "pip $*" >> "$SIM_LOG"
  if [ "$3" = "wheel" ]; then
    while [ $# -gt 0 ]; do
      if [ "$1" = "--wheel-dir" ]; then mkdir -p "$2"; : > "$2/probebench-0-py3-none-any.whl"; fi
      shift
    done
  fi
  exit 0
fi
exec "$SIM_REAL_PYTHON" "$@"
"""
_SUDO_SHIM = """#!/usr/bin/env bash
echo "sudo $*" >> "$SIM_LOG"
"""
_GH_SHIM = """#!/usr/bin/env bash
# gh shim: the simulated GitHub API
echo "gh $*" >> "$SIM_LOG"
if [ "$1 $2" = "pr view" ]; then
  case " $* " in
    *" --json author "*) cat "$SIM_STATE/pr_author_$3" ;;
    *) cat "$SIM_STATE/pr_head_$3" ;;
  esac
  exit 0
fi
if [ "$1 $2" = "pr list" ]; then
  while [ $# -gt 0 ]; do [ "$1" = "--search" ] && sha="$2"; shift; done
  for f in "$SIM_STATE"/pr_head_*; do
    if [ "$(cat "$f")" = "$sha" ]; then echo "${f##*pr_head_}"; fi
  done
  exit 0
fi
if [ "$1" = "api" ]; then
  labelled=""
  for word in "$@"; do
    case "$word" in
      repos/*/pulls/*/files) number=${word%/files}; number=${number##*/} ;;
      repos/*/issues/*/labels) labelled=${word%/labels}; labelled=${labelled##*/} ;;
      'labels[]='*) label=${word#'labels[]='} ;;
    esac
  done
  if [ -n "$labelled" ]; then
    mkdir -p "$SIM_STATE/labels"; printf '%s\n' "$label" >> "$SIM_STATE/labels/$labelled"
    exit 0
  fi
  cat "$SIM_STATE/pr_files_$number.tsv"; exit 0
fi
if [ "$1 $2" = "pr comment" ] || [ "$1 $2" = "pr create" ]; then
  kind="$2"; shift 2
  key=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --body-file) body="$2"; shift 2 ;;
      --repo|--base|--title) shift 2 ;;
      --head) key="$2"; shift 2 ;;
      *) key="$1"; shift ;;
    esac
  done
  mkdir -p "$SIM_STATE/$kind"
  cp "$body" "$SIM_STATE/$kind/$(printf '%s' "$key" | tr '/' '_').md"
  exit 0
fi
echo "gh shim: unsupported call: $*" >&2
exit 1
"""


def load_workflow(name: str) -> dict[Any, Any]:
    doc = yaml.safe_load((WORKFLOWS / name).read_text())
    assert isinstance(doc, dict)
    return doc


def install_lines(step: dict[str, Any]) -> list[str]:
    """The lines of an ``Install ...`` step that are not installation commands."""
    return [line for line in str(step["run"]).splitlines()
            if line.strip() and not INSTALL_COMMANDS.match(line.strip())]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=sim@example.org", "-c", "user.name=sim",
                           "-c", "init.defaultBranch=main", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@dataclass
class StepResult:
    name: str
    ok: bool
    output: str


@dataclass
class JobResult:
    job: str
    ok: bool
    steps: list[StepResult] = field(default_factory=list)
    workspace: Path | None = None
    #: the job's ``outputs:``, filled from its steps' ``$GITHUB_OUTPUT``
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def output(self) -> str:
        return "\n".join(f"--- {s.name} ({'ok' if s.ok else 'FAILED'})\n{s.output}"
                         for s in self.steps)


@dataclass
class Simulator:
    """One simulated GitHub: an upstream bare repository and its Actions runner."""

    root: Path
    upstream: Path
    context: dict[str, str] = field(default_factory=dict)
    #: (workflow, job, step, secret) for every run step whose environment held a
    #: secret's value
    sightings: list[tuple[str, str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bin = self.root / "shims"
        self.state = self.root / "github"
        self.artifacts = self.root / "artifacts"
        self.log = self.root / "calls.log"
        for folder in (self.bin, self.state, self.artifacts):
            folder.mkdir(parents=True, exist_ok=True)
        for name, text in (("python", _PYTHON_SHIM), ("sudo", _SUDO_SHIM), ("gh", _GH_SHIM)):
            (self.bin / name).write_text(text)
            (self.bin / name).chmod(0o755)
        self.context.setdefault("github.repository", "upstream")
        self.context.setdefault("github.server_url", self.upstream.parent.as_uri())
        self.context.setdefault("github.token", "ghs_simulated_token_never_real")
        self.context.setdefault("github.event.repository.default_branch", "main")
        # unset repository variables and secrets read as empty strings, as on GitHub
        self.context.setdefault("vars.PROBEBENCH_GPU_RUNNER", "")
        self.context.setdefault("secrets.HF_TOKEN", "")
        self.context.setdefault("secrets.PROBEBENCH_HOLDOUT_KEY", "")
        self.context.setdefault("secrets.PROBEBENCH_REGISTRY_SIGNING_KEY", "")

    def _note_secrets(self, workflow: str, job: str, step: str,
                      step_env: dict[str, str]) -> None:
        """Record which secrets' values a step's environment holds (``sightings``)."""
        for name, value in _secret_values(self.context).items():
            if any(value in v for v in step_env.values()):
                self.sightings.append((workflow, job, step, name))

    # --- the simulated GitHub state -----------------------------------------------
    def main_sha(self) -> str:
        return git(self.upstream, "rev-parse", "main")

    def comment(self, number: int) -> str:
        path = self.state / "comment" / f"{number}.md"
        return path.read_text() if path.is_file() else ""

    def labels(self, number: int) -> list[str]:
        path = self.state / "labels" / str(number)
        return path.read_text().splitlines() if path.is_file() else []

    def created_prs(self) -> dict[str, str]:
        folder = self.state / "create"
        return {p.stem: p.read_text() for p in sorted(folder.glob("*.md"))} \
            if folder.is_dir() else {}

    def open_pr(self, number: int, fork: Path, branch: str) -> None:
        """Record a pull request from ``fork``'s ``branch`` into upstream main."""
        head = git(fork, "rev-parse", branch)
        base = self.main_sha()
        (self.state / f"pr_head_{number}").write_text(head + "\n")
        (self.state / f"pr_author_{number}").write_text(
            self.context.get("sim.author", "sim-author") + "\n")
        words = {"A": "added", "M": "modified", "D": "removed", "T": "changed"}
        diff = git(fork, "diff", "--name-status", "--no-renames", "-z", f"{base}...{branch}")
        fields = [f for f in diff.split("\0") if f]
        (self.state / f"pr_files_{number}.tsv").write_text("".join(
            f"{words[st[0]]}\t{path}\t\n" for st, path in zip(fields[0::2], fields[1::2],
                                                             strict=True)))
        self.context.update({
            "github.event.pull_request.base.sha": base,
            "github.event.pull_request.head.sha": head,
            "github.event.pull_request.number": str(number),
            "github.event.pull_request.user.login": self.context.get("sim.author", "sim-author"),
            "github.event.workflow_run.head_sha": head,
            "github.event.workflow_run.id": str(number),
        })
        git(self.upstream, "fetch", "-q", str(fork), f"+{branch}:refs/pull/{number}/head")

    def merge_pr(self, number: int) -> None:
        """Merge a pull request into upstream main as GitHub's merge button does."""
        work = self.root / f"merge-{number}"
        git(self.root, "clone", "-q", str(self.upstream), str(work))
        git(work, "fetch", "-q", "origin", f"refs/pull/{number}/head")
        git(work, "merge", "--no-ff", "-q", "-m", f"Merge pull request #{number}",
            "FETCH_HEAD")
        git(work, "push", "-q", "origin", "main")
        self.context["github.sha"] = git(work, "rev-parse", "HEAD")

    def merge_branch(self, branch: str) -> None:
        work = self.root / f"merge-{branch.replace('/', '_')}"
        git(self.root, "clone", "-q", str(self.upstream), str(work))
        git(work, "merge", "--no-ff", "-q", "-m", f"Merge {branch}", f"origin/{branch}")
        git(work, "push", "-q", "origin", "main")
        self.context["github.sha"] = git(work, "rev-parse", "HEAD")

    # --- running a job ----------------------------------------------------------
    @staticmethod
    def should_run(doc: dict[Any, Any], job: str, done: dict[str, JobResult]) -> bool:
        """Whether GitHub runs ``job`` of the workflow ``doc`` after the jobs in ``done``:
        every job it needs ran and succeeded (a skipped need skips it), and its ``if:``
        holds. Only the ``needs.<job>.outputs.<key> == '<value>'`` form is understood."""
        spec = doc["jobs"][job]
        needs = spec.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        if not all(n in done and done[n].ok for n in needs):
            return False
        when = spec.get("if")
        if when is None:
            return True
        m = re.fullmatch(r"(?:\$\{\{\s*)?needs\.([\w-]+)\.outputs\.([\w-]+)\s*==\s*"
                         r"'([^']*)'(?:\s*\}\})?", str(when).strip())
        if m is None:
            raise AssertionError(f"the simulator does not understand if: {when}")
        return done[m.group(1)].outputs.get(m.group(2), "") == m.group(3)

    def _expand(self, value: str) -> str:
        def sub(m: re.Match[str]) -> str:
            key = m.group(1)
            if key not in self.context:
                raise KeyError(f"the simulator has no value for ${{{{ {key} }}}}")
            return self.context[key]
        return _EXPR.sub(sub, value)

    def _checkout(self, dest: Path, *, pull_request: int | None, ref: str | None) -> None:
        git(self.root, "clone", "-q", str(self.upstream), str(dest))
        if pull_request is not None:  # refs/pull/N/merge
            git(dest, "fetch", "-q", "origin", f"refs/pull/{pull_request}/head")
            git(dest, "checkout", "-q", "--detach",
                self.context["github.event.pull_request.base.sha"])
            git(dest, "merge", "--no-ff", "-q", "-m", "merge", "FETCH_HEAD")
        elif ref is not None:
            git(dest, "checkout", "-q", ref)

    def run_job(self, workflow: str, job: str, *, run_name: str,
                pull_request: int | None = None, ref: str | None = None,
                extra_env: dict[str, str] | None = None) -> JobResult:
        """Run ``job`` of ``workflow``; artifacts are kept per ``run_name``. As on GitHub,
        a pull request's run reads the workflow file from the PR's merge commit (which the
        PR may have edited); any other run reads it from ``ref`` (default: main)."""
        work = self.root / "runs" / run_name / job
        defn = work / "definition"
        self._checkout(defn, pull_request=pull_request, ref=None if pull_request else
                       (ref or "main"))
        doc = yaml.safe_load((defn / ".github" / "workflows" / workflow).read_text())
        spec = doc["jobs"][job]
        workspace, temp = work / "workspace", work / "temp"
        temp.mkdir(parents=True)
        workspace.mkdir(parents=True)
        store = self.artifacts / run_name
        # a runner starts with none of the test process's GitHub or probebench secrets:
        # a secret reaches a step only where the workflow's own env names it
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GITHUB_", "PROBEBENCH_COMMIT", "PROBEBENCH_HOLDOUT_KEY"))}
        env.update({
            "PATH": f"{self.bin}:{Path(sys.executable).parent}:{env.get('PATH', '')}",
            "SIM_REAL_PYTHON": sys.executable, "SIM_LOG": str(self.log),
            "SIM_STATE": str(self.state), "RUNNER_TEMP": str(temp), "CI": "true",
            "GITHUB_WORKSPACE": str(workspace), **(extra_env or {})})
        result = JobResult(job, True, workspace=workspace)
        step_outputs: dict[str, str] = {}
        for number, step in enumerate(spec["steps"]):
            name = step.get("name") or step.get("uses") or "step"
            when = step.get("if")
            if when == "failure()":
                if result.ok:
                    continue
            elif not result.ok and when != "always()":
                continue
            uses = str(step.get("uses", "")).split("@")[0]
            opts = step.get("with", {})
            try:
                if uses == "actions/checkout":
                    dest = workspace / opts["path"] if "path" in opts else workspace
                    if dest == workspace:
                        shutil.rmtree(workspace)
                    if "ref" in opts:  # an explicit ref: that branch, never a PR merge
                        self._checkout(dest, pull_request=None, ref=self._expand(opts["ref"]))
                    else:
                        self._checkout(dest, pull_request=pull_request, ref=ref)
                    out, ok = "checked out", True
                elif uses in ("actions/setup-python", "actions/configure-pages"):
                    out, ok = "nothing to do in the simulation", True
                elif uses == "actions/upload-pages-artifact":
                    ok = (workspace / opts["path"] / "index.html").is_file()
                    out = f"pages artifact {opts['path']}" + ("" if ok else " has no index")
                elif uses == "actions/upload-artifact":
                    src = workspace / opts["path"].rstrip("/")
                    dest = store / opts["name"]
                    shutil.rmtree(dest, ignore_errors=True)
                    shutil.copytree(src, dest)
                    out, ok = f"uploaded {opts['name']}", True
                elif uses == "actions/download-artifact":
                    import fnmatch

                    names = [opts["name"]] if "name" in opts else sorted(
                        p.name for p in store.glob("*") if fnmatch.fnmatch(p.name,
                                                                          opts["pattern"]))
                    assert "name" in opts or opts.get("merge-multiple") is True
                    found = [store / n for n in names if (store / n).is_dir()]
                    if not found:
                        out, ok = f"no artifact {names or opts.get('pattern')}", False
                    else:
                        for src in found:
                            shutil.copytree(src, workspace / opts["path"], dirs_exist_ok=True)
                        out, ok = f"downloaded {', '.join(p.name for p in found)}", True
                elif "run" in step:
                    output_file = temp / f"github_output_{number}"
                    output_file.touch()
                    step_env = {**env, "GITHUB_OUTPUT": str(output_file),
                                **{k: self._expand(str(v))
                                   for k, v in step.get("env", {}).items()}}
                    self._note_secrets(workflow, job, name, step_env)
                    proc = subprocess.run(["bash", "-e", "-c", str(step["run"])],
                                          cwd=workspace, env=step_env, capture_output=True,
                                          text=True, timeout=1800)
                    out, ok = proc.stdout + proc.stderr, proc.returncode == 0
                    if "id" in step:
                        for line in output_file.read_text().splitlines():
                            key, sep, value = line.partition("=")
                            if sep:
                                step_outputs[f"steps.{step['id']}.outputs.{key}"] = value
                else:
                    raise AssertionError(f"the simulator does not know {uses!r}")
            except subprocess.CalledProcessError as exc:
                out, ok = f"{exc}\n{exc.stderr}", False
            result.steps.append(StepResult(name, ok, out))
            result.ok = result.ok and ok
        for key, value in spec.get("outputs", {}).items():
            result.outputs[key] = _EXPR.sub(lambda m: step_outputs.get(m.group(1), ""),
                                            str(value))
        return result


def _secret_values(context: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in context.items() if k.startswith("secrets.") and v}


def upstream_simulator(root: Path, tracked: list[str]) -> Simulator:
    """A simulated GitHub whose main holds ``tracked`` files of this working tree
    (uncommitted edits included), as a bare upstream under ``root``."""
    seed = root / "seed"
    for rel in tracked:
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (seed / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, seed / rel)
    git(seed, "init", "-q")
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "upstream main")
    git(root, "clone", "-q", "--bare", str(seed), str(root / "upstream.git"))
    return Simulator(root, root / "upstream.git")
