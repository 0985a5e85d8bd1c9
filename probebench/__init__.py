"""probebench: a registry and leaderboard for activation probes on language models.

The public API::

    from probebench import Site, TaskCatalog, extract, load_probe, submit, train, validate

    catalog = TaskCatalog.default()                     # the tasks shipped with probebench
    report = validate("my-probe", catalog=catalog)      # every artifact check
    result = submit("my-probe", ["verb_grammar"], catalog=catalog, outputs="out")
    result.to_dict()                    # submission.json as a dict; out/ holds it and REPORT.md
    probe = load_probe("probebench/blimp-det-noun-smollm2-135m-l15-v1")  # a registry id
    probe.score_texts(["She bought those books.", "She bought that books."])  # P(positive)
    weights = load_weights("my-probe")                  # ProbeWeights, no pickle executed
    acts = extract("smollm2-135m", ["The cat sat."], [Site(15, "last_token")])

**One function per command.** Every ``probebench`` command calls a public function of
this package (``probebench.cli.API`` names it; ``docs/api.md`` lists the table), so
anything the CLI does a script can do: ``build_leaderboard``, ``evaluate_entry``,
``reeval``, ``seal_holdout``, ``layer_sweep``, ``score_lm``, ``add_task``, ... The ones
beyond the core above load on first use (``probebench.build_leaderboard`` imports the
leaderboard then).

Importing the package is cheap: torch, transformers and scikit-learn load only when a
function needs them. ``probebench.train`` is the training function here; the module of
the same name (``from probebench.train import TrainConfig``) keeps working, because
published reproducer notebooks import from it. ``docs/api.md`` is generated from the
docstrings of the names in ``__all__`` (``python -m probebench.apidoc docs/api.md``).
"""

from probebench.artifact.checks import ValidationReport, validate
from probebench.artifact.forms import load_weights
from probebench.artifact.weights import ProbeWeights
from probebench.evaluation.results import Submission, TaskResult, read_submission
from probebench.evaluation.session import SubmitOptions
from probebench.models.activations import extract
from probebench.probe import NoDirectionError, Probe, load_probe
from probebench.runs.submit import Outputs, submit
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog
from probebench.train import TrainConfig, Trained
from probebench.train import train as train
from probebench.train.artifact import write_artifact
from probebench.version import __version__

#: public name -> (module, attribute): loaded on first use, so ``import probebench`` stays
#: cheap; each is the function a ``probebench`` command calls (``probebench.cli.API``)
_LAZY: dict[str, tuple[str, str]] = {
    "add_task": ("probebench.tasks.scaffold", "add_task"),
    "build_leaderboard": ("probebench.leaderboard.build", "build_leaderboard"),
    "bundle_manifest": ("probebench.artifact.bundle", "manifest"),
    "check_proposal": ("probebench.intake.proposal", "check_proposal"),
    "check_registry": ("probebench.intake.check", "check_registry"),
    "check_verbs": ("probebench.tasks.verbs.checks", "check_verbs"),
    "confinement_problems": ("probebench.intake.confine", "confinement_problems"),
    "download_artifact": ("probebench.registry.mirror", "download_artifact"),
    "evaluate_entry": ("probebench.runs.evaluate", "evaluate_entry"),
    "export_steering_vector": ("probebench.causal.export", "export_steering_vector"),
    "export_native": ("probebench.artifact.export", "export_native"),
    "layer_sweep": ("probebench.train.sweep", "layer_sweep"),
    "list_models": ("probebench.models.embedded", "list_models"),
    "make_reeval_plan": ("probebench.runs.reeval", "make_plan"),
    "merge_reeval": ("probebench.runs.reeval", "merge"),
    "publish_pending": ("probebench.runs.publish", "publish_pending"),
    "reeval": ("probebench.runs.reeval", "reeval"),
    "registry_entries": ("probebench.registry.mirror", "registry_entries"),
    "remove_task": ("probebench.tasks.scaffold", "remove_task"),
    "reproduce_entry": ("probebench.intake.reproduce", "reproduce_entry"),
    "resolve_model": ("probebench.models.loading", "resolve_model"),
    "reveal_holdout": ("probebench.tasks.sealed", "reveal"),
    "review_entry": ("probebench.intake.review", "review_entry"),
    "rotate_holdout": ("probebench.tasks.sealed", "rotate"),
    "run_reeval_group": ("probebench.runs.reeval", "run_group"),
    "score_lm": ("probebench.evaluation.lm_scores", "score_lm"),
    "seal_holdout": ("probebench.tasks.sealed", "seal"),
    "show_entry": ("probebench.registry.mirror", "show_entry"),
    "sign_registry": ("probebench.registry.mirror", "sign_site"),
    "submit_many": ("probebench.runs.submit", "submit_many"),
    "unseal_holdout": ("probebench.tasks.sealed", "unseal"),
    "unseal_holdouts_to": ("probebench.tasks.sealed", "unseal_to"),
    "verify_holdouts": ("probebench.tasks.sealed", "verify_holdouts"),
    "write_holdout_key": ("probebench.tasks.sealed", "write_key_file"),
    "write_verb_splits": ("probebench.tasks.verbs.generator", "write_train_val"),
}


def __getattr__(name: str) -> object:
    """The functions of ``_LAZY``, imported on first use."""
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'probebench' has no attribute {name!r}")


__all__ = [
    "NoDirectionError",
    "Outputs",
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
    "read_submission",
    "submit",
    "train",
    "validate",
    "write_artifact",
    *sorted(_LAZY),
]
