"""The leaderboard's ROC curve is scikit-learn's, drawn without importing it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from probebench.leaderboard.charts import roc_points

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


def test_a_leaderboard_build_imports_no_scikit_learn(tmp_path: Path) -> None:
    code = ("import sys; from probebench.cli import main; "
            f"rc = main(['leaderboard', 'build', '--registry', 'registry', '--out', "
            f"{str(tmp_path / 'site')!r}]); "
            "assert 'sklearn' not in sys.modules, 'sklearn imported'; sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
