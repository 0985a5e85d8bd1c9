"""The leaderboard's ROC curve and its AUROC are scikit-learn's, drawn without importing it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from probebench.leaderboard.charts import roc_auc, roc_points, roc_svg

REPO = Path(__file__).resolve().parents[2]


def test_roc_points_are_scikit_learns() -> None:
    from sklearn.metrics import roc_curve

    rng = np.random.default_rng(0)
    for n in (4, 37, 400, 2500):
        for decimals in (1, 2, 6):
            y = rng.integers(0, 2, n)
            y[:2] = (0, 1)
            s = np.round(rng.random(n), decimals)
            fpr, tpr, _ = roc_curve(y, s)
            ours = roc_points(y.tolist(), s.tolist())
            np.testing.assert_array_equal(ours[0], fpr)
            np.testing.assert_array_equal(ours[1], tpr)


def test_the_curve_s_auroc_is_scikit_learns_and_its_legend_gives_it() -> None:
    """The legend names the area of the curve drawn, ties counted 1/2 as scikit-learn
    counts them, not a number passed beside the scores: probabilities rounded so that
    prompts of both labels tie (a saturated probe's, stored to 6 decimals) give another
    AUROC than the unrounded ones, and the legend follows the curve."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(1)
    for n in (4, 37, 400, 2500):
        for decimals in (1, 2, 6):
            y = rng.integers(0, 2, n)
            y[:2] = (0, 1)
            s = np.round(rng.random(n), decimals)
            assert roc_auc(y.tolist(), s.tolist()) == pytest.approx(roc_auc_score(y, s),
                                                                    abs=1e-12)
    y = rng.integers(0, 2, 500)
    y[:2] = (0, 1)
    raw = 1 / (1 + np.exp(-(40 * (y - 0.5) + rng.normal(0, 30, 500))))  # saturated
    rounded = np.round(raw, 6)
    assert roc_auc_score(y, rounded) != pytest.approx(roc_auc_score(y, raw), abs=1e-3)
    legend = re.search(r"probe \(AUROC ([0-9.]+)\)", roc_svg(y.tolist(), rounded.tolist(), "t"))
    assert legend and legend.group(1) == f"{roc_auc_score(y, rounded):.3f}"


def test_a_leaderboard_build_imports_no_scikit_learn(tmp_path: Path) -> None:
    code = ("import sys; from probebench.cli import main; "
            f"rc = main(['leaderboard', 'build', '--registry', 'registry', '--out', "
            f"{str(tmp_path / 'site')!r}]); "
            "assert 'sklearn' not in sys.modules, 'sklearn imported'; sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
