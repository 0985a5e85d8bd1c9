"""Evaluation speed: the vectorised item bootstrap, and many probes sharing a model.

1. 1,000 bootstrap resamples of AUROC over 10,000 prompts (5,000 two-prompt items):
   ``probebench.evaluation.metrics.item_bootstrap`` of ``weighted_auroc`` against the
   obvious loop that expands each resample and calls ``sklearn.metrics.roc_auc_score``.
2. ``probebench submit`` of 10 probes that share a model and site, in one command,
   against submitting 1, each from a cold activation cache in a fresh process, on the
   verb-grammar task.

    python benchmarks/evaluation.py [--skip-submit]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probebench.evaluation.results import Submission


def bootstrap_table() -> None:
    from sklearn.metrics import roc_auc_score

    from probebench.evaluation.metrics import (
        auroc_score,
        item_bootstrap,
        resample_counts,
        weighted_auroc,
    )

    rng = np.random.default_rng(0)
    n_items = 5000
    y = np.tile([1, 0], n_items)
    s = rng.normal(size=2 * n_items) + 0.7 * y
    item_of = np.repeat(np.arange(n_items), 2)
    start = time.perf_counter()
    iv = item_bootstrap(auroc_score(y, s), lambda w: weighted_auroc(y, s, w), item_of,
                        n_resamples=1000, seed=0)
    ours = time.perf_counter() - start
    counts = resample_counts(n_items, 1000, np.random.default_rng(0))
    start = time.perf_counter()
    loop = []
    for row in counts:
        idx = np.repeat(np.arange(2 * n_items), row[item_of])
        loop.append(roc_auc_score(y[idx], s[idx]))
    base = time.perf_counter() - start
    low, high = np.percentile(loop, [2.5, 97.5])
    assert abs(low - iv.low) < 1e-9 and abs(high - iv.high) < 1e-9, "results differ"
    print("1,000 bootstrap resamples of AUROC, 10,000 prompts (5,000 items)")
    print(f"{'method':<44} {'seconds':>8} {'ratio':>7}")
    print(f"{'loop of sklearn roc_auc_score (baseline)':<44} {base:>8.2f} {1:>6.1f}x")
    print(f"{'probebench item_bootstrap (vectorised)':<44} {ours:>8.2f} {base / ours:>6.1f}x")
    print(f"same interval: [{iv.low:.4f}, {iv.high:.4f}]; target: under 1 s\n")


def make_probes(folder: Path, n: int) -> list[Path]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from probebench.artifact.weights import sklearn_to_weights
    from probebench.models import Site, extract, load_model
    from probebench.tasks.catalog import TaskCatalog
    from tests.artifacts import META, write_docs

    lm = load_model("smollm2-135m", device="cpu", progress=False)
    data = TaskCatalog.default().load("verb_grammar")
    prompts = [p for item in data.splits["train"][:400] for p in item.prompts]
    site = Site(6, "last_token")
    x = extract(lm, prompts, [site], cache=False, progress=False)[site]
    y = np.array([p.label for p in prompts])
    scaler = StandardScaler().fit(x)
    out = []
    for k in range(n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe = LogisticRegression(C=10.0 ** (k - 5), max_iter=500).fit(
                scaler.transform(x), y)
        path = folder / f"probe-{k:02d}"
        write_docs(path, {**META, "layer": 6, "position": "last_token"})
        sklearn_to_weights(probe, scaler).save_native(path)
        out.append(path)
    return out


def submit_table() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        probes = make_probes(root, 10)
        rows = []
        for n in (1, 10):
            env = {**os.environ, "PROBEBENCH_ACTIVATION_CACHE": str(root / f"cache-{n}")}
            cmd = [sys.executable, "-m", "probebench", "submit", *map(str, probes[:n]),
                   "--tasks", "verb_grammar", "--quiet", "--out-dir", str(root / f"out-{n}")]
            start = time.perf_counter()
            subprocess.run(cmd, check=True, env=env, capture_output=True)
            rows.append((n, time.perf_counter() - start))
            first = Submission.model_validate_json(
                (root / f"out-{n}" / "probe-00" / "submission.json").read_text())
            assert first.tasks[0].id == "verb_grammar"
    (_, one), (_, ten) = rows
    print("probebench submit on verb_grammar, SmolLM2 site 6:last_token, cold activation cache")
    print(f"{'probes':>7} {'wall seconds':>13} {'ratio to 1 probe':>17}")
    print(f"{1:>7} {one:>13.1f} {1:>16.2f}x")
    print(f"{10:>7} {ten:>13.1f} {ten / one:>16.2f}x   (target: under 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-submit", action="store_true", help="bootstrap table only")
    args = parser.parse_args()
    bootstrap_table()
    if not args.skip_submit:
        submit_table()


if __name__ == "__main__":
    main()
