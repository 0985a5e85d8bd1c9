"""Cross-model transfer: does what the probe reads survive in another model?

A probe reads one model's hidden states at one site. Another model's hidden states live
in an unrelated basis (often of another width), so its raw activations mean nothing to
the probe. Transfer is measured through a fitted map instead:

1. **The corpus.** Both models read the same fixed neutral corpus, ``CORPUS_FILE``:
   ``CORPUS_SIZE`` (854) plain English sentences (everyday scenes, nature, home, work,
   travel; statements, questions, tenses, negation, numbers) written for probebench and
   licensed like the project (Apache-2.0), pinned by ``CORPUS_SHA256``. No registered
   task contributes a sentence, so the map never sees the task under evaluation. The
   target model reads it at the declared site, the probe's model at the probe's site,
   through the session's activation cache like any other prompts.
2. **The map.** An affine ridge map from the target's activations (each feature
   standardised on the corpus) to the probe's model's activations, fitted in float64
   from one SVD (``RidgeSolver``). Its ridge alpha is chosen on a deterministic split:
   every ``HOLD_OUT_EVERY``-th sentence is held out, a map is fitted on the rest for each
   alpha of ``ALPHAS``, and the alpha with the best held-out R² wins (within
   ``ALPHA_TOLERANCE`` of the best, the largest: the choice does not flip on float
   noise). That held-out R² is reported, in the probe's standardised coordinates
   (``(x - mean) / scale`` of its scaler, pooled over features, around the held-out
   rows' own mean: ``map_r2``), and the map is refitted on the whole corpus with the
   chosen alpha.
3. **The reading.** The probe (scaler and classifier, unchanged) reads the mapped target
   activations of the task's test prompts: the target AUROC with its item-bootstrap CI,
   and ``transfer = (AUROC_target - 0.5) / (AUROC_source - 0.5)``, clamped to [0, 1]
   (``transfer_ratio``). When the probe's own AUROC is at most 0.5 it has nothing to
   transfer: the ratio is None, with a note.
4. **The control.** ``CONTROL_DRAWS`` ridge maps with the same alpha and shape, fitted on
   the corpus with its pairs shuffled (fixed permutations seeded from the run's seed),
   each scaled to the fitted map's output variance in the probe's coordinates; their
   mean AUROC and its ratio are reported beside the map's, and their mean held-out R²
   beside its R². Shuffled pairs are the fair null: the same estimator on the same
   sentences with the same alpha, confined to the same span and giving outputs of the
   same size, with only the correspondence between the two models' readings of a
   sentence destroyed. (A random Gaussian matrix would differ from the fitted map in its
   spectrum and span as well, so a gap to it would not isolate the correspondence.)

Everything is float64 and deterministic: the same activations give the same numbers,
and the float32 rounding of activations from another machine moves them far less than
the reproducibility contract's tolerance (``probebench.evaluation.reproducibility``).

A target is written ``MODEL@LAYER:POSITION`` (``TransferTarget``), e.g.
``minilm-l6@4:token_avg``: the model (an alias, a local folder or a hub id) and the site
of it that is mapped onto the probe's. The corpus has no spans, so both sites must read a
position without one (``SPAN_FREE_POSITIONS``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from probebench.errors import InputError, SiteError
from probebench.hashing import sha256_bytes
from probebench.prompts import Prompt
from probebench.sites import POSITIONS, SPAN_OF_POSITION, Site

#: the neutral corpus both models read, one sentence per line, and its pinned SHA-256
CORPUS_FILE = Path(__file__).with_name("context") / "neutral_sentences.txt"
CORPUS_SHA256 = "c6c837f521efa9096d4f4b5d9ec75781c455a9c5c7a1ccb21487eddd4f72015e"
#: its sentences (the hash pins them; the number is stated where the method is described)
CORPUS_SIZE = 854
#: the prompt list's name in the session (activations are cached by content, not name)
CORPUS_KEY = "transfer corpus"
#: every HOLD_OUT_EVERY-th sentence (1-based) is held out to choose alpha and report R²
HOLD_OUT_EVERY = 5
#: ridge alphas tried, in standardised target units: 10^-2 to 10^6 in half decades
ALPHAS: tuple[float, ...] = tuple(10.0 ** (k / 2) for k in range(-4, 13))
#: held-out R² this close to the best counts as the best (the largest such alpha wins)
ALPHA_TOLERANCE = 1e-4
#: shuffled-pair maps averaged in the control
CONTROL_DRAWS = 10
#: what separates a target's model from its site
TARGET_SEPARATOR = "@"
#: positions a corpus sentence can be read at (no span needed)
SPAN_FREE_POSITIONS: tuple[str, ...] = tuple(p for p in POSITIONS
                                             if p not in SPAN_OF_POSITION)


@dataclass(frozen=True)
class TransferTarget:
    """A declared transfer target: a model and the site of it mapped onto the probe's."""

    model: str
    site: Site

    @classmethod
    def parse(cls, text: str) -> TransferTarget:
        """``MODEL@LAYER:POSITION``, e.g. ``minilm-l6@4:token_avg``.

        >>> TransferTarget.parse("minilm-l6@4:token_avg")
        TransferTarget(model='minilm-l6', site=Site(layer=4, position='token_avg'))
        >>> str(TransferTarget.parse(" smollm2-135m @ 15:last_token "))
        'smollm2-135m@15:last_token'
        """
        example = "e.g. minilm-l6@4:token_avg"
        if not isinstance(text, str):
            raise InputError(f"transfer target {text!r}: expected a string "
                             f"MODEL@LAYER:POSITION ({example})")
        model, sep, site_text = text.strip().rpartition(TARGET_SEPARATOR)
        if not sep or not model.strip() or not site_text.strip():
            raise InputError(
                f"transfer target {text!r}: expected MODEL@LAYER:POSITION ({example}): the "
                "target model and the site of it whose activations are mapped onto the "
                "probe's")
        try:
            site = Site.parse(site_text.strip())
        except SiteError as exc:
            raise InputError(f"transfer target {text!r}: {exc}") from None
        if site.span is not None:
            raise InputError(
                f"transfer target {text!r}: position {site.position} reads the "
                f"{site.span!r} span, which the transfer corpus's sentences do not have; "
                f"use one of {', '.join(SPAN_FREE_POSITIONS)}")
        return cls(model.strip(), site)

    def __str__(self) -> str:
        return f"{self.model}{TARGET_SEPARATOR}{self.site}"


def parse_targets(texts: Iterable[str]) -> list[TransferTarget]:
    """Each of ``texts`` as a ``TransferTarget``; a target given twice is refused."""
    if isinstance(texts, str):
        raise InputError(f"transfer targets: expected a list of MODEL@LAYER:POSITION, found "
                         f"the string {texts!r} (write [{texts!r}])")
    out: list[TransferTarget] = []
    for text in texts:
        target = TransferTarget.parse(text)
        if target in out:
            raise InputError(f"transfer target {str(target)!r} is declared twice")
        out.append(target)
    return out


@cache
def corpus_sentences(path: Path = CORPUS_FILE, sha256: str = CORPUS_SHA256) -> tuple[str, ...]:
    """The corpus's sentences, after checking the file against its pinned hash."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the transfer corpus ({exc.strerror})") from None
    found = sha256_bytes(data)
    if found != sha256:
        raise InputError(f"{path}: the transfer corpus has sha256 {found}, not the pinned "
                         f"{sha256}; results measured on it would not compare")
    return tuple(line.strip() for line in data.decode("utf-8").splitlines() if line.strip())


def corpus_prompts() -> list[Prompt]:
    """The corpus as prompts (no label, no spans)."""
    return [Prompt(text=s) for s in corpus_sentences()]


def held_out(n: int) -> np.ndarray:
    """The held-out rows of an ``n``-row corpus: every ``HOLD_OUT_EVERY``-th.

    >>> held_out(7).nonzero()[0].tolist()
    [4]
    """
    return np.asarray(np.arange(n) % HOLD_OUT_EVERY == HOLD_OUT_EVERY - 1)


def map_r2(y_true: np.ndarray, y_pred: np.ndarray, mean: np.ndarray,
           scale: np.ndarray) -> float:
    """R² of predicted activations in the probe's standardised coordinates
    ``(x - mean) / scale``, pooled over features: 1 - SSE / SST, SST around the rows' own
    mean (scikit-learn's ``r2_score(..., multioutput="variance_weighted")`` there).

    >>> y = np.array([[0.0, 1.0], [2.0, 3.0]])
    >>> map_r2(y, y, np.zeros(2), np.ones(2)), map_r2(y, y.mean(0) + 0 * y, np.zeros(2), np.ones(2))
    (1.0, 0.0)
    """
    z = (np.asarray(y_true, np.float64) - mean) / scale
    z_hat = (np.asarray(y_pred, np.float64) - mean) / scale
    total = float(((z - z.mean(axis=0)) ** 2).sum())
    if total == 0.0:
        return 0.0
    return 1.0 - float(((z - z_hat) ** 2).sum()) / total


def transfer_ratio(target_auroc: float | None, source_auroc: float | None) -> float | None:
    """``(target - 0.5) / (source - 0.5)`` clamped to [0, 1]; None when either is missing
    or the source AUROC is at most 0.5 (the probe has nothing to transfer).

    >>> transfer_ratio(0.75, 1.0), transfer_ratio(0.4, 0.9), transfer_ratio(0.99, 0.9)
    (0.5, 0.0, 1.0)
    >>> transfer_ratio(0.8, 0.5) is None
    True
    """
    if target_auroc is None or source_auroc is None or source_auroc <= 0.5:
        return None
    return min(1.0, max(0.0, (target_auroc - 0.5) / (source_auroc - 0.5)))


@dataclass(frozen=True)
class AffineMap:
    """``x -> ((x - x_mean) / x_scale) @ coef + y_mean``, float64."""

    x_mean: np.ndarray  #: (d_in,)
    x_scale: np.ndarray  #: (d_in,), > 0
    coef: np.ndarray  #: (d_in, d_out)
    y_mean: np.ndarray  #: (d_out,)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float64) - self.x_mean) / self.x_scale
        return np.asarray(z @ self.coef + self.y_mean)

    def scaled(self, factor: float) -> AffineMap:
        """The same map with its linear part multiplied by ``factor``."""
        return AffineMap(self.x_mean, self.x_scale, self.coef * factor, self.y_mean)


class RidgeSolver:
    """Ridge regressions on one input matrix ``x`` (rows: sentences), each feature
    standardised on its rows (a constant feature keeps scale 1), from one thin SVD:
    ``coef = V diag(s / (s² + alpha)) Uᵀ (y - mean y)`` for any alpha and any ``y``
    with the same rows."""

    def __init__(self, x: np.ndarray) -> None:
        x = np.asarray(x, dtype=np.float64)
        self.x_mean = x.mean(axis=0)
        scale = x.std(axis=0)
        self.x_scale = np.where(scale > 0, scale, 1.0)
        self._u, self._s, self._vt = np.linalg.svd((x - self.x_mean) / self.x_scale,
                                                   full_matrices=False)

    def fit(self, y: np.ndarray, alpha: float) -> AffineMap:
        return self.path(y, [alpha])[0]

    def path(self, y: np.ndarray, alphas: Sequence[float]) -> list[AffineMap]:
        """The maps of every one of ``alphas`` (one projection of ``y`` shared)."""
        y = np.asarray(y, dtype=np.float64)
        y_mean = y.mean(axis=0)
        projected = self._u.T @ (y - y_mean)
        return [AffineMap(self.x_mean, self.x_scale,
                          self._vt.T @ ((self._s / (self._s ** 2 + a))[:, None] * projected),
                          y_mean) for a in alphas]


def _output_variance(f: AffineMap, x: np.ndarray, scale: np.ndarray) -> float:
    """Total variance of ``f``'s outputs on ``x`` in the probe's coordinates."""
    return float(((f(x) / scale).var(axis=0)).sum())


def _matched(f: AffineMap, x: np.ndarray, scale: np.ndarray, variance: float) -> AffineMap:
    """``f`` scaled so that its output variance on ``x`` is ``variance``."""
    own = _output_variance(f, x, scale)
    return f if own <= 0.0 else f.scaled(float(np.sqrt(variance / own)))


@dataclass(frozen=True)
class TransferMap:
    """A fitted map with its held-out R² and its shuffled-pair controls."""

    fitted: AffineMap  #: refitted on the whole corpus with ``alpha``
    alpha: float
    r2: float  #: held-out R² of the map fitted on the other rows
    r2_by_alpha: tuple[float, ...]  #: the held-out R² of every alpha of ``ALPHAS``
    controls: tuple[AffineMap, ...]  #: shuffled-pair maps on the whole corpus
    control_r2: float  #: mean held-out R² of shuffled-pair maps fitted on the other rows


def fit_transfer_map(x: np.ndarray, y: np.ndarray, mean: np.ndarray, scale: np.ndarray,
                     *, seed: int, alphas: Sequence[float] = ALPHAS,
                     draws: int = CONTROL_DRAWS) -> TransferMap:
    """The map from ``x`` (target activations of the corpus) to ``y`` (the probe's model's
    activations of the same sentences), R² in the coordinates of a scaler with ``mean``
    and ``scale`` (the probe's); the controls are drawn with ``seed``.

    The linear algebra runs on one BLAS thread: its results then do not depend on the
    machine's thread count, and on a busy machine a multi-threaded SVD of the corpus
    waited seconds for its threads where one thread takes a fraction of a second."""
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_transfer_map(x, y, mean, scale, seed=seed, alphas=alphas, draws=draws)


def _fit_transfer_map(x: np.ndarray, y: np.ndarray, mean: np.ndarray, scale: np.ndarray,
                      *, seed: int, alphas: Sequence[float], draws: int) -> TransferMap:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 2 or len(x) != len(y):
        raise InputError(f"transfer map: {x.shape} and {y.shape} are not two matrices with "
                         "one row per sentence")
    held = held_out(len(x))
    fit = ~held
    if held.sum() < 2 or fit.sum() < 2:
        raise InputError(f"transfer map: {len(x)} sentences are too few to hold out every "
                         f"{HOLD_OUT_EVERY}th")
    part = RidgeSolver(x[fit])
    scores = tuple(map_r2(y[held], f(x[held]), mean, scale) for f in part.path(y[fit], alphas))
    best = max(scores)
    chosen = max(i for i, r in enumerate(scores) if r >= best - ALPHA_TOLERANCE)
    alpha = float(alphas[chosen])
    whole = RidgeSolver(x)
    fitted = whole.fit(y, alpha)
    part_map = part.fit(y[fit], alpha)
    variance = _output_variance(fitted, x, scale)
    part_variance = _output_variance(part_map, x[fit], scale)
    rng = np.random.default_rng(seed)
    controls, control_r2 = [], []
    for _ in range(draws):
        controls.append(_matched(whole.fit(y[rng.permutation(len(y))], alpha), x, scale,
                                 variance))
        shuffled = _matched(part.fit(y[fit][rng.permutation(int(fit.sum()))], alpha),
                            x[fit], scale, part_variance)
        control_r2.append(map_r2(y[held], shuffled(x[held]), mean, scale))
    return TransferMap(fitted=fitted, alpha=alpha, r2=scores[chosen], r2_by_alpha=scores,
                       controls=tuple(controls),
                       control_r2=float(np.mean(control_r2)) if control_r2 else float("nan"))


__all__ = ["ALPHAS", "ALPHA_TOLERANCE", "CONTROL_DRAWS", "CORPUS_FILE", "CORPUS_KEY",
           "CORPUS_SHA256", "CORPUS_SIZE", "HOLD_OUT_EVERY", "SPAN_FREE_POSITIONS",
           "TARGET_SEPARATOR", "AffineMap", "RidgeSolver", "TransferMap", "TransferTarget",
           "corpus_prompts", "corpus_sentences", "fit_transfer_map", "held_out", "map_r2",
           "parse_targets", "transfer_ratio"]
