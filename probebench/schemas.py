"""JSON Schemas exported from the pydantic models, for editors and for CI validators.

``python -m probebench.schemas schemas/`` rewrites the committed files; a test keeps
them equal to the models.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def json_schemas() -> dict[str, dict[str, Any]]:
    from probebench.artifact.meta import ProbeMeta
    from probebench.evaluation.results import Submission

    return {"meta.schema.json": ProbeMeta.model_json_schema(),
            "submission.schema.json": Submission.model_json_schema()}


def write_schemas(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in json_schemas().items():
        path = folder / name
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    for p in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        print(p)
