"""Every metric's definition and every imputation constant, in one place.

``submission.json`` carries these texts, REPORT.md lists them, ProbeScore's axes use
the same constants, and METHODOLOGY.md and the leaderboard's tooltips are generated from them.
The item accuracy's definition is assembled from the registered task formats.
"""

from __future__ import annotations

from probebench.evaluation.metrics import ECE_BINS, TPR_TARGET
from probebench.tasks.formats import format_names, get_format

#: eval-awareness-corrected AUROC without a guard: this share of the AUROC, flagged
EVALAWARE_IMPUTE = 0.85
#: distribution-shift AUROC that cannot be measured: this share of the AUROC, flagged
DISTSHIFT_IMPUTE = 0.7
#: cross-model transfer without a declared target: this value, flagged
TRANSFER_IMPUTE = 0.5
#: share of a task's items the eval-awareness correction keeps (least evaluation-like)
EVALAWARE_SHARE = 4  # one item in four
#: latency: runs before timing starts, and prompts timed (median reported)
LATENCY_WARMUP = 3
LATENCY_PROMPTS = 20
#: words of the fixed context read before every prompt for the distribution shift
SHIFT_CONTEXT = ("a fixed 690-token public-domain context (the US Declaration of "
                 "Independence)")


def _share() -> str:
    return {2: "half", 3: "third", 4: "quarter"}.get(EVALAWARE_SHARE, f"1/{EVALAWARE_SHARE}")


def accuracy_definition() -> str:
    """Mean item correctness, with each registered format's rule."""
    rules = ", ".join(f"{name} = {get_format(name).accuracy_definition}"
                      for name in format_names())
    return f"mean item correctness: {rules}."


def metric_definitions() -> dict[str, str]:
    """metric name -> its definition (the ``definitions`` block of submission.json)."""
    return {
        "auroc": "sklearn.metrics.roc_auc_score over the labelled test prompts; ties count "
                 "1/2.",
        "ci": "95% percentile interval of an item bootstrap (items resampled with "
              "replacement, prompts weighted by their item's count); resamples missing a "
              "class are dropped.",
        "ece": f"{ECE_BINS} equal-width bins on P(positive); sum of bin share x |positive "
               "rate - mean P|.",
        "brier": "mean (P(positive) - label)^2.",
        "fpr_at_99tpr": f"FPR at the first ROC threshold, highest first, whose TPR >= "
                        f"{TPR_TARGET}.",
        "latency_ms": "median ms per prompt, batch size 1, text to probability, after "
                      f"{LATENCY_WARMUP} warm-up runs, on the evaluation device (kept in the "
                      "timing block).",
        "distshift_auroc": f"AUROC of the same test prompts read after {SHIFT_CONTEXT}; "
                           "positions read the prompt's own tokens.",
        "evalaware_auroc": f"AUROC on the {_share()} of each class's items (items grouped by "
                           "the labels they hold: the spec's stratified bottom-quartile "
                           "split) that a registered eval-awareness guard for the model "
                           "rates least evaluation-like; "
                           f"without a guard, {EVALAWARE_IMPUTE} x AUROC, flagged imputed.",
        "transfer": "Pearson correlation of the probe's logits on the declared target "
                    "model's activations and on its own, over the test prompts; undeclared: "
                    f"{TRANSFER_IMPUTE}, flagged imputed.",
        "cost": "FLOPs per test prompt of the model blocks up to the probe's layer, "
                "pooling, scaler and classifier, from the model's config and the "
                "tokenizer (probebench.models.cost); the same on every machine.",
        "selectivity": "Hewitt and Liang (2019): the entry's architecture re-trained with "
                       "train's protocol on the task and on a control task (labels a fixed "
                       "random function of word types, equal label balance); prompt "
                       "accuracy, control accuracy and their difference, paired item "
                       "bootstrap.",
        "baselines": "per (task, model), the same for every entry: majority, length, "
                     "random_features (a linear probe on a random projection of the mean "
                     "input embedding) and, for minimal pairs on causal models, the model's "
                     "own answer (BLiMP, verbs: total surprisal after BOS; SyntaxGym: its "
                     "region predictions).",
        "accuracy": accuracy_definition(),
        "marks": "A-D per metric from marks.yaml; the mark is the worst range the 95% CI "
                 "reaches.",
    }


__all__ = ["DISTSHIFT_IMPUTE", "EVALAWARE_IMPUTE", "EVALAWARE_SHARE", "LATENCY_PROMPTS",
           "LATENCY_WARMUP", "SHIFT_CONTEXT", "TRANSFER_IMPUTE",
           "accuracy_definition", "metric_definitions"]
