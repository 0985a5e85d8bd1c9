"""Registry entries: ``registry/probes/<org>/<name>.yaml``, one per published probe."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from probebench.artifact.meta import ProbeType
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError, field_problem
from probebench.evaluation.definitions import EVALAWARE_IMPUTE
from probebench.evaluation.transfer import parse_targets
from probebench.safetext import first_hidden
from probebench.sites import Position, transformerlens_fields
from probebench.yamlsafe import load_yaml

#: longest entry id accepted (the longest reference entry's has 54 characters)
MAX_ENTRY_ID = 128
EntryId = Annotated[str, StringConstraints(
    pattern=r"^[a-z0-9][a-z0-9\-]*/[a-z0-9][a-z0-9.\-]*-[a-z0-9.\-]+-l\d+-v\d+$",
    max_length=MAX_ENTRY_ID)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
#: the fields whose text may run over several lines (a YAML block): they keep \n and \t
MULTILINE_FIELDS = frozenset({"description", "notice"})


class Entry(BaseModel):
    """One probe in the registry (its artifact is elsewhere, pinned by hash)."""

    model_config = ConfigDict(extra="forbid")

    id: EntryId = Field(description="org/name-model-l<layer>-v<version>, e.g. "
                        "probebench/verb-tense-smollm2-135m-l15-v1; the file is "
                        "registry/probes/<org>/<rest>.yaml")
    name: str = Field(min_length=1)
    short_name: str = Field(min_length=1, max_length=40)
    author: str = Field(min_length=1)
    org: str = Field(min_length=1)
    category: str = Field(min_length=1, description="e.g. grammar, syntax, deception")
    probe_type: ProbeType
    model: str = Field(min_length=1, description="The model the probe reads, as in the "
                       "artifact's meta.yaml (an alias or a Hugging Face id); entries "
                       "written before v0.2 call it model_id, which is still read.")
    layer: int = Field(ge=0)
    position: Position
    paper: str | None = None
    paper_title: str | None = None
    artifact_url: str = Field(description="A path relative to the repository, file://PATH, "
                              "hf://[datasets/]ORG/REPO@REV[/SUBFOLDER], "
                              "https://huggingface.co/[datasets/]ORG/REPO/tree/REV"
                              "[/SUBFOLDER] or https://github.com/ORG/REPO/tree/REV[/PATH]; "
                              "in the registry a folder registry/artifacts/<folder> or a "
                              "remote form with REV the 40-hex commit.")
    artifact_sha256: Sha256 = Field(description="probebench hash of the artifact folder.")
    reproducer_notebook: str = Field(min_length=1)
    colab_url: str | None = None
    license: str
    release: str = Field(min_length=1, description="Release date or version.")
    param_count: int = Field(ge=0, description="The probe's trained parameters: every "
                             "weight and bias of its layers (the scaler's mean and scale "
                             "are statistics, not counted); checked against the artifact.")
    size_mb: float = Field(ge=0, description="The artifact's files in MB (10**6 bytes): "
                           "every file the bundle hash covers; checked against the artifact "
                           "within SIZE_TOLERANCE_MB or SIZE_TOLERANCE_SHARE.")
    tagline: str = Field(min_length=1, max_length=120)
    description: str = Field(min_length=1)
    status: Literal["pending_review", "live", "deprecated"]
    tasks: list[str] = Field(min_length=1, description="Registered task ids it is scored on.")
    transfer_targets: list[str] = Field(
        default_factory=list,
        description="MODEL@LAYER:POSITION, e.g. minilm-l6@4:token_avg: models (of any "
                    "hidden size) and the site of each whose activations are mapped onto "
                    "the probe's by a ridge map fitted on a neutral corpus "
                    "(probebench.evaluation.transfer) to measure cross-model transfer.")
    evalaware_auroc: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="The author's eval-awareness-corrected AUROC, if measured.")
    evalaware_imputation_acknowledged: bool = Field(
        default=False, description="True when the author accepts the imputation instead "
        f"({EVALAWARE_IMPUTE} x AUROC).")
    notice: str | None = Field(default=None, description="Why the status changed, e.g. the "
                               "re-evaluation that deprecated the entry.")

    @field_validator("*")
    @classmethod
    def _text_is_visible(cls, value: Any, info: ValidationInfo) -> Any:
        # an entry's text reaches terminals and pages: no control or bidi character
        lines = info.field_name in MULTILINE_FIELDS
        texts = ([(None, value)] if isinstance(value, str) else
                 list(enumerate(value)) if isinstance(value, list) else [])
        for index, text in texts:
            found = first_hidden(text, lines=lines) if isinstance(text, str) else None
            if found is not None:
                where = "" if index is None else f"item {index + 1}, "
                allowed = " apart from line breaks and tabs" if lines else ""
                raise ValueError(
                    f"{where}character {found[0] + 1} is {found[1]}; expected visible text: "
                    f"no control, bidirectional or other invisible format character"
                    f"{allowed} (docs/registry.md, \"Text from strangers\")")
        return value

    @field_validator("transfer_targets")
    @classmethod
    def _targets_parse(cls, value: list[str]) -> list[str]:
        try:
            return [str(t) for t in parse_targets(value)]
        except InputError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="before")
    @classmethod
    def _old_field_names(cls, data: Any) -> Any:
        # ``model_id`` was this field's name before it was unified with meta.yaml's
        if isinstance(data, dict) and "model_id" in data:
            if "model" in data:
                raise ValueError("give 'model' only ('model_id' is its old name)")
            data = {("model" if k == "model_id" else k): v for k, v in data.items()}
        return data


#: size_mb may differ from the artifact's size by rounding: up to 0.01 MB or 1% of the
#: size, whichever is larger (so two decimals always pass)
SIZE_TOLERANCE_MB = 0.01
SIZE_TOLERANCE_SHARE = 0.01


def trained_parameters(weights: ProbeWeights) -> int:
    """An entry's ``param_count``: every weight and bias of the probe's layers (577 for
    a logistic regression on 576 features). The scaler's mean and scale are not
    counted: they are statistics of the training activations, not fitted parameters."""
    return sum(int(w.size) for w in weights.weights) + sum(int(b.size) for b in weights.biases)


def artifact_megabytes(file_sizes: dict[str, int]) -> float:
    """An entry's ``size_mb``: the bytes of every file of the bundle, in MB (10**6)."""
    return sum(file_sizes.values()) / 1e6


def size_agrees(claimed_mb: float, actual_mb: float) -> bool:
    """Whether a claimed ``size_mb`` is the actual size up to rounding."""
    return abs(claimed_mb - actual_mb) <= max(SIZE_TOLERANCE_MB,
                                              SIZE_TOLERANCE_SHARE * actual_mb)


#: what may name an entry's file: ``org/rest``, no other slash, no leading dot
_ID_PATH = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*/[A-Za-z0-9][A-Za-z0-9.\-_]*")


def entry_path(root: Path, entry_id: str) -> Path:
    """``root/probes/<org>/<rest>.yaml``; an id that is too long or not ``org/name``
    (which could name a file elsewhere) is an ``InputError``."""
    if len(entry_id) > MAX_ENTRY_ID:
        raise InputError(f"{entry_id[:60]}...: an entry id has at most {MAX_ENTRY_ID} "
                         f"characters (this one has {len(entry_id)})")
    if not _ID_PATH.fullmatch(entry_id):
        raise InputError(f"{entry_id!r}: not an entry id (org/name, e.g. "
                         "probebench/verb-grammar-smollm2-135m-l15-v2)")
    org, rest = entry_id.split("/", 1)
    return root / "probes" / org / f"{rest}.yaml"


def read_entry(path: Path) -> Entry:
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of fields")
    hooks = transformerlens_fields(data)
    if hooks:
        raise InputError(f"{path}: " + "; ".join(hooks))
    try:
        return Entry.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: {field_problem(exc)}") from None


def entry_files(root: Path) -> list[Path]:
    """Every entry YAML of a registry; the registry must exist (a mistyped --registry
    is an error, not an empty leaderboard)."""
    probes = root / "probes"
    if not probes.is_dir():
        raise InputError(f"{root}: not a registry (no probes/ folder); give --registry or "
                         "--repo")
    return sorted(probes.rglob("*.yaml"))


def entries_with_status(root: Path, status: str) -> list[tuple[Path, Entry]]:
    """(file, entry) of every entry of the registry with ``status``."""
    found = [(path, read_entry(path)) for path in entry_files(root)]
    return [(path, entry) for path, entry in found if entry.status == status]
