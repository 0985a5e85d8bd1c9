"""Training probes on registered tasks: the SentEval protocol (``trainer``), sweeps over
layers and positions (``sweep``), artifact folders (``artifact``) and reproducer
notebooks (``notebooks``).

The names below are re-exported because published, hash-pinned reproducer notebooks
import them from ``probebench.train`` (editing those notebooks would change every bundle
hash): keep them importable from here.
"""

from __future__ import annotations

from probebench.evaluation.protocol import (
    ALPHA_GRID,
    C_GRID,
    DEFAULT_HIDDEN,
    HIDDEN_GRID,
    labelled_prompts,
    train_val_items,
)
from probebench.train.trainer import (
    PROBE_TYPES,
    Fitted,
    SplitActivations,
    TrainConfig,
    Trained,
    evaluate_weights,
    fit_and_score,
    grid_search,
    split_activations,
    train,
)

__all__ = ["ALPHA_GRID", "C_GRID", "DEFAULT_HIDDEN", "HIDDEN_GRID", "PROBE_TYPES", "Fitted",
           "SplitActivations", "TrainConfig", "Trained", "evaluate_weights", "fit_and_score",
           "grid_search", "labelled_prompts", "split_activations", "train",
           "train_val_items"]
