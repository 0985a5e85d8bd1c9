"""``load_probe``: a registered probe (by id) or an artifact folder, ready to score.

As SAELens's ``SAE.from_pretrained`` turns a registry id into a usable object, so
``load_probe("probebench/verb-grammar-mlp-smollm2-135m-l20-v1")`` returns a ``Probe``
that scores texts (running its model at its site) or activations, and carries its
metadata. The artifact is validated first, with the same checks as ``submit``
(including the registered ``artifact_sha256`` for an id), so a probe that loads is the
probe the leaderboard scored; and scoring texts goes through the same extraction and
forward as ``submit``, so its numbers are ``submit``'s per-prompt predictions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probebench.artifact.checks import validate
from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError, ProbebenchError
from probebench.models.activations import extract
from probebench.models.loading import LoadedModel, ResolvedModel, resolve_model
from probebench.prompts import Prompt, as_prompts
from probebench.registry.entry import MAX_ENTRY_ID, Entry
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog

if TYPE_CHECKING:
    pass

__all__ = ["NoDirectionError", "Probe", "load_probe", "registry_ids"]

#: what a registry id looks like (``org/name``); a stricter pattern checks entries
#: longest reference load_probe takes: a folder path within PATH_MAX
MAX_REF = 4096
_ID_SHAPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-]*/[A-Za-z0-9][A-Za-z0-9.\-_]*\Z")


class NoDirectionError(ProbebenchError):
    """The probe has no single direction in activation space (it is not linear)."""


@dataclass(eq=False)
class Probe:
    """A validated probe with its metadata, which scores texts and activations.

    Made by ``load_probe``. ``score_texts`` runs the probe's model at its site and
    ``score_activations`` applies the probe to activations you already have; both return
    P(``classes[1]``), the positive class. The model is loaded lazily, once per probe
    (and not at all while the activation cache answers).
    """

    id: str                  #: the registry id, or the artifact folder's name
    meta: ProbeMeta          #: the artifact's ``meta.yaml``
    entry: Entry | None      #: the registry entry (None for a folder loaded directly)
    weights: ProbeWeights    #: scaler and layers as plain float64 arrays
    #: the artifact folder the probe was loaded from, validated: for a registry id read
    #: from a leaderboard or URL, the copy in the mirror cache
    #: (``$PROBEBENCH_HOME/mirrors/<index sha256>/registry/artifacts/...``; read it, do not
    #: edit it: ``probebench registry download ID --out DIR`` or
    #: ``probebench.download_artifact`` copies it out)
    folder: Path
    bundle_sha256: str       #: the artifact's bundle hash (``probebench hash``)
    #: (device, dtype) -> the model, resolved, or loaded once extraction needed it
    _models: dict[tuple[str, str], LoadedModel | ResolvedModel] = field(
        default_factory=dict, init=False, repr=False)

    @property
    def site(self) -> Site:
        """Where the probe reads: ``Site(meta.layer, meta.position)``."""
        return Site(self.meta.layer, self.meta.position)

    @property
    def model(self) -> str:
        """The model the probe reads (an alias or a Hugging Face id, as in ``meta.yaml``)."""
        return self.meta.model

    @property
    def classes(self) -> tuple[object, ...]:
        """The class labels; the score is the probability of ``classes[1]``."""
        return self.weights.classes

    # --- scoring ---------------------------------------------------------------------

    def score_activations(self, x: np.ndarray) -> np.ndarray:
        """P(``classes[1]``) of each row of ``x``, float64, shape ``(n,)``.

        Args:
            x: activations at the probe's site, shape ``(n, hidden_size)``; float32
                activations from ``extract`` or ``Probe.activations`` are fine.

        Returns:
            the probabilities, computed as ``submit`` computes them (for a probe of more
            than two classes, the ``(n, K)`` probabilities in ``classes`` order).
        """
        x = self._checked(x)
        probs = self.weights.predict_proba(x)
        return np.asarray(probs[:, 1] if len(self.weights.classes) == 2 else probs)

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        """The logit of ``classes[1]`` for each row of ``x`` (shape ``(n, hidden_size)``),
        float64, shape ``(n,)``: the value a linear probe's ``direction`` reproduces."""
        return self.weights.decision_function(self._checked(x))

    def activations(self, texts: Sequence[str | Prompt], *, device: str = "auto",
                    dtype: str = "auto", cache: bool = True, batch_tokens: int | None = None,
                    max_batch_size: int | None = None, progress: bool = False
                    ) -> np.ndarray:
        """The model's pooled activations at the probe's site, float32,
        shape ``(len(texts), hidden_size)``, through the activation cache.

        Args:
            texts: plain strings, or ``Prompt`` objects (which carry the spans that
                marker positions such as ``end_question`` read).
            device: ``auto`` (CUDA when present), ``cpu`` or ``cuda``.
            dtype: ``auto`` is float32, the reference precision; ``bfloat16``/``float16``.
            cache: read and write the activation cache (False bypasses it both ways).
            batch_tokens, max_batch_size: the batch budget (None: sized from the device,
                as ``submit`` sizes it).
            progress: report model loading and batches on stderr.
        """
        if isinstance(texts, str):
            raise InputError("score a list of texts: give [text] for one text")
        prompts = as_prompts(texts)
        key = (device, dtype)
        source = self._models.get(key)
        if source is None:
            source = self._models[key] = resolve_model(self.model, device=device, dtype=dtype,
                                                       progress=progress)
        # the same call as ``submit``'s ``Session.activations_at``: the same batches, pooling
        # and cache keys, hence the same numbers
        result = extract(source, prompts, [self.site], cache=cache, progress=progress,
                         batch_tokens=batch_tokens, max_batch_size=max_batch_size)
        if result.loaded is not None:  # a cache miss loaded the model: keep it
            self._models[key] = result.loaded
        return result[self.site]

    def score_texts(self, texts: Sequence[str | Prompt], *, device: str = "auto",
                    dtype: str = "auto", cache: bool = True, batch_tokens: int | None = None,
                    max_batch_size: int | None = None, progress: bool = False
                    ) -> np.ndarray:
        """P(``classes[1]``) of each text, float64, shape ``(len(texts),)``: the model runs
        at the probe's site, then the probe (``activations`` then ``score_activations``;
        the options are ``activations``'s).

        Given the prompts of a task's test split, in test order, this is ``submit``'s
        per-prompt ``predictions.probs`` before they are rounded for storage.
        """
        return self.score_activations(self.activations(
            texts, device=device, dtype=dtype, cache=cache, batch_tokens=batch_tokens,
            max_batch_size=max_batch_size, progress=progress))

    # --- the direction of a linear probe -----------------------------------------------

    @property
    def direction(self) -> np.ndarray:
        """A linear probe's weight vector in activation space, shape ``(hidden_size,)``.

        The scaler folded in (``w / scale``), so that for activations ``x``::

            x @ probe.direction + probe.bias == probe.decision_function(x)

        (to float rounding). Its units are logit per unit of activation; normalise it for
        a unit direction. An MLP probe raises ``NoDirectionError``: its decision is a
        nonlinear function of the activations, with no single direction.
        """
        w, _ = self._linear()
        return w

    @property
    def bias(self) -> float:
        """A linear probe's intercept in activation space (see ``direction``)."""
        _, b = self._linear()
        return b

    def _linear(self) -> tuple[np.ndarray, float]:
        wts = self.weights
        if len(wts.weights) != 1 or wts.probe_type != "linear":
            hidden = " -> ".join(str(n) for n in wts.hidden_sizes)
            raise NoDirectionError(
                f"probe {self.id} is not linear ({wts.probe_type}, hidden layers {hidden}): "
                "its score is a nonlinear function of the activations, so it has no single "
                "direction; use score_activations, or weights.weights[0] for the first "
                "layer's directions")
        if len(wts.classes) != 2:
            raise NoDirectionError(f"probe {self.id} has {len(wts.classes)} classes: one "
                                   "direction per class, in weights.weights[0]")
        w = wts.weights[0][:, 0] / wts.scale
        return np.asarray(w), float(wts.biases[0][0] - wts.mean @ w)

    def _checked(self, x: np.ndarray) -> np.ndarray:
        arr = np.asarray(x)
        if arr.ndim != 2 or arr.shape[1] != self.weights.n_features:
            raise InputError(f"probe {self.id} reads activations of shape (n, "
                             f"{self.weights.n_features}); found {arr.shape} (one vector: "
                             "x[None, :])")
        return arr

    def __repr__(self) -> str:
        layers = " -> ".join(str(n) for n in [self.weights.n_features,
                                              *self.weights.hidden_sizes,
                                              self.weights.weights[-1].shape[1]])
        return (f"Probe({self.id!r}, {self.weights.probe_type} {layers}, reads "
                f"{self.model} at {self.site}, bundle {self.bundle_sha256[:12]})")


def registry_ids(registry: Path) -> list[str]:
    """The ids of every entry file of ``registry`` (``probes/<org>/<name>.yaml``)."""
    probes = Path(registry) / "probes"
    return sorted(f"{p.parent.name}/{p.stem}" for p in probes.glob("*/*.yaml"))


def load_probe(ref: str | Path, *, registry: str | Path | None = None,
               registry_sha256: str | None = None, repo: Path | None = None,
               catalog: TaskCatalog | None = None) -> Probe:
    """Load a registered probe by id, or the probe of an artifact folder, ready to score.

    The artifact is validated as ``submit`` validates it (every ``validate`` check; for
    a registry id, its bundle must hash to the entry's ``artifact_sha256``), and nothing
    in it is executed.

    Args:
        ref: a registry id ``org/name`` (e.g.
            ``probebench/verb-grammar-mlp-smollm2-135m-l20-v1``), or the path of an
            artifact folder (a ``Path``, or a string naming an existing folder).
        registry: where the registry is (``probebench.registry.mirror.open_registry``):
            a folder holding ``probes/``, a built leaderboard holding ``registry.json``,
            or the URL of a published ``registry.json`` (its files are downloaded into
            the cache and checked against the index before anything loads; an artifact
            folder that leads out of the cache is refused before it is read). Default: the
            ``$PROBEBENCH_REGISTRY`` variable, else the enclosing checkout's
            ``registry/``, else the project's published leaderboard.
        registry_sha256: pins the ``registry.json`` of a site or URL (also
            ``URL#sha256=HEX``): a changed index is refused. Recommended when citing.
        repo: the repository root that a source folder's ``artifact_url`` paths are
            relative to (default: the registry folder's parent; with ``repo`` alone, the
            registry is ``REPO/registry``).
        catalog: the tasks that reported metrics are checked against (default:
            ``TaskCatalog.for_repo(repo)`` for an id, the packaged tasks for a folder).

    Returns:
        a ``Probe``. An unknown id is an ``InputError`` that suggests close ids.

    Example::

        probe = load_probe("probebench/blimp-det-noun-smollm2-135m-l15-v1")
        probe.score_texts(["My sister bought those books.", "My sister bought that books."])
        # array([0.95, 0.08]): P(grammatical) of each sentence
        load_probe("probebench/blimp-det-noun-smollm2-135m-l15-v1",
                   registry="https://example.org/leaderboard/registry.json#sha256=...")
    """

    if isinstance(ref, str) and len(ref) > MAX_REF:
        raise InputError(f"{ref[:60]}...: {len(ref)} characters, neither a registry id "
                         f"(at most {MAX_ENTRY_ID}) nor a folder path (at most {MAX_REF})")
    try:
        is_folder = Path(ref).is_dir()
    except OSError as exc:  # a name too long for the file system, say
        raise InputError(f"{str(ref)[:60]}: not a usable folder path "
                         f"({exc.strerror or exc})") from None
    if isinstance(ref, Path) or is_folder or not _ID_SHAPE.match(ref):
        folder = Path(ref)
        if not is_folder:
            raise InputError(f"{ref}: neither an artifact folder nor a registry id "
                             "(org/name, e.g. probebench/verb-grammar-smollm2-135m-l15-v2)")
        return _from_folder(folder, folder.resolve().name, None, catalog, None)
    if len(ref) > MAX_ENTRY_ID:
        raise InputError(f"{ref[:60]}...: an entry id has at most {MAX_ENTRY_ID} characters "
                         f"(this one has {len(ref)})")
    from probebench.registry.mirror import entry_artifact  # the HTTP client loads only here

    found = entry_artifact(ref, registry, sha256=registry_sha256, repo=repo)
    base = Path(repo) if repo is not None and found.source.kind == "folder" \
        else found.source.repo
    return _from_folder(found.folder, found.entry.id, found.entry,
                        catalog if catalog is not None else TaskCatalog.for_repo(base),
                        found.entry.artifact_sha256)


def _from_folder(folder: Path, probe_id: str, entry: Entry | None,
                 catalog: TaskCatalog | None, expected_sha256: str | None) -> Probe:
    report = validate(folder, catalog=catalog, expected_sha256=expected_sha256)
    if not report.valid:
        failed = "; ".join(f"{c.name}: {c.message}" for c in report.failed())
        raise InputError(f"{folder}: the artifact of {probe_id} does not validate ({failed})")
    assert report.meta is not None and report.weights is not None
    assert report.bundle_sha256 is not None
    return Probe(id=probe_id, meta=report.meta, entry=entry, weights=report.weights,
                 folder=folder, bundle_sha256=report.bundle_sha256)
