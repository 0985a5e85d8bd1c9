"""Reading YAML from strangers: plain data only.

``load_yaml`` accepts the YAML subset that config files need (mappings, sequences,
strings, numbers, booleans, null, dates) and refuses, with the file and line:

* aliases and anchors (``&a`` / ``*a``): they allow "billion laughs" expansion bombs,
  and a config file never needs them;
* tags that are not YAML's core types (``!!python/object``, ``!custom``), so no
  constructor can ever run;
* duplicate keys in a mapping (PyYAML silently keeps the last);
* files over a size limit, and more than one document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from probebench.errors import InputError
from probebench.jsonsafe import read_capped

MAX_YAML_BYTES = 1 << 20


class _StrictLoader(yaml.SafeLoader):
    def __init__(self, stream: str, source: str) -> None:
        super().__init__(stream)
        self.source = source

    def _fail(self, mark: Any, message: str) -> InputError:
        line = f":{mark.line + 1}" if mark is not None else ""
        return InputError(f"{self.source}{line}: {message}")

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise self._fail(event.start_mark, f"YAML alias '*{event.anchor}' is not allowed "
                             "(aliases and anchors are refused in probebench files)")
        event = self.peek_event()  # type: ignore[no-untyped-call]
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise self._fail(event.start_mark, f"YAML anchor '&{anchor}' is not allowed "
                             "(aliases and anchors are refused in probebench files)")
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise self._fail(key_node.start_mark, "mapping keys must be plain scalars")\
                    from None
            if key in seen:
                raise self._fail(key_node.start_mark,
                                 f"duplicate key {key!r} (first on line {seen[key]})")
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _refuse_tag(loader: _StrictLoader, suffix: str, node: Any) -> Any:
    raise loader._fail(node.start_mark, f"YAML tag {node.tag!r} is not allowed "
                       "(only plain data: mappings, lists, strings, numbers, dates)")


_StrictLoader.add_multi_constructor("!", _refuse_tag)
_StrictLoader.add_multi_constructor("tag:", _refuse_tag)
# SafeLoader's own core tags (str, int, map, ...) keep their constructors: add_multi_
# constructor is consulted only for tags without an exact constructor.


#: flow and block nesting a document may have (the parser and constructor recurse)
MAX_YAML_DEPTH = 64


def _nesting(text: str) -> int:
    """An upper bound on the document's nesting: flow brackets and block indentation
    (counted without parsing, so a hostile document cannot make the parser recurse)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    indents = {len(line) - len(line.lstrip(" -")) for line in text.splitlines()
               if line.strip() and not line.lstrip().startswith("#")}
    return max(deepest, len(indents))


def loads_yaml(text: str, source: str = "<string>") -> Any:
    """Parse one YAML document of plain data; see the module docstring for what is refused."""
    if _nesting(text) > MAX_YAML_DEPTH:
        raise InputError(f"{source}: YAML nests deeper than {MAX_YAML_DEPTH} levels; refused "
                         "(limit MAX_YAML_DEPTH)")
    try:
        loader = _StrictLoader(text, source)
    except yaml.YAMLError as exc:  # the reader checks characters as it is built
        raise InputError(f"{source}: malformed YAML: {exc}") from None
    try:
        if not loader.check_node():
            return None
        node = loader.get_node()
        if loader.check_node():
            raise loader._fail(loader.peek_event().start_mark,  # type: ignore[no-untyped-call]
                               "more than one YAML document in the file")
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise loader._fail(mark, f"malformed YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: malformed YAML: {exc}") from None
    except RecursionError:
        raise InputError(f"{source}: YAML nests too deeply; refused") from None
    except ValueError as exc:  # a scalar its type cannot hold: 2026-02-30, 5,000 digits
        raise InputError(f"{source}: a value YAML cannot represent ({str(exc)[:160]})") \
            from None
    finally:
        if "loader" in locals():
            loader.dispose()


def load_yaml(path: Path, *, max_bytes: int = MAX_YAML_BYTES) -> Any:
    path = Path(path)
    raw = read_capped(path, max_bytes, "YAML")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return loads_yaml(text, str(path))
