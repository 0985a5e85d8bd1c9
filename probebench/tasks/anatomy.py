"""Items: the unit that bootstraps resample (a BLiMP pair, a SyntaxGym item with all its
conditions, one verb question with its candidates)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from probebench.prompts import Prompt


@dataclass(frozen=True)
class Item:
    """Related prompts that stand or fall together."""

    id: str
    prompts: tuple[Prompt, ...]
    slices: Mapping[str, str] = field(default_factory=dict)
    #: format-specific data the evaluators need (e.g. SyntaxGym predictions); hashed too
    data: Mapping[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The canonical JSON form used by test-set hashes."""
        return {"id": self.id, "slices": dict(sorted(self.slices.items())),
                "data": self.data, "prompts": [p.record() for p in self.prompts]}
