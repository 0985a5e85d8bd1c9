"""probebench: a registry and leaderboard for activation probes on language models.

The public API::

    from probebench import Site, TaskCatalog, extract, load_probe, submit, train, validate

    catalog = TaskCatalog.default()                     # the tasks shipped with probebench
    report = validate("my-probe", catalog=catalog)      # every artifact check
    result = submit("my-probe", ["verb_grammar"], catalog=catalog)
    result.to_dict()                                    # submission.json as a dict
    probe = load_probe("probebench/blimp-det-noun-smollm2-135m-l15-v1")  # a registry id
    probe.score_texts(["She bought those books.", "She bought that books."])  # P(positive)
    weights = load_weights("my-probe")                  # ProbeWeights, no pickle executed
    acts = extract("smollm2-135m", ["The cat sat."], [Site(15, "last_token")])

Importing the package is cheap: torch, transformers and scikit-learn load only when a
function needs them. ``probebench.train`` is the training function here; the module of
the same name (``from probebench.train import TrainConfig``) keeps working, because
published reproducer notebooks import from it. ``docs/api.md`` is generated from the
docstrings of the names in ``__all__`` (``python -m probebench.apidoc docs/api.md``).
"""

from probebench.artifact.checks import ValidationReport, validate
from probebench.artifact.forms import load_weights
from probebench.artifact.weights import ProbeWeights
from probebench.evaluation.results import Submission, TaskResult
from probebench.evaluation.session import SubmitOptions
from probebench.evaluation.submit import submit
from probebench.models.activations import extract
from probebench.probe import NoDirectionError, Probe, load_probe
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog
from probebench.train import TrainConfig, Trained
from probebench.train import train as train
from probebench.version import __version__

__all__ = [
    "NoDirectionError",
    "Probe",
    "ProbeWeights",
    "Site",
    "Submission",
    "SubmitOptions",
    "TaskCatalog",
    "TaskResult",
    "TrainConfig",
    "Trained",
    "ValidationReport",
    "__version__",
    "extract",
    "load_probe",
    "load_weights",
    "submit",
    "train",
    "validate",
]
