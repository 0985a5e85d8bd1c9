"""A Python API for every command: each ``probebench`` command calls a documented public
function (``probebench.cli.API``), which docs/api.md lists."""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import probebench
from probebench.cli import API, build_parser

API_PAGE = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def commands(parser: argparse.ArgumentParser, prefix: str = ""
             ) -> Iterator[tuple[str, Callable[..., Any]]]:
    """(command, the function it runs) for every command of the parser, sub-actions
    and a group that runs by itself (``reeval``) included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                func = sub.get_default("func")
                if func is not None:
                    yield f"{prefix}{name}", func
                yield from commands(sub, f"{prefix}{name} ")


def resolve(target: str) -> tuple[Any, str]:
    """(the object, its own name) of ``name`` or ``Class.member`` in ``probebench``."""
    head, _, member = target.partition(".")
    assert head in probebench.__all__, f"{head} is not in probebench.__all__"
    obj = getattr(probebench, head)
    if member:
        found = inspect.getattr_static(obj, member)
        return found, member
    return obj, obj.__name__


def test_every_command_has_a_public_function_that_it_calls() -> None:
    found = dict(commands(build_parser()))
    assert set(found) == set(API), (sorted(set(found) - set(API)),
                                    sorted(set(API) - set(found)))
    page = API_PAGE.read_text("utf-8")
    for command, func in found.items():
        obj, name = resolve(API[command])
        doc = inspect.getdoc(obj.fget if isinstance(obj, property) else obj)
        assert doc, f"{API[command]} (probebench {command}) has no docstring"
        head, _, member = API[command].partition(".")
        heading = f"#### `{head}.{member}`" if member else f"### `{head}`"
        assert heading in page, f"docs/api.md does not document {API[command]}"
        assert f"| `probebench {command}` |" in page
        source = inspect.getsource(func)
        called = (rf"\.{name}\b" if isinstance(obj, property) else rf"\b{name}\(")
        assert re.search(called, source), \
            f"{func.__name__} (probebench {command}) does not call {API[command]}"


def test_the_lazy_names_load_and_stay_lazy() -> None:
    import subprocess
    import sys

    code = ("import sys, probebench; heavy = [m for m in ('probebench.leaderboard.build', "
            "'probebench.runs.reeval', 'probebench.intake.review', 'jinja2') "
            "if m in sys.modules]; print(heavy); probebench.build_leaderboard; "
            "print('probebench.leaderboard.build' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.split("\n")[:2] == ["[]", "True"]
    for name in probebench.__all__:
        assert getattr(probebench, name) is not None


def test_a_command_without_a_function_is_caught() -> None:
    """The check itself: a command missing from the table fails the comparison."""
    found = dict(commands(build_parser()))
    assert set(found) != set(list(API)[:-1])
