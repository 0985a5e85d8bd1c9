"""The house has floors: every import inside probebench goes down (or sideways within a
floor), and no module imports itself back through a loop.

Imports are read from the source with ``ast``, including imports inside functions and
under ``TYPE_CHECKING``: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "probebench"

#: bottom floor first; a module may import from its own floor and every floor below
LAYERS: list[tuple[str, set[str]]] = [
    ("vocabulary and utilities", {"version", "provenance", "errors", "paths", "yamlsafe",
                                  "jsonsafe", "licenses", "hashing", "prompts", "sites",
                                  "safetext"}),
    ("sources and sandbox", {"sources", "sandbox"}),
    ("models", {"models"}),
    ("tasks", {"tasks"}),
    ("artifact", {"artifact"}),
    ("evaluation", {"evaluation"}),
    ("train", {"train"}),
    ("registry", {"registry"}),
    ("probe", {"probe"}),
    ("causal", {"causal"}),
    ("runs", {"runs"}),
    ("intake", {"intake"}),
    ("leaderboard", {"leaderboard"}),
    ("interfaces", {"cli", "schemas", "apidoc", "__init__", "__main__"}),
]


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def top_name(module: str) -> str:
    """``probebench.tasks.catalog`` -> ``tasks``; the package's own ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the probebench modules it imports (anywhere in its source)."""
    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from . import x
                    anchor = package.split(".")
                    base = ".".join(anchor[:len(anchor) - node.level + 1] + ([base] if base
                                                                             else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target.split(".")[0] != "probebench":
                    continue
                resolved = resolve(target)
                if resolved and resolved != name:
                    edges[name].add(resolved)
    return edges


def floor_of(module: str) -> int:
    top = top_name(module)
    for index, (_, members) in enumerate(LAYERS):
        if top in members:
            return index
    raise AssertionError(f"{module} belongs to no floor: add {top!r} to LAYERS in "
                         f"{Path(__file__).name}")


def test_every_module_has_a_floor() -> None:
    for module in modules():
        floor_of(module)


def test_no_import_goes_up_a_floor() -> None:
    known = modules()
    upward = []
    for source, targets in imports(known).items():
        for target in sorted(targets):
            if floor_of(target) > floor_of(source):
                upward.append(f"{source} -> {target} ({LAYERS[floor_of(source)][0]} imports "
                              f"{LAYERS[floor_of(target)][0]})")
    assert upward == [], "\n".join(upward)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    nodes = sorted(set(edges) | {t for ts in edges.values() for t in ts})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    assert cycles(imports(modules())) == []


def test_the_checks_can_fail() -> None:
    """The analysis sees a planted loop and a planted upward import."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert floor_of("probebench.sites") < floor_of("probebench.models.activations")
    with pytest.raises(AssertionError, match="belongs to no floor"):
        floor_of("probebench.newthing")
    known = modules()
    edges = imports(known)
    # real edges are found, including imports inside functions
    assert "probebench.sites" in edges["probebench.models.activations"]
    assert "probebench.tasks.catalog" in edges["probebench.cli.common"]
    assert "probebench.leaderboard.build" in edges["probebench.cli.leaderboard"]


def test_public_api() -> None:
    import probebench
    from probebench.train import TrainConfig

    assert set(probebench.__all__) >= {"validate", "submit", "train", "extract", "load_probe",
                                       "Site", "TaskCatalog"}
    for name in probebench.__all__:
        assert getattr(probebench, name) is not None, name
    # the training function, not the module of the same name; the module's names import
    assert callable(probebench.train) and probebench.TrainConfig is TrainConfig


def _imports_of(top: str) -> dict[str, set[str]]:
    known = modules()
    return {source: targets for source, targets in imports(known).items()
            if top_name(source) == top}


def test_sandbox_and_sources_stand_on_the_vocabulary_alone() -> None:
    """A stranger's code runs through ``sandbox/`` and a stranger's bytes arrive through
    ``sources/``: neither may pull in models, tasks or anything that runs them."""
    vocabulary = LAYERS[0][1]
    for top, allowed in (("sandbox", vocabulary | {"sandbox"}),
                         ("sources", vocabulary | {"sources"})):
        found = {f"{source} -> {target}" for source, targets in _imports_of(top).items()
                 for target in targets if top_name(target) not in allowed}
        assert found == set(), sorted(found)


def test_registry_imports_no_job_or_pull_request_step() -> None:
    """``registry/`` is what is stored: the jobs (``runs/``) and the pull-request steps
    (``intake/``) sit above it and read it, never the other way round."""
    found = {f"{source} -> {target}" for source, targets in _imports_of("registry").items()
             for target in targets if top_name(target) in {"runs", "intake", "leaderboard",
                                                           "cli"}}
    assert found == set(), sorted(found)


def test_submit_is_orchestration_only() -> None:
    """``evaluation/submit.py`` validates, refuses and assembles; the session, one task's
    evaluation and the measurements beside it live in their own modules."""
    path = PACKAGE / "evaluation" / "submit.py"
    lines = path.read_text("utf-8").splitlines()
    assert len(lines) <= 200, f"{path} has {len(lines)} lines; keep it orchestration only"
    classes = [node.name for node in ast.parse("\n".join(lines)).body
               if isinstance(node, ast.ClassDef)]
    assert classes == [], f"{path} defines {classes}: they belong in evaluation/session.py"


FAMILIES = PACKAGE / "tasks" / "families"


def test_one_folder_per_task_family() -> None:
    """A task family (the format of its tasks) lives in one folder, ``tasks/families/<f>/``:
    its format, the fresh-item generators of its tasks where it has any (reached through
    the format, the one registry: no second registry loaded by name), its display name, and
    its paragraph in docs/tasks.md names the folder."""
    from probebench.tasks.families import format_names, get_format
    from probebench.tasks.fresh_items import generators

    folders = {p.name for p in FAMILIES.iterdir() if (p / "__init__.py").is_file()}
    built_in = {name for name in format_names()
                if type(get_format(name)).__module__.startswith("probebench.")}
    assert folders == built_in == {"blimp", "senteval", "statements", "syntaxgym", "verbs"}
    assert not (PACKAGE / "tasks" / "fresh").exists()
    assert not (PACKAGE / "tasks" / "formats").exists()
    assert not [p for p in (PACKAGE / "tasks").rglob("*.py")
                if "import_module" in p.read_text("utf-8")], "a registry loaded by name"
    docs = (PACKAGE.parent / "docs" / "tasks.md").read_text("utf-8")
    found: dict[str, str] = {}
    for family in sorted(folders):
        fmt = get_format(family)
        assert type(fmt).__module__ == f"probebench.tasks.families.{family}.format"
        assert fmt.display_name, f"{family}: no display name"
        # a family's generators live in a fresh.py of its folder (or of a subfolder of
        # it, one per group of tasks: statements/truth/fresh.py)
        fresh_modules = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
                         for p in (FAMILIES / family).rglob("fresh.py")}
        assert bool(fresh_modules) == bool(fmt.fresh_generators()), family
        for gen in fmt.fresh_generators():
            assert gen.make.__module__ in fresh_modules, gen.task_id
            found[gen.task_id] = family
        assert f"`probebench/tasks/families/{family}/`" in docs, f"{family}: no docs paragraph"
    # every generator is a format's: the registry of formats is the registry of generators
    assert set(generators()) == set(found)
    assert found["eval_awareness"] == "senteval" and found["verb_grammar"] == "verbs"
    assert found["truth_cities"] == "statements"
