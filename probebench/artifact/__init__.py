"""Probe artifacts: the spec, safe loading, bundle hashes and validation."""

from probebench.artifact.bundle import MANIFEST_NAME, Manifest, manifest, scan
from probebench.artifact.checks import CHECKS, CheckResult, ValidationReport, validate
from probebench.artifact.forms import FORMS, load_weights
from probebench.artifact.meta import SPEC_VERSION, ProbeMeta, ReportedMetrics, read_meta
from probebench.artifact.unpickle import UnsafePickleError, safe_load_pickle
from probebench.artifact.weights import ProbeWeights, load_native, sklearn_to_weights

__all__ = [
    "CHECKS",
    "FORMS",
    "MANIFEST_NAME",
    "SPEC_VERSION",
    "CheckResult",
    "Manifest",
    "ProbeMeta",
    "ProbeWeights",
    "ReportedMetrics",
    "UnsafePickleError",
    "ValidationReport",
    "load_native",
    "load_weights",
    "manifest",
    "read_meta",
    "safe_load_pickle",
    "scan",
    "sklearn_to_weights",
    "validate",
]
