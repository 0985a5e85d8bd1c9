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
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from probebench.evaluation.results import IntervalOut
    from probebench.tasks.catalog import TaskCatalog

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CREATED = dt.date(2026, 11, 22)
#: when the -v2 references were re-trained: the hyper-parameter choice became validation
#: log-loss (METHODOLOGY.md), which changed the chosen C of the entries below
RETRAINED = dt.date(2026, 11, 24)
#: when the verb references were re-trained on verb_grammar_v2 (its items with two right
#: answers deprecated and replaced: docs/tasks.md, "verb_grammar_v2: the audit")
VERBS_V2 = dt.date(2026, 11, 27)
VERBS_V2_NOTICE = (f"Re-trained on verb_grammar_v2 as {{new}} on {VERBS_V2.isoformat()}: "
                   "verb_grammar scores items with two right answers (a habitual past, a "
                   "Spanish preterite with 'siempre') as one; see docs/tasks.md, "
                   "\"verb_grammar_v2: the audit\".")
#: the verb entries re-trained on verb_grammar_v2 (old name -> new name)
VERBS_RETRAINED = {
    "verb-grammar-smollm2-135m-l8-v2": "verb-grammar-smollm2-135m-l8-v3",
    "verb-grammar-smollm2-135m-l15-v2": "verb-grammar-smollm2-135m-l15-v3",
    "verb-grammar-smollm2-135m-l20-v1": "verb-grammar-smollm2-135m-l20-v2",
    "verb-grammar-smollm2-135m-l24-v2": "verb-grammar-smollm2-135m-l24-v3",
    "verb-grammar-mlp-smollm2-135m-l20-v1": "verb-grammar-mlp-smollm2-135m-l20-v2",
}
#: v1 entries re-trained as v2 -> the notice their deprecation carries (the v1 artifacts
#: and results stay: published artifacts never change)
RETIRED = {
    f"{stem}-v1": (f"{stem}-v2", change) for stem, change in (
        ("eval-awareness-guard-smollm2-135m-l15", "C 0.01 -> 10"),
        ("verb-grammar-smollm2-135m-l8", "C 1 -> 0.1"),
        ("verb-grammar-smollm2-135m-l15", "C 1 -> 0.1"),
        ("verb-grammar-smollm2-135m-l24", "C 1 -> 0.1"),
        ("blimp-irregular-sv-smollm2-135m-l15", "C 10 -> 0.01"),
        ("syntaxgym-number-prep-smollm2-135m-l15", "C 1 -> 0.1"),
        ("syntaxgym-npi-orc-smollm2-135m-l15", "C 0.001 -> 0.1"),
        ("blimp-det-noun-minilm-l6-l4", "C 0.01 -> 0.1"),
    )}


def catalog() -> TaskCatalog:
    """The tasks every step reads: the repository's own (the packaged catalog here)."""
    from probebench.tasks.catalog import TaskCatalog

    return TaskCatalog.for_repo(ROOT)
ORG = "probebench"


@dataclass(frozen=True)
class Reference:
    name: str
    task: str
    site: str
    probe_type: str = "linear"
    model: str = "smollm2-135m"
    category: str = "grammar"
    #: how a linear probe is fitted: logistic or mass-mean (the difference of class means)
    method: str = "logistic"
    title: str = ""
    tagline: str = ""
    #: when it was trained (None: from its version, v1 CREATED, v2 RETRAINED)
    trained: dt.date | None = None

    @property
    def entry_id(self) -> str:
        return f"{ORG}/{self.name}"

    @property
    def created(self) -> dt.date:
        if self.trained is not None:
            return self.trained
        return RETRAINED if self.name.endswith("-v2") else CREATED


GUARD = Reference(
    "eval-awareness-guard-smollm2-135m-l15-v2", "eval_awareness", "15:last_token",
    category="eval-awareness", title="Eval-awareness guard (SmolLM2-135M)",
    tagline="How evaluation-like a prompt looks; corrects every SmolLM2 probe's AUROC")

#: when the truth, honesty and refusal references were trained
FIELD_FAMILIES = dt.date(2026, 11, 27)
#: one site per family, chosen by `probebench sweep` on validation data only (the lowest
#: validation log-loss over layers 3, 6, ..., 27; docs/reference-probes.md): truth on
#: truth_cities (last_token: layer 21), honesty on honesty_instructed (end_answer: the
#: fact's last token, layer 21), refusal on refusal_harmful (last_token: the last
#: post-instruction token, layer 27). Every task of a family is read at its family's site,
#: so the generalisation matrix compares probes at one site and its sibling passes are
#: shared.
FAMILY_SITES = {"truth": "21:last_token", "honesty": "21:end_answer",
                "refusal": "27:last_token"}
#: (task, family, short name, title, tagline)
FIELD_TASKS = [
    ("truth_cities", "truth", "truth-cities", "Cities: true or false",
     "Is 'The city of X is in Y.' true? (Marks & Tegmark's cities)"),
    ("truth_neg_cities", "truth", "truth-neg-cities", "Negated cities: true or false",
     "Is 'The city of X is not in Y.' true?"),
    ("truth_larger_than", "truth", "truth-larger-than", "Larger than: true or false",
     "Is 'Fifty-one is larger than forty-three.' true?"),
    ("truth_smaller_than", "truth", "truth-smaller-than", "Smaller than: true or false",
     "Is 'Forty-three is smaller than fifty-one.' true?"),
    ("truth_sp_en_trans", "truth", "truth-sp-en-trans", "Spanish-English: true or false",
     "Is the Spanish word's translation right?"),
    ("truth_neg_sp_en_trans", "truth", "truth-neg-sp-en-trans",
     "Negated Spanish-English: true or false",
     "Is 'The Spanish word X does not mean Y.' true?"),
    ("truth_facts", "truth", "truth-facts", "Facts (Azaria & Mitchell): true or false",
     "Is a general-knowledge statement true?"),
    ("honesty_instructed", "honesty", "honesty-instructed",
     "Honest or dishonest instruction (instructed pairs)",
     "Was the fact said under a dishonest instruction?"),
    ("honesty_instructed_cities", "honesty", "honesty-instructed-cities",
     "Honest or dishonest instruction, city facts",
     "Instructed pairs over city facts: the cross-domain target"),
    ("refusal_harmful", "refusal", "refusal-harmful", "Harmful or ordinary request",
     "Should the model refuse? AdvBench against Alpaca, post-instruction"),
]


def _field_references() -> list[Reference]:
    out = []
    for task, family, short, title, tagline in FIELD_TASKS:
        site = FAMILY_SITES[family]
        layer = site.split(":")[0]
        for method, suffix, what in (("logistic", "", "logistic regression"),
                                     ("mass-mean", "-massmean", "mass-mean")):
            out.append(Reference(f"{short}{suffix}-smollm2-135m-l{layer}-v1", task, site,
                                 category=family, method=method,
                                 title=f"{title} ({what})", trained=FIELD_FAMILIES,
                                 tagline=tagline))
    return out


#: all-MiniLM-L6-v2 where an encoder fits the task: the cities and their negation (plain
#: statements; an encoder has no chat template and no answer to give), at the site a sweep
#: on truth_cities' validation data chose (token_avg: a BERT last_token is its [SEP])
MINILM_SITE = "5:token_avg"
MINILM_TASKS = [("truth_cities", "truth-cities", "Cities: true or false, MiniLM"),
                ("truth_neg_cities", "truth-neg-cities", "Negated cities: true or false, MiniLM")]


def _minilm_references() -> list[Reference]:
    return [Reference(f"{short}{suffix}-minilm-l6-l5-v1", task, MINILM_SITE,
                      model="minilm-l6", category="truth", method=method,
                      title=f"{title} ({what})", trained=FIELD_FAMILIES,
                      tagline="The same statements read from all-MiniLM-L6-v2, layer 5")
            for task, short, title in MINILM_TASKS
            for method, suffix, what in (("logistic", "", "logistic regression"),
                                         ("mass-mean", "-massmean", "mass-mean"))]


FIELD_REFERENCES = _field_references() + _minilm_references()

REFERENCES = [
    GUARD,
    Reference("verb-grammar-smollm2-135m-l8-v3", "verb_grammar_v2", "8:token_avg",
              title="Verb grammar EN/ES, layer 8", trained=VERBS_V2,
              tagline="Is the verb form right? Bilingual verb grammar at layer 8"),
    Reference("verb-grammar-smollm2-135m-l15-v3", "verb_grammar_v2", "15:token_avg",
              title="Verb grammar EN/ES, layer 15", trained=VERBS_V2,
              tagline="Is the verb form right? Bilingual verb grammar at layer 15"),
    Reference("verb-grammar-smollm2-135m-l20-v2", "verb_grammar_v2", "20:token_avg",
              title="Verb grammar EN/ES, layer 20", trained=VERBS_V2,
              tagline="Is the verb form right? Bilingual verb grammar at layer 20"),
    Reference("verb-grammar-smollm2-135m-l24-v3", "verb_grammar_v2", "24:token_avg",
              title="Verb grammar EN/ES, layer 24", trained=VERBS_V2,
              tagline="Is the verb form right? Bilingual verb grammar at layer 24"),
    Reference("verb-grammar-mlp-smollm2-135m-l20-v2", "verb_grammar_v2", "20:token_avg",
              probe_type="mlp", title="Verb grammar EN/ES, MLP at layer 20", trained=VERBS_V2,
              tagline="Is the verb form right? A one-hidden-layer MLP at layer 20"),
    Reference("blimp-det-noun-smollm2-135m-l15-v1", "blimp_determiner_noun_agreement_1",
              "15:last_token", title="BLiMP determiner-noun agreement",
              tagline="Grammatical or not: determiner-noun number agreement"),
    Reference("blimp-irregular-sv-smollm2-135m-l15-v2",
              "blimp_irregular_plural_subject_verb_agreement_1", "15:last_token",
              title="BLiMP irregular-plural subject-verb agreement",
              tagline="Grammatical or not: subject-verb agreement, irregular plurals"),
    Reference("blimp-anaphor-gender-smollm2-135m-l15-v1", "blimp_anaphor_gender_agreement",
              "15:last_token", title="BLiMP anaphor gender agreement",
              tagline="Grammatical or not: reflexive pronoun gender agreement"),
    Reference("syntaxgym-number-prep-smollm2-135m-l15-v2", "syntaxgym_number_prep",
              "15:last_token", category="syntax", title="SyntaxGym number agreement (PP)",
              tagline="Expected or anomalous: agreement across a prepositional phrase"),
    Reference("syntaxgym-reflexive-src-smollm2-135m-l15-v1", "syntaxgym_reflexive_src_masc",
              "15:last_token", category="syntax", title="SyntaxGym reflexives (SRC)",
              tagline="Expected or anomalous: reflexive licensing across a relative clause"),
    Reference("syntaxgym-npi-orc-smollm2-135m-l15-v2", "syntaxgym_npi_orc_any",
              "15:last_token", category="syntax", title="SyntaxGym NPI licensing (ORC)",
              tagline="Expected or anomalous: 'any' licensed by negation, not a relative"),
    Reference("blimp-det-noun-minilm-l6-l4-v2", "blimp_determiner_noun_agreement_1",
              "4:token_avg", model="minilm-l6", title="BLiMP determiner-noun (MiniLM)",
              tagline="Determiner-noun agreement read from all-MiniLM-L6-v2, layer 4"),
    *FIELD_REFERENCES,
]


#: each reference model's transfer target: the other embedded model, at the token_avg site
#: whose ridge map from it had (within 0.05) the best held-out R² on the neutral corpus
#: among the layers tried (MiniLM 2-6, SmolLM2 6-24), and which the other model's
#: reference probes read (MiniLM layer 4, SmolLM2 layer 15); token_avg beat last_token
#: for every source (a BERT last_token is its [SEP])
TRANSFER_TARGETS = {"smollm2-135m": "minilm-l6@4:token_avg",
                    "minilm-l6": "smollm2-135m@15:token_avg"}


def entry_of(ref: Reference, bundle: str, folder: Path, weights: object) -> dict[str, object]:
    from probebench.artifact import scan
    from probebench.artifact.weights import ProbeWeights
    from probebench.registry.entry import artifact_megabytes, trained_parameters

    assert isinstance(weights, ProbeWeights)
    # the definitions `registry check` holds the entry to
    params = trained_parameters(weights)
    size = artifact_megabytes(scan(folder).files)
    layer, position = ref.site.split(":")
    return {
        "id": ref.entry_id, "name": ref.title,
        "short_name": ref.name.replace("-smollm2-135m", "").removesuffix("-v1")[:40],
        "author": "probebench maintainers", "org": ORG, "category": ref.category,
        "probe_type": ref.probe_type, "model": ref.model, "layer": int(layer),
        "position": position, "paper": None, "paper_title": None,
        "artifact_url": str(folder.relative_to(ROOT)), "artifact_sha256": bundle,
        "reproducer_notebook": "train.ipynb", "colab_url": None, "license": "Apache-2.0",
        "release": ref.created.isoformat(), "param_count": params, "size_mb": round(size, 4),
        "tagline": ref.tagline,
        "description": f"Reference probe trained with `probebench train --task {ref.task} "
                       f"--model {ref.model} --site {ref.site} --probe-type {ref.probe_type}"
                       + (f" --method {ref.method}" if ref.method != "logistic" else "")
                       + "` "
                       "(SentEval protocol: regularisation chosen by validation log-loss, "
                       "refit on train + validation). Its folder holds train.ipynb, which "
                       "refits it from scratch offline.",
        "status": "live", "tasks": [ref.task],
        "transfer_targets": [TRANSFER_TARGETS[ref.model]],
    }


def build(refs: list[Reference], registry: Path) -> None:
    from probebench.artifact.checks import validate
    from probebench.sites import Site
    from probebench.train import TrainConfig, train
    from probebench.train.artifact import write_artifact

    for ref in refs:
        folder = registry / "artifacts" / ref.name
        config = TrainConfig(task=ref.task, site=Site.parse(ref.site), model=ref.model,
                             probe_type=ref.probe_type, method=ref.method)
        trained = train(config, catalog=catalog(), progress=False)
        write_artifact(trained, folder, created_at=ref.created, title=ref.title, force=True,
                       catalog=catalog())
        report = validate(folder, catalog=catalog())
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
    retire(registry)
    write_repo_notebooks()
    guards = registry / "guards.yaml"
    guards.write_text("# model -> entry id of its eval-awareness guard (see "
                      "probebench/registry/guards.py)\n"
                      f"{GUARD.model}: {GUARD.entry_id}\n")


def retired_refs(registry: Path) -> list[Reference]:
    """The deprecated entries, as references to re-evaluate (never to re-train)."""
    out = []
    for old in [*RETIRED, *VERBS_RETRAINED]:
        path = registry / "probes" / ORG / f"{old}.yaml"
        if path.is_file():
            e = yaml.safe_load(path.read_text())
            out.append(Reference(old, e["tasks"][0], f"{e['layer']}:{e['position']}",
                                 probe_type=e["probe_type"], model=e["model"]))
    return out


def retire(registry: Path) -> None:
    """Deprecate each re-trained v1 entry to the archive with its notice (only the status
    and notice lines change; its artifact and results stay)."""
    for old, (new, change) in RETIRED.items():
        path = registry / "probes" / ORG / f"{old}.yaml"
        if not path.is_file() or not (registry / "probes" / ORG / f"{new}.yaml").is_file():
            continue
        entry = yaml.safe_load(path.read_text())
        entry["status"] = "deprecated"
        entry["notice"] = (f"Re-trained as {ORG}/{new} on {RETRAINED.isoformat()}: the "
                           "regularisation is now chosen by validation log-loss, not "
                           f"accuracy ({change}); see METHODOLOGY.md.")
        path.write_text(yaml.safe_dump(entry, sort_keys=False, allow_unicode=True))
    for old, new in VERBS_RETRAINED.items():
        path = registry / "probes" / ORG / f"{old}.yaml"
        if not path.is_file() or not (registry / "probes" / ORG / f"{new}.yaml").is_file():
            continue
        entry = yaml.safe_load(path.read_text())
        entry["status"] = "deprecated"
        entry["notice"] = VERBS_V2_NOTICE.format(new=f"{ORG}/{new}")
        path.write_text(yaml.safe_dump(entry, sort_keys=False, allow_unicode=True))


#: the reference probe that notebooks/train.ipynb and notebooks/eval.ipynb reproduce
NOTEBOOK_REFERENCE = "blimp-det-noun-smollm2-135m-l15-v1"


def write_repo_notebooks() -> None:
    from probebench.sites import Site
    from probebench.train import TrainConfig
    from probebench.train.notebooks import eval_notebook, train_notebook, write_notebook

    ref = next(r for r in REFERENCES if r.name == NOTEBOOK_REFERENCE)
    config = TrainConfig(task=ref.task, site=Site.parse(ref.site), model=ref.model,
                         probe_type=ref.probe_type)
    artifact = f"../registry/artifacts/{ref.name}"
    folder = ROOT / "notebooks"
    folder.mkdir(exist_ok=True)
    write_notebook(train_notebook(task=ref.task, model=ref.model, site=ref.site,
                                  probe_type=ref.probe_type, seed=config.seed,
                                  hidden=config.hidden, bootstrap=config.bootstrap,
                                  artifact=artifact),
                   folder / "train.ipynb")
    write_notebook(eval_notebook(tasks=[ref.task], seed=config.seed,
                                 bootstrap=config.bootstrap, artifact=artifact),
                   folder / "eval.ipynb")


def evaluate(refs: list[Reference], registry: Path, key: bytes | None = None, *,
             causal: bool = False) -> None:
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.registry.guards import RegistryGuards
    from probebench.runs.evaluate import evaluate_entry

    session = Session(catalog(), SubmitOptions(guards=RegistryGuards(registry, ROOT,
                                                                     catalog=catalog()),
                                               progress=False, causal=causal))
    for ref in refs:
        path = registry / "probes" / ORG / f"{ref.name}.yaml"
        entry = yaml.safe_load(path.read_text())
        done = evaluate_entry(ref.entry_id, registry, ROOT, session, holdout_key=key)
        result = done.submission
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
        held = done.holdouts.get(task.id)
        sealed = ("" if held is None else f", sealed generation {held.generation} AUROC "
                  f"{held.auroc.value:.3f}, retention {held.retention}")
        for task_id, out in sorted((result.causal or {}).items()):
            from probebench.leaderboard.columns import moves_the_model

            cell = moves_the_model(out)
            print(f"{ref.entry_id}: causal test on {task_id}: {cell.verdict} ({cell.detail})",
                  flush=True)
        print(f"{ref.entry_id}: submit AUROC {task.auroc.value:.3f} "
              f"[{task.auroc.ci_low:.3f}, {task.auroc.ci_high:.3f}], evalaware "
              f"{task.evalaware_auroc.value}{sealed}"
              + (" (NOT STORED: the task's sealed holdout needs --key)"
                 if done.sealed_unscored else ""), flush=True)


def causal_only(refs: list[Reference], registry: Path) -> None:
    """The causal test of each reference entry, stored (``_causal.json``) without
    re-evaluating the rest: a quick submit with the test (the block depends on the
    artifact, the task's test set, the model and the seed only)."""
    from probebench.causal.effect import SUBMISSION_METHOD
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.evaluation.submit import submit
    from probebench.leaderboard.columns import moves_the_model
    from probebench.registry.store import store_causal

    session = Session(catalog(), SubmitOptions(progress=False, quick=True, causal=True,
                                               causal_method=SUBMISSION_METHOD))
    for ref in refs:
        result = submit(registry / "artifacts" / ref.name, [ref.task],
                        session=session)
        stored = store_causal(registry, ref.entry_id, result)
        for task_id, out in sorted((result.causal or {}).items()):
            cell = moves_the_model(out)
            print(f"{ref.entry_id}: causal test on {task_id}: {cell.verdict} ({cell.detail})"
                  f"{'' if stored else ' (unchanged)'}", flush=True)


SWEEP_POSITIONS = ("token_avg", "last_token")


def sweep_path(registry: Path, position: str) -> Path:
    return registry / "sweeps" / "smollm2-135m" / f"verb_grammar-{position}.json"


def run_sweeps(registry: Path) -> None:
    from probebench.train.sweep import layer_sweep, write_sweep

    for position in SWEEP_POSITIONS:
        sweep = layer_sweep("verb_grammar", "smollm2-135m", position, catalog=catalog(),
                            progress=False)
        path = sweep_path(registry, position)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_sweep(sweep, path)
        print(f"sweep {position}: best layer {sweep.best().layer}", flush=True)


def _iv(x: IntervalOut | None) -> str:
    if x is None or x.value is None:
        return "n/a"
    return f"{x.value:.3f} [{x.ci_low:.3f}, {x.ci_high:.3f}]"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _field_rows(registry: Path) -> list[str]:
    """The truth, honesty and refusal references: logistic against mass-mean, the recall at
    1% false positives where the task declares a control set, the model's own answer, and
    each entry's row of its family's generalisation matrix."""
    from probebench.registry.store import latest_generalisation, latest_results

    rows = ["", "## Truth, honesty and refusal", "",
            "One site per family and model, chosen by `probebench sweep` on validation data "
            "only (the lowest validation log-loss over layers 3, 6, ..., 27 of SmolLM2, every "
            f"layer of MiniLM: `{MINILM_SITE}` on truth_cities): truth at "
            f"`{FAMILY_SITES['truth']}` (swept on truth_cities), honesty at "
            f"`{FAMILY_SITES['honesty']}` (the fact's last token, swept on "
            f"honesty_instructed), refusal at `{FAMILY_SITES['refusal']}` (the last "
            "post-instruction token, swept on refusal_harmful). Each task has a logistic "
            "probe and a mass-mean one (the difference of the class means, Marks & Tegmark "
            "2024). \"own answer\" is the model's log P(\" True\") - log P(\" False\") "
            "after the statement (tasks with a readout). \"recall @ 1% FPR\" is read at "
            "the threshold set on the task's control set (METHODOLOGY.md, \"Recall at 1% "
            "false positives\").", "",
            "| entry | task | method | AUROC [95% CI] | own answer | best baseline | "
            "recall @ 1% FPR [95% CI] (threshold) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    matrix: list[str] = []
    for ref in FIELD_REFERENCES:
        stored = latest_results(registry, ref.entry_id).get(ref.task)
        if stored is None:
            continue
        t = stored.result
        own = t.baselines.get("own_answer")
        own_text = "n/a" if own is None or own.auroc is None else _iv(own.auroc)
        gap = t.baseline_gap
        best = "n/a" if gap is None else f"{gap.baseline} {_iv(t.baselines[gap.baseline].auroc)}"
        recall = t.recall_at_1pct_fpr
        recall_text = ("none declared" if recall is None else
                       f"{_iv(recall)} ({recall.threshold:.3f})")
        rows.append(f"| `{ref.name}` | {ref.task} | {ref.method} | {_iv(t.auroc)} | "
                    f"{own_text} | {best} | {recall_text} |")
        record = latest_generalisation(registry, ref.entry_id)
        if record is None:
            continue
        for sibling, out in sorted(record.generalisation.siblings.items()):
            cell = ("n/a" if out.auroc is None else
                    f"{out.auroc:.3f} [{_num(out.ci[0])}, {_num(out.ci[1])}]")
            matrix.append(f"| `{ref.name}` | {ref.task} | {sibling} | {cell} | {out.n} |")
    rows += ["", "### Generalisation to sibling tasks", "",
             "Each entry read, unchanged and at its own site, on every other task of its "
             "family (METHODOLOGY.md, \"Generalisation across sibling tasks\"); reported, "
             "never ranked.", "",
             "| entry | trained on | sibling | AUROC [95% CI] | items |",
             "| --- | --- | --- | --- | --- |", *matrix]
    return rows


def causal_rows(registry: Path) -> list[str]:
    """docs/reference-probes.md's causal-test table: every reference entry's stored
    ``_causal.json`` (``tools/build_reference.py --causal`` measures it)."""
    from probebench.leaderboard.columns import moves_the_model
    from probebench.registry.store import latest_causal

    rows = ["", "## Does the model use the direction? (the causal test)", "",
            "`probebench registry evaluate --causal` (docs/causal.md): the probe's unit "
            "direction added at its site's positions at -4..4 standard deviations of the "
            "activations along it; *effect* is the mean slope of the task's readout (the "
            "model's own log-odds, in nats per standard deviation, oriented to label 1) with "
            "a 95% item-bootstrap CI, against 16 random directions drawn from the "
            "activations' covariance (their range, and the share below the probe's "
            "effect); *ablation* projects the direction out at that layer (the readout's "
            "accuracy on the labels before -> after, and its AUROC where both labels "
            "occur). \"moves the model\" is the "
            "leaderboard's column: the CI above 0 and the effect above every control. "
            "First 200 test items, seed 0.", "",
            "| entry | task | readout | effect [95% CI] | controls (min, max) | control "
            "percentile | ablation accuracy (AUROC) | moves the model |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for ref in REFERENCES:
        out = latest_causal(registry, ref.entry_id).get(ref.task)
        if out is None:
            continue
        cell = moves_the_model(out)
        if not out.applicable:
            rows.append(f"| `{ref.name}` | {ref.task} | | | | | | n/a: {out.reason} |")
            continue
        kind = (out.readout or {}).get("kind", "?")
        ci = out.ci or (None, None)
        controls = (f"{min(out.controls):.3f}, {max(out.controls):.3f}"
                    if out.controls else "")
        ab = out.ablation
        ablation = ("" if ab is None else
                    f"{_num(ab.accuracy_before)} -> {_num(ab.accuracy_after)}")
        if ab is not None and ab.auroc_before is not None and ab.auroc_after is not None:
            ablation += f" (AUROC {_num(ab.auroc_before)} -> {_num(ab.auroc_after)})"
        rows.append(f"| `{ref.name}` | {ref.task} | {kind} | {_num(out.effect)} "
                    f"[{_num(ci[0])}, {_num(ci[1])}] | {controls} | "
                    f"{_num(out.control_percentile)} | {ablation} | {cell.verdict} |")
    return rows


def write_docs(registry: Path) -> None:
    from probebench.evaluation.results import TransferOut
    from probebench.registry.store import latest_results
    from probebench.train.sweep import read_sweep

    sweeps = [read_sweep(sweep_path(registry, p)) for p in SWEEP_POSITIONS
              if sweep_path(registry, p).is_file()]
    lines = ["# Layer sweep: verb grammar on SmolLM2-135M", "",
             "`probebench train`'s protocol at every layer (0 = embeddings, 30 = the final "
             "norm's output) for the `verb_grammar` task: logistic regression with C chosen "
             "on the validation split, refit on train + validation, scored on the registered "
             "test split (268 prompts of 104 items: 80 hand-written core items and 24 "
             "adversarial) by the code `probebench submit` uses. AUROC and multiple-choice "
             "accuracy carry 95% item-bootstrap intervals (1,000 resamples).", "",
             "\"best\" marks the highest test AUROC: it is chosen on the test split, so it "
             "is descriptive and optimistic, not a held-out estimate. The same figure, drawn, "
             "is on the leaderboard's `verb_grammar` task page.", "",
             "Made with `python tools/build_reference.py --sweeps` (or `probebench sweep "
             "--task verb_grammar --position POSITION --out FILE`).", ""]
    for sweep in sweeps:
        lines += [f"## Position `{sweep.position}`", "", sweep.markdown()]
    docs = ROOT / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "layer-sweep.md").write_text("\n".join(lines), "utf-8")

    rows = ["# Reference probes", "",
            "Trained by `python tools/build_reference.py` with `probebench train`, "
            "registered under `registry/probes/probebench/`, artifacts in "
            "`registry/artifacts/`, results (from `probebench submit` on the embedded "
            "models, CPU, seed 0, 1,000 resamples) in `registry/results/`. Baselines belong "
            "to the task and model (`registry/baselines/`), computed on the same test "
            "split (see METHODOLOGY.md). \"gap\" is the probe's AUROC minus the best "
            "baseline's, with a paired item-bootstrap 95% CI; \"beats\" means that CI lies "
            "above 0 (`beats_baselines`): an entry that does not is listed after those that "
            "do on the leaderboard, unranked.", "",
            "| entry | task | site | probe type | AUROC [95% CI] | best baseline (AUROC) | "
            "gap [95% CI] | beats |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for ref in REFERENCES:
        stored = latest_results(registry, ref.entry_id).get(ref.task)
        if stored is None:
            continue
        t = stored.result
        bases = {n: b.auroc for n, b in t.baselines.items() if b.auroc}
        gap = t.baseline_gap
        # the gap's own choice (ties between equal AUROCs go the way the gap went)
        best = gap.baseline if gap is not None else max(bases,
                                                         key=lambda n: bases[n].value or 0.0)
        gap_text = "n/a" if gap is None else f"{_iv(gap)} vs {gap.baseline}"
        beats = {True: "yes", False: "**no**", None: "n/a"}[t.beats_baselines]
        rows.append(f"| `{ref.name}` | {ref.task} | {ref.site} ({ref.model}) | "
                    f"{ref.probe_type} | {_iv(t.auroc)} | {best} {_iv(bases[best])} | "
                    f"{gap_text} | {beats} |")
    rows += ["", "## Cross-model transfer", "",
             "The probe read through an affine ridge map from the declared target's site, "
             "fitted on the pinned neutral corpus (METHODOLOGY.md, \"Cross-model "
             "transfer\"); the control is the same map fitted on shuffled sentence pairs.", "",
             "| entry | target | map R² (control) | target AUROC [95% CI] | transfer | "
             "control AUROC / transfer |", "| --- | --- | --- | --- | --- | --- |"]
    for ref in REFERENCES:
        stored = latest_results(registry, ref.entry_id).get(ref.task)
        if stored is None:
            continue
        for target, tr in sorted(stored.result.transfer.items()):
            if not isinstance(tr, TransferOut):
                continue
            rows.append(f"| `{ref.name}` | `{target}` | {_num(tr.map_r2)} "
                        f"({_num(tr.control_r2)}) | {_iv(tr.auroc)} | {_num(tr.transfer)} | "
                        f"{_num(tr.control_auroc)} / {_num(tr.control_transfer)} |")
    rows += causal_rows(registry)
    rows += ["", "## Selectivity against a control task", "",
             "Each entry's architecture re-trained with `probebench train`'s protocol on its "
             "task and on a control task with the same inputs and labels a fixed random "
             "function of word types (Hewitt and Liang, 2019; METHODOLOGY.md, \"Control-task "
             "selectivity\"). Prompt accuracy at P >= 0.5 on the test prompts, 95% paired "
             "item bootstrap. \"shown\": the selectivity's interval lies above 0; an entry "
             "where it does not is marked \"not shown to be selective\" on the leaderboard "
             "(METHODOLOGY.md, \"Not shown to be selective: marked, not unranked\").", "",
             "| entry | task | accuracy | control accuracy | selectivity | shown |",
             "| --- | --- | --- | --- | --- | --- |"]
    for ref in REFERENCES:
        stored = latest_results(registry, ref.entry_id).get(ref.task)
        if stored is None or stored.result.selectivity is None:
            continue
        sel = stored.result.selectivity
        low = sel.selectivity.ci_low
        shown = "n/a" if low is None else ("yes" if low > 0 else "**no**")
        rows.append(f"| `{ref.name}` | {ref.task} | {_iv(sel.accuracy)} | "
                    f"{_iv(sel.control_accuracy)} | {_iv(sel.selectivity)} | {shown} |")
    rows += ["", "## Sealed holdout and Goodhart resistance", "",
             "Each entry scored on its task's current sealed holdout generation: items "
             "written for probebench, in no public release, sealed with the maintainers' key "
             "and decrypted only in memory (METHODOLOGY.md, \"Holdouts and re-evaluation\" "
             "and \"Goodhart resistance\"). Retention = (holdout AUROC - 0.5) / (test AUROC "
             "- 0.5); Goodhart resistance (ProbeScore 0.3.0) = retention x the least of "
             "the selectivity share and the baseline share, a share that cannot be computed "
             "(a degenerate control) counting 0.", "",
             "| entry | task | generation | test AUROC | sealed-holdout AUROC [95% CI] | "
             "retention | selectivity share | baseline share | Goodhart resistance |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    from probebench.evaluation.holdout import selectivity_share
    from probebench.leaderboard.probescore import AXES, baseline_share

    for ref in REFERENCES:
        stored = latest_results(registry, ref.entry_id).get(ref.task)
        if stored is None or stored.holdout is None:
            continue
        held = stored.holdout
        share = selectivity_share(stored.result.selectivity)
        value = AXES["goodhart_shown"].compute([stored], "").value
        rows.append(f"| `{ref.name}` | {ref.task} | {held.generation} | "
                    f"{stored.result.auroc.value:.3f} | {_iv(held.auroc)} | "
                    f"{_num(held.retention)} | {_num(share)} | "
                    f"{_num(baseline_share(stored))} | {_num(value)} |")
    rows += _field_rows(registry)
    rows += ["", "## Verb grammar against every baseline", ""]
    for ref in REFERENCES:
        if not ref.task.startswith("verb_grammar"):
            continue
        stored = latest_results(registry, ref.entry_id).get(ref.task)
        if stored is None:
            continue
        t = stored.result
        rows += [f"### `{ref.name}` ({ref.probe_type}, layer {ref.site})", "",
                 f"| scorer | AUROC [95% CI] | {t.accuracy_name} [95% CI] |",
                 "| --- | --- | --- |",
                 f"| the probe | {_iv(t.auroc)} | {_iv(t.accuracy)} |"]
        for name, b in sorted(t.baselines.items()):
            rows.append(f"| {name} | {_iv(b.auroc)} | {_iv(b.accuracy)} |")
        rows.append("")
    (docs / "reference-probes.md").write_text("\n".join(rows) + "\n", "utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", type=Path, default=ROOT / "registry")
    parser.add_argument("--only", action="append", default=None, metavar="NAME")
    parser.add_argument("--skip-train", action="store_true",
                        help="only re-evaluate the existing artifacts")
    parser.add_argument("--train-only", action="store_true",
                        help="train and register, evaluate nothing (then commit the artifacts "
                             "and evaluate from the clean commit: results are stored only from "
                             "a clean tree)")
    parser.add_argument("--sweeps", action="store_true",
                        help="also run the verb-grammar layer sweeps")
    parser.add_argument("--retired", action="store_true",
                        help="also re-evaluate the deprecated v1 entries (after the live ones), "
                             "so every latest record of a model carries one identity")
    parser.add_argument("--key", type=Path, default=None, metavar="FILE",
                        help="the maintainers' holdout key file (else $PROBEBENCH_HOLDOUT_KEY; "
                             "no default path): scores every entry on its tasks' sealed "
                             "holdouts. Without it, nothing is stored for a task that has one")
    parser.add_argument("--causal", action="store_true",
                        help="also run the causal test of each entry's direction (docs/causal.md) "
                             "and store it (_causal.json)")
    parser.add_argument("--causal-only", action="store_true",
                        help="only run and store the causal test of each entry (a quick submit "
                             "with --causal; nothing else is re-evaluated), then the docs")
    parser.add_argument("--docs-only", action="store_true",
                        help="only rewrite docs/layer-sweep.md and docs/reference-probes.md")
    args = parser.parse_args()
    refs = [r for r in REFERENCES if args.only is None or r.name in args.only]
    from probebench.tasks.sealed import read_key

    key = read_key(args.key, required=False)
    if args.causal_only:
        causal_only(refs, args.registry)
    elif not args.docs_only:
        if args.sweeps:
            run_sweeps(args.registry)
        if not args.skip_train:
            build(refs, args.registry)
        if args.train_only:
            return 0
        evaluate(refs, args.registry, key, causal=args.causal)
        if args.retired:
            evaluate(retired_refs(args.registry), args.registry, key)
    write_docs(args.registry)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
