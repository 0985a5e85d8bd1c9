"""``probebench train``'s grid search: the Newton-Cholesky solver against scikit-learn's
default (lbfgs), on real activations of the verb-grammar task (SmolLM2 layer 20,
token_avg: 1,600 train and 400 validation prompts, 576 features), the full C grid.

Baseline: ``LogisticRegression(C=c, max_iter=5000)`` (lbfgs) per grid point. The table
shows the wall time of the whole grid, the chosen C and the validation accuracies
(they must agree), and the largest coefficient difference at the chosen C.

    python benchmarks/training.py
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from probebench.models import Site, extract
    from probebench.tasks.catalog import TaskCatalog
    from probebench.train import C_GRID, labelled_prompts, train_val_items

    data = TaskCatalog.default().load("verb_grammar")
    fit_items, val_items, _ = train_val_items(data)
    tp, vp = labelled_prompts(fit_items), labelled_prompts(val_items)
    site = Site(20, "token_avg")
    x = extract("smollm2-135m", tp, [site], progress=False)[site].astype(np.float64)
    xv = extract("smollm2-135m", vp, [site], progress=False)[site].astype(np.float64)
    y = np.array([p.label for p in tp])
    yv = np.array([p.label for p in vp])
    scaler = StandardScaler().fit(x)
    z, zv = scaler.transform(x), scaler.transform(xv)

    def grid(**kw: object) -> tuple[float, list[float], dict[float, np.ndarray]]:
        start = time.perf_counter()
        accs, coefs = [], {}
        for c in C_GRID:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = LogisticRegression(C=c, **kw).fit(z, y)
            accs.append(float(np.mean(model.predict(zv) == yv)))
            coefs[c] = model.coef_
        return time.perf_counter() - start, accs, coefs

    t_base, acc_base, coef_base = grid(max_iter=5000)
    t_new, acc_new, coef_new = grid(solver="newton-cholesky", max_iter=100)
    chosen = C_GRID[int(np.argmax(acc_new))]
    print(f"{'solver':<28} {'grid wall':>10} {'chosen C':>9}  validation accuracy per C")
    print(f"{'lbfgs (baseline)':<28} {t_base:>9.2f}s {C_GRID[int(np.argmax(acc_base))]:>9g}  "
          + " ".join(f"{a:.4f}" for a in acc_base))
    print(f"{'newton-cholesky (train)':<28} {t_new:>9.2f}s {chosen:>9g}  "
          + " ".join(f"{a:.4f}" for a in acc_new))
    diff = float(np.abs(coef_base[chosen] - coef_new[chosen]).max())
    print(f"speed-up {t_base / t_new:.1f}x; max |coef difference| at the chosen C: {diff:.2e}")


if __name__ == "__main__":
    main()
