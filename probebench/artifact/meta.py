"""The ProbeBench artifact spec v0.0.1: ``meta.yaml``'s schema.

``python -m probebench.schemas schemas/`` exports its JSON Schema for editors (a test
keeps the committed file equal to this module).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from probebench.errors import InputError
from probebench.sites import Position, transformerlens_fields
from probebench.yamlsafe import load_yaml

SPEC_VERSION = "0.0.1"
#: the files an artifact holds beside meta.yaml and its probe form(s)
COMPANION_FILES = ("README.md", "train.ipynb", "eval.ipynb")
#: The kinds of classifier the spec names (``probe_type`` in meta.yaml and entries).
ProbeType = Literal["linear", "mlp", "sae_feature", "sae_combination", "tree", "ensemble"]
PROBE_TYPES: tuple[str, ...] = get_args(ProbeType)
#: probe types probebench can re-evaluate; the others validate but cannot be scored
EVALUABLE_PROBE_TYPES = ("linear", "mlp")

#: how a linear probe was fitted (``method`` in meta.yaml; optional)
Method = Literal["logistic", "mass-mean"]
METHODS: tuple[str, ...] = get_args(Method)

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Probability = Annotated[float, Field(ge=0.0, le=1.0)]


class ReportedMetrics(BaseModel):
    """Metrics the author measured on one task, tied to the exact test set used."""

    model_config = ConfigDict(extra="forbid")

    test_sha256: Sha256 = Field(description="SHA-256 of the task's canonical test set, as "
                                "registered in tasks.yaml (probebench tasks hash).")
    auroc: Probability | None = Field(default=None, description="Area under the ROC curve.")
    auroc_ci_low: Probability | None = Field(default=None, description="95% CI lower bound.")
    auroc_ci_high: Probability | None = Field(default=None, description="95% CI upper bound.")
    ece: Probability | None = Field(default=None, description="Expected calibration error.")
    brier: Probability | None = Field(default=None, description="Brier score.")
    fpr_at_99tpr: Probability | None = Field(default=None,
                                             description="False-positive rate at 99% TPR.")
    accuracy: Probability | None = Field(default=None, description="Accuracy.")
    latency_ms: float | None = Field(default=None, ge=0.0,
                                     description="Median ms per prompt, batch size 1.")


class ProbeMeta(BaseModel):
    """``meta.yaml`` of a probe artifact (ProbeBench spec v0.0.1)."""

    model_config = ConfigDict(extra="forbid")

    spec_version: Literal["0.0.1"] = Field(description="Artifact spec version.")
    probe_type: ProbeType = Field(description="Kind of classifier.")
    method: Method | None = Field(
        default=None, description="How a linear probe was fitted: 'logistic' (a logistic "
        "regression) or 'mass-mean' (the difference of the class means, calibrated). "
        "Optional: absent says nothing, and artifacts written before the field existed "
        "leave it out.")
    model: str = Field(min_length=1, description="The model the probe reads: a probebench "
                       "alias (smollm2-135m) or a Hugging Face id.")
    layer: int = Field(ge=0, description="Layer read; 0 = embeddings output, as in Hugging "
                       "Face output_hidden_states.")
    position: Position = Field(
        description="Token position pooled at that layer.")
    training_data: str = Field(min_length=1, description="What the probe was trained on "
                               "(a task id, a data set name or a URL).")
    license: str = Field(min_length=1, description="SPDX id, or 'custom' or 'closed'.")
    paper: str | None = Field(default=None, description="URL or arXiv id, if any.")
    author: str = Field(min_length=1, description="Author name(s).")
    contact: str = Field(min_length=1, description="E-mail or URL for questions.")
    created_at: dt.date | dt.datetime = Field(description="Creation date (ISO 8601).")
    reported_metrics: dict[str, ReportedMetrics] = Field(
        default_factory=dict, description="Metrics per task id, each with its test-set hash.")


    @model_validator(mode="after")
    def _method_fits_a_linear_probe(self) -> ProbeMeta:
        if self.method is not None and self.probe_type != "linear":
            raise ValueError(f"method {self.method!r} describes how a linear probe was "
                             f"fitted; this is a {self.probe_type} probe (leave method out)")
        return self


def _describe(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        found = err.get("input")
        shown = "" if isinstance(found, dict | list) else f", found {found!r}"
        out.append(f"field {where!r}: {err['msg']}{shown}")
    return out


def parse_meta(data: Any, source: str) -> ProbeMeta:
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a mapping of fields, found "
                         f"{type(data).__name__}")
    hooks = transformerlens_fields(data)
    if hooks:
        raise InputError(f"{source}: " + "; ".join(hooks))
    try:
        return ProbeMeta.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{source}: " + "; ".join(_describe(exc))) from None


def read_meta(path: Path) -> ProbeMeta:
    """Read and validate ``meta.yaml`` (safe YAML; every error names the field)."""
    return parse_meta(load_yaml(path), str(path))
