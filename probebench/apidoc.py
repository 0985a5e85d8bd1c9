"""``docs/api.md``: the API page, generated from the docstrings of ``probebench.__all__``.

The page is rendered from the objects themselves (signatures, docstrings, the
``#:`` comments of dataclass fields, pydantic field descriptions), so it cannot drift
from the code: ``python -m probebench.apidoc docs/api.md`` rewrites it, and a test fails
when the committed page is stale or a public name has no docstring.

Docstrings are written for both readers: reStructuredText literals (````x````) become
Markdown code, ``Args:``/``Returns:`` sections become lists, and a paragraph ending in
``::`` (or a ``>>>`` example) introduces a code block.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

COMMAND = "python -m probebench.apidoc docs/api.md"
_SECTIONS = ("Args", "Arguments", "Returns", "Raises", "Yields", "Example", "Examples")


# --- what is documented ------------------------------------------------------------------

def public_names() -> list[str]:
    """``probebench.__all__``: functions first, then classes, then the rest, each in
    ``__all__`` order."""
    import probebench

    def rank(name: str) -> int:
        obj = getattr(probebench, name)
        return 0 if inspect.isfunction(obj) else 1 if inspect.isclass(obj) else 2

    return sorted(probebench.__all__, key=rank)


def _own_doc(obj: Any) -> str | None:
    """The docstring written for ``obj`` (not dataclass's generated signature line)."""
    doc = inspect.getdoc(obj)
    if not doc:
        return None
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and \
            doc.startswith(f"{obj.__name__}("):
        return None
    if inspect.isclass(obj) and _is_pydantic(obj) and doc.startswith("!!! abstract"):
        return None  # pydantic's BaseModel docstring, inherited
    return doc


def _is_pydantic(cls: type) -> bool:
    return any(base.__module__.startswith("pydantic") and base.__name__ == "BaseModel"
               for base in cls.__mro__)


def _members(cls: type) -> list[tuple[str, Any]]:
    """Public methods and properties defined by ``cls`` itself."""
    out: list[tuple[str, Any]] = []
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) \
        else set()
    for name, value in vars(cls).items():
        if name.startswith("_") or name in fields:  # a field whose default is a function
            continue
        if isinstance(value, classmethod | staticmethod):
            out.append((name, value.__func__))
        elif isinstance(value, property) or inspect.isfunction(value):
            out.append((name, value))
    return out


def undocumented() -> list[str]:
    """Public names (and their classes' public methods) without a docstring of their own."""
    import probebench

    missing = []
    for name in public_names():
        obj = getattr(probebench, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if _own_doc(obj) is None:
            missing.append(name)
        if inspect.isclass(obj):
            missing += [f"{name}.{member}" for member, value in _members(obj)
                        if not inspect.getdoc(value)]
    return missing


# --- signatures ----------------------------------------------------------------------------

def _annotation(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return ""
    return value if isinstance(value, str) else str(inspect.formatannotation(value))


def _default(value: Any) -> str:
    # a function's repr holds its address: name it instead, so the page is reproducible
    if callable(value) and hasattr(value, "__qualname__"):
        return str(value.__qualname__)
    return repr(value)


def signature(obj: Any, *, drop_self: bool = False) -> str:
    """``(a: int, *, b: str = 'x') -> T`` with string annotations unquoted (private
    parameters, named ``_x``, left out)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    parts, star_done = [], False
    params = [p for p in sig.parameters.values() if not p.name.startswith("_")]
    if drop_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        if p.kind is p.VAR_POSITIONAL:
            star_done = True
        prefix = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD \
            else ""
        text = prefix + p.name
        ann = _annotation(p.annotation)
        if ann:
            text += f": {ann}"
        if p.default is not inspect.Parameter.empty:
            text += f" = {_default(p.default)}" if ann else f"={_default(p.default)}"
        parts.append(text)
        if p.kind is p.POSITIONAL_ONLY and (p is params[-1] or
                                             params[params.index(p) + 1].kind
                                             is not p.POSITIONAL_ONLY):
            parts.append("/")
    out = f"({', '.join(parts)})"
    ret = _annotation(sig.return_annotation)
    if ret and ret != "None":
        out += f" -> {ret}"
    return out


# --- fields ------------------------------------------------------------------------------

def _field_comments(cls: type) -> dict[str, str]:
    """``name -> text`` of the ``#:`` comment on (or just above) each annotated field."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    lines = source.splitlines()
    out: dict[str, str] = {}
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.ClassDef)
    for node in body.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        line = lines[node.lineno - 1]
        trailing = re.search(r"#:\s*(.*)$", line)
        comments: list[str] = []
        row = node.lineno - 2
        while row >= 0 and lines[row].strip().startswith("#:"):
            comments.insert(0, lines[row].strip()[2:].strip())
            row -= 1
        if trailing:
            comments.append(trailing.group(1).strip())
        if comments:
            out[node.target.id] = " ".join(comments)
    return out


def _fields(cls: type) -> list[tuple[str, str, str | None, str]]:
    """(name, type, default or None when required, description) of a dataclass's or
    pydantic model's public fields."""
    if _is_pydantic(cls):
        hints = {k: v for c in reversed(cls.__mro__) for k, v in
                 getattr(c, "__annotations__", {}).items()}
        model_fields: dict[str, Any] = getattr(cls, "model_fields", {})
        out = []
        for name, info in model_fields.items():
            default = None if info.is_required() else "<factory>" \
                if info.default_factory is not None else _default(info.default)
            out.append((name, _annotation(hints.get(name, "")), default,
                        info.description or ""))
        return out
    if dataclasses.is_dataclass(cls):
        comments: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            if dataclasses.is_dataclass(klass):
                comments.update(_field_comments(klass))
        fields = []
        for f in dataclasses.fields(cls):
            if f.name.startswith("_") or not f.init:
                continue
            default = "<factory>" if f.default_factory is not dataclasses.MISSING else \
                None if f.default is dataclasses.MISSING else _default(f.default)
            fields.append((f.name, _annotation(f.type), default, comments.get(f.name, "")))
        return fields
    return []


# --- docstrings to Markdown ----------------------------------------------------------------

def _literals(text: str) -> str:
    return re.sub(r"``(.+?)``", r"`\1`", text)


def markdown(doc: str) -> str:
    """A Google-style docstring with reStructuredText literals, as Markdown."""
    lines = doc.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        header = stripped[:-1] if stripped.endswith(":") else None
        if header in _SECTIONS and not line.startswith(" "):
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                block.append(lines[i])
                i += 1
            out += [f"**{header}:**", "", *_section(header, block), ""]
            continue
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += ["```pycon", *textwrap.dedent("\n".join(block)).splitlines(), "```"]
            continue
        if stripped.endswith("::"):
            out.append(_literals(line.rstrip()[:-2].rstrip() + ":") if stripped != "::"
                       else "")
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            code = textwrap.dedent("\n".join(block)).strip("\n")
            out += ["", "```python", *code.splitlines(), "```", ""]
            continue
        out.append(_literals(line))
        i += 1
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _section(header: str, block: list[str]) -> list[str]:
    if header in ("Example", "Examples"):
        code = textwrap.dedent("\n".join(block)).strip("\n")
        lang = "pycon" if code.lstrip().startswith(">>>") else "python"
        return [f"```{lang}", *code.splitlines(), "```"]
    body = textwrap.dedent("\n".join(block)).splitlines()
    if header in ("Args", "Arguments", "Raises"):
        items: list[str] = []
        for line in body:
            match = re.match(r"^([\w*, ]+?)(?: \(([^)]*)\))?:\s*(.*)$", line)
            if match and not line.startswith(" "):
                names = ", ".join(f"`{n.strip()}`" for n in match.group(1).split(","))
                kind = f" ({match.group(2)})" if match.group(2) else ""
                items.append(f"- {names}{kind}: {_literals(match.group(3))}".rstrip())
            elif line.strip() and items:
                items[-1] += " " + _literals(line.strip())
        return items
    return [" ".join(_literals(line.strip()) for line in body if line.strip())]


# --- the page ------------------------------------------------------------------------------

def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9_\- ]", "", title.lower()).replace(" ", "-")


def _function(name: str, obj: Any) -> list[str]:
    return [f"### `{name}`", "", "```python", f"probebench.{name}{signature(obj)}", "```", "",
            markdown(_own_doc(obj) or "(no docstring)")]


def _class(name: str, cls: type) -> list[str]:
    fields = _fields(cls)
    if _is_pydantic(cls) or issubclass(cls, BaseException):
        # keyword fields (listed below), or an exception: the base says what it is
        base = "pydantic.BaseModel" if _is_pydantic(cls) else cls.__bases__[0].__name__
        head = f"class probebench.{name}({base})"
    else:
        head = f"class probebench.{name}{signature(cls)}"
    out = [f"### `{name}`", "", "```python", head, "```", "",
           markdown(_own_doc(cls) or "(no docstring)")]
    if fields:
        out += ["**Fields:**", ""]
        for field, ann, default, text in fields:
            shown = f"{field}: {ann}" if ann else field
            shown += f" = {default}" if default is not None else ""
            out.append(f"- `{shown}`" + (f": {_literals(text)}" if text else ""))
        out.append("")
    for member, value in _members(cls):
        if isinstance(value, property):
            ann = _annotation(inspect.signature(value.fget).return_annotation) \
                if value.fget else ""
            head = f"{name}.{member}" + (f": {ann}" if ann else "") + "  # property"
        else:
            head = f"{name}.{member}{signature(value, drop_self=True)}"
        out += [f"#### `{name}.{member}`", "", "```python", head, "```", "",
                markdown(inspect.getdoc(value) or "(no docstring)")]
    return out


def render() -> str:
    """The whole of ``docs/api.md``."""
    import probebench

    names = public_names()
    doc = inspect.getdoc(probebench) or ""
    out = ["# probebench API", "",
           f"<!-- generated by `{COMMAND}` from the docstrings of probebench.__all__; "
           "edit the docstrings, not this page -->", "",
           markdown(doc.split("\n\n", 1)[0]),
           "Everything below is importable from the top-level package "
           "(`from probebench import load_probe`). Importing it is cheap: torch, "
           "transformers and scikit-learn load only when a function needs them.", "",
           "## Commands and their functions", "",
           "Every `probebench` command calls one of these (`probebench.cli.API`):", "",
           "| command | function |", "| --- | --- |"]
    from probebench.cli import API

    for command, target in API.items():
        head = target.split(".")[0]
        out.append(f"| `probebench {command}` | [`{target}`](#{_anchor(head)}) |")
    out += ["", "## Contents", ""]
    groups: dict[str, list[str]] = {"Functions": [], "Classes": [], "Constants": []}
    for name in names:
        obj = getattr(probebench, name)
        group = "Functions" if inspect.isfunction(obj) else \
            "Classes" if inspect.isclass(obj) else "Constants"
        groups[group].append(name)
    for group, members in groups.items():
        if members:
            out.append(f"- {group}: " + ", ".join(f"[`{n}`](#{_anchor(n)})" for n in members))
    out.append("")
    for group, members in groups.items():
        if not members:
            continue
        out += [f"## {group}", ""]
        for name in members:
            obj = getattr(probebench, name)
            if group == "Functions":
                out += _function(name, obj)
            elif group == "Classes":
                out += _class(name, obj)
            else:
                out += [f"### `{name}`", "", _CONSTANTS.get(name, "(undocumented)"), ""]
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


_CONSTANTS = {"__version__": "The installed probebench's version string (as in its "
              "package metadata)."}


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/api.md")
    missing = undocumented()
    if missing:
        print(f"no docstring: {', '.join(missing)}", file=sys.stderr)
    target.write_text(render(), "utf-8")
    print(f"wrote {target}")
