"""Build the reference probes of the registry from scratch (maintainers' tool).

    python tools/build_reference.py            # train, register, evaluate everything
    python tools/build_reference.py --only verb-grammar-smollm2-135m-l20-v1

For each reference probe: ``probebench train`` into ``registry/artifacts/<name>/``, an
entry ``registry/probes/probebench/<name>.yaml`` (status live, artifact pinned by its
bundle hash), then one ``submit`` session over all entries (the eval-awareness guard
first, so every other probe on its model is corrected by it), results appended to
``registry/results/`` and each entry's ``evalaware_auroc`` set from its result.
Deterministic: a rerun on the same machine rewrites the same bytes and appends no
result that did not change.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CREATED = dt.date(2026, 11, 22)
ORG = "probebench"


@dataclass(frozen=True)
class Reference:
    name: str
    task: str
    site: str
    kind: str = "linear"
    model: str = "smollm2-135m"
    category: str = "grammar"
    title: str = ""
    tagline: str = ""

    @property
    def entry_id(self) -> str:
        return f"{ORG}/{self.name}"


GUARD = Reference(
    "eval-awareness-guard-smollm2-135m-l15-v1", "eval_awareness", "15:last_token",
    category="eval-awareness", title="Eval-awareness guard (SmolLM2-135M)",
    tagline="How evaluation-like a prompt looks; corrects every SmolLM2 probe's AUROC")

REFERENCES = [
    GUARD,
    Reference("verb-grammar-smollm2-135m-l8-v1", "verb_grammar", "8:last_token",
              title="Verb grammar EN/ES, layer 8",
              tagline="Is the verb form right? Bilingual verb grammar at layer 8"),
    Reference("verb-grammar-smollm2-135m-l16-v1", "verb_grammar", "16:last_token",
              title="Verb grammar EN/ES, layer 16",
              tagline="Is the verb form right? Bilingual verb grammar at layer 16"),
    Reference("verb-grammar-smollm2-135m-l24-v1", "verb_grammar", "24:last_token",
              title="Verb grammar EN/ES, layer 24",
              tagline="Is the verb form right? Bilingual verb grammar at layer 24"),
    Reference("verb-grammar-mlp-smollm2-135m-l16-v1", "verb_grammar", "16:last_token",
              kind="mlp", title="Verb grammar EN/ES, MLP at layer 16",
              tagline="Is the verb form right? A one-hidden-layer MLP at layer 16"),
    Reference("blimp-det-noun-smollm2-135m-l15-v1", "blimp_determiner_noun_agreement_1",
              "15:last_token", title="BLiMP determiner-noun agreement",
              tagline="Grammatical or not: determiner-noun number agreement"),
    Reference("blimp-irregular-sv-smollm2-135m-l15-v1",
              "blimp_irregular_plural_subject_verb_agreement_1", "15:last_token",
              title="BLiMP irregular-plural subject-verb agreement",
              tagline="Grammatical or not: subject-verb agreement, irregular plurals"),
    Reference("blimp-anaphor-gender-smollm2-135m-l15-v1", "blimp_anaphor_gender_agreement",
              "15:last_token", title="BLiMP anaphor gender agreement",
              tagline="Grammatical or not: reflexive pronoun gender agreement"),
    Reference("syntaxgym-number-prep-smollm2-135m-l15-v1", "syntaxgym_number_prep",
              "15:last_token", category="syntax", title="SyntaxGym number agreement (PP)",
              tagline="Expected or anomalous: agreement across a prepositional phrase"),
    Reference("syntaxgym-reflexive-src-smollm2-135m-l15-v1", "syntaxgym_reflexive_src_masc",
              "15:last_token", category="syntax", title="SyntaxGym reflexives (SRC)",
              tagline="Expected or anomalous: reflexive licensing across a relative clause"),
    Reference("syntaxgym-npi-orc-smollm2-135m-l15-v1", "syntaxgym_npi_orc_any",
              "15:last_token", category="syntax", title="SyntaxGym NPI licensing (ORC)",
              tagline="Expected or anomalous: 'any' licensed by negation, not a relative"),
    Reference("blimp-det-noun-minilm-l6-l4-v1", "blimp_determiner_noun_agreement_1",
              "4:token_avg", model="minilm-l6", title="BLiMP determiner-noun (MiniLM)",
              tagline="Determiner-noun agreement read from all-MiniLM-L6-v2, layer 4"),
]


def entry_of(ref: Reference, bundle: str, folder: Path, weights: object) -> dict[str, object]:
    from probebench.artifact.weights import ProbeWeights

    assert isinstance(weights, ProbeWeights)
    params = sum(int(w.size) for w in weights.weights) + sum(int(b.size)
                                                            for b in weights.biases)
    size = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    layer, position = ref.site.split(":")
    return {
        "id": ref.entry_id, "name": ref.title,
        "short_name": ref.name.replace("-smollm2-135m", "").removesuffix("-v1")[:40],
        "author": "probebench maintainers", "org": ORG, "category": ref.category,
        "probe_type": ref.kind, "model_id": ref.model, "layer": int(layer),
        "position": position, "paper": None, "paper_title": None,
        "artifact_url": str(folder.relative_to(ROOT)), "artifact_sha256": bundle,
        "reproducer_notebook": "train.ipynb", "colab_url": None, "license": "Apache-2.0",
        "release": CREATED.isoformat(), "param_count": params, "size_mb": round(size, 4),
        "tagline": ref.tagline,
        "description": f"Reference probe trained with `probebench train --task {ref.task} "
                       f"--model {ref.model} --site {ref.site} --kind {ref.kind}` "
                       "(SentEval protocol: regularisation chosen on validation, refit on "
                       "train + validation). Its folder holds train.ipynb, which refits it "
                       "from scratch offline.",
        "status": "live", "tasks": [ref.task], "transfer_targets": [],
    }


def build(refs: list[Reference], registry: Path) -> None:
    from probebench.artifact.checks import validate
    from probebench.models.activations import Site
    from probebench.train import TrainConfig, train
    from probebench.train.artifact import write_artifact

    for ref in refs:
        folder = registry / "artifacts" / ref.name
        config = TrainConfig(task=ref.task, site=Site.parse(ref.site), model=ref.model,
                             kind=ref.kind)
        trained = train(config, progress=False)
        write_artifact(trained, folder, created_at=CREATED, title=ref.title, force=True)
        report = validate(folder)
        assert report.bundle_sha256 is not None and report.weights is not None
        entry = entry_of(ref, report.bundle_sha256, folder, report.weights)
        path = registry / "probes" / ORG / f"{ref.name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        old = yaml.safe_load(path.read_text()) if path.is_file() else {}
        for key in ("evalaware_auroc", "evalaware_imputation_acknowledged"):
            if key in old:
                entry[key] = old[key]
        path.write_text(yaml.safe_dump(entry, sort_keys=False, allow_unicode=True))
        print(f"{ref.entry_id}: {trained.headline.auroc.value:.3f} AUROC, C/alpha "
              f"{trained.chosen:g}, bundle {report.bundle_sha256[:12]}", flush=True)
    guards = registry / "guards.yaml"
    guards.write_text("# model -> entry id of its eval-awareness guard (see "
                      "probebench/registry/guards.py)\n"
                      f"{GUARD.model}: {GUARD.entry_id}\n")


def evaluate(refs: list[Reference], registry: Path) -> None:
    from probebench.evaluation.submit import Session, SubmitOptions, submit
    from probebench.registry.store import store_submission

    session = Session(SubmitOptions(registry=registry, repo=ROOT, progress=False))
    for ref in refs:
        path = registry / "probes" / ORG / f"{ref.name}.yaml"
        entry = yaml.safe_load(path.read_text())
        result = submit(ROOT / entry["artifact_url"], entry["tasks"], session=session)
        assert result.probe.bundle_sha256 == entry["artifact_sha256"]
        store_submission(registry, ref.entry_id, result)
        corrected = [t.evalaware_auroc for t in result.tasks]
        entry.pop("evalaware_auroc", None)
        entry.pop("evalaware_imputation_acknowledged", None)
        if all(not c.imputed and c.value is not None for c in corrected):
            values = [c.value for c in corrected if c.value is not None]
            entry["evalaware_auroc"] = round(sum(values) / len(values), 4)
        else:
            entry["evalaware_imputation_acknowledged"] = True
        path.write_text(yaml.safe_dump(entry, sort_keys=False, allow_unicode=True))
        task = result.tasks[0]
        print(f"{ref.entry_id}: submit AUROC {task.auroc.value:.3f} "
              f"[{task.auroc.ci_low:.3f}, {task.auroc.ci_high:.3f}], evalaware "
              f"{task.evalaware_auroc.value}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", type=Path, default=ROOT / "registry")
    parser.add_argument("--only", action="append", default=None, metavar="NAME")
    parser.add_argument("--skip-train", action="store_true",
                        help="only re-evaluate the existing artifacts")
    args = parser.parse_args()
    refs = [r for r in REFERENCES if args.only is None or r.name in args.only]
    if not args.skip_train:
        build(refs, args.registry)
    evaluate(refs, args.registry)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
