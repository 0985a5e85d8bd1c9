"""Fresh SyntaxGym items: three suites rebuilt from this module's own word lists.

A fresh suite copies the registered suite's ``meta``, ``region_meta`` and ``predictions``
and its condition names; only the items are new, built region by region as the suite
builds them. The suite is written as syntaxgym-core JSON and read back with the format's
own reader, so the prompts, spans, labels and item data are made as for a registered item.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from probebench.tasks.anatomy import Item
from probebench.tasks.datapaths import data_file
from probebench.tasks.families.base import FreshGenerator, Make, get_format
from probebench.tasks.families.drawing import normalised_text, pairs, pick, prefixed, words
from probebench.tasks.spec import TaskSpec

#: 60 items of 2 expected and 2 anomalous conditions: 120 prompts of each label
N_ITEMS = 60


def _two(rng: np.random.Generator, seq: tuple[Any, ...]) -> tuple[Any, Any]:
    """Two different entries of ``seq``."""
    first, second = rng.permutation(len(seq))[:2]
    return seq[int(first)], seq[int(second)]


#: people nouns with a regular-looking plural (the plural ends in -s)
OCCUPATIONS = pairs(
    "teacher doctor nurse lawyer student painter singer baker chef dentist engineer banker "
    "waiter soldier sailor judge professor mechanic plumber gardener writer musician "
    "scientist reporter editor cashier librarian firefighter carpenter tourist neighbor "
    "driver dancer coach/coaches player surgeon farmer manager customer officer consultant "
    "guard clerk architect athlete actor minister secretary/secretaries executive journalist "
    "pilot author accountant photographer detective politician volunteer taxi_driver "
    "bus_driver police_officer")
#: antecedents of "himself": men and boys, and occupations not marked as female
MASCULINE = pairs(
    "man/men boy king prince father brother son uncle nephew husband grandfather monk groom "
    "gentleman/gentlemen boyfriend businessman/businessmen fisherman/fishermen farmer pilot "
    "doctor lawyer soldier sailor judge mechanic plumber carpenter firefighter engineer "
    "banker coach/coaches officer guard clerk architect athlete minister executive surgeon "
    "professor driver taxi_driver")


# --- npi_orc_any: [No|The] N that [the|no] N' V-ed has/have V-en any OBJ ----------------

RC_VERBS = words("liked praised hated admired loved respected helped knew met trusted feared "
                 "hired visited interviewed thanked criticized ignored remembered")
#: (participle, objects that read well after "any")
NPI_VPS = (
    ("had", "success luck problems trouble complaints visitors doubts regrets"),
    ("made", "mistakes progress friends money plans excuses promises"),
    ("won", "awards prizes games contests medals"),
    ("received", "letters gifts help support praise calls offers"),
    ("written", "books letters songs poems reports"),
    ("read", "novels poetry newspapers"),
    ("bought", "furniture clothes groceries tickets presents"),
    ("sold", "cars paintings houses tickets"),
    ("broken", "rules promises records"),
    ("told", "lies jokes stories"),
    ("taken", "risks breaks vacations photographs notes"),
    ("shown", "interest courage kindness patience respect"),
    ("given", "speeches interviews advice lectures"),
    ("solved", "problems puzzles cases"),
    ("asked", "questions favors"),
    ("spent", "money time"),
    ("lost", "weight games money sleep"),
    ("eaten", "meat vegetables dessert breakfast"),
    ("found", "evidence answers work jobs"),
    ("cooked", "dinner meals"),
    ("earned", "money respect awards"),
    ("needed", "help advice money"),
    ("offered", "help advice suggestions"),
    ("signed", "contracts petitions"),
    ("ignored", "warnings advice emails"),
    ("attended", "meetings parties concerts lectures"),
    ("answered", "questions emails letters"),
    ("sent", "emails letters messages gifts"),
)
NPI_OBJECTS = tuple((verb, obj) for verb, objs in NPI_VPS for obj in objs.split())


def _npi_orc_any(rng: np.random.Generator) -> dict[str, list[str]]:
    head, rc_subj = _two(rng, OCCUPATIONS)
    plural = bool(rng.integers(2))  # the suite pairs a singular head with a plural RC subject
    np_, rc_np = (head[1], rc_subj[0]) if plural else (head[0], rc_subj[1])
    verb, obj = pick(rng, NPI_OBJECTS)
    rest = [np_, "that"]
    tail = [pick(rng, RC_VERBS), f"{'have' if plural else 'has'} {verb}", "any", obj]
    return {f"{lic}_{rc}": [licensor, *rest, dp, rc_np, *tail]
            for lic, licensor in (("neg", "No"), ("pos", "The"))
            for rc, dp in (("pos", "the"), ("neg", "no"))}


# --- number_prep: The N PREP the N' V CONTINUATION ---------------------------------------

PREPS = ("next to", "behind", "in front of", "near", "beside", "across from", "close to",
         "to the left of", "to the right of", "to the side of", "far from")
#: (singular verb, plural verb, continuations that fit either number)
AGREEING_VPS = (
    ("is", "are", "very tall|always late|quite friendly|from Canada|on vacation|tired today"),
    ("was", "were", "very angry|at the party|in a hurry|quite rude|late again"),
    ("has", "have", "a new car|two children|a good reputation|a dog|long hair"),
    ("likes", "like", "to cook|to travel|jazz|spicy food|old movies"),
    ("knows", "know", "the answer|the truth|my sister|a good lawyer"),
    ("enjoys", "enjoy", "reading novels|long walks|cooking dinner|swimming"),
    ("seems", "seem", "tired|happy|nervous|confused|bored"),
    ("looks", "look", "worried|happy|exhausted|very busy"),
    ("wants", "want", "a raise|to leave|more time|a coffee"),
    ("works", "work", "very hard|late at night|from home|on weekends"),
    ("lives", "live", "nearby|in the city|downtown|on a farm"),
    ("speaks", "speak", "French|three languages|very quietly|too loudly"),
    ("plays", "play", "chess|the piano|soccer|the guitar"),
    ("owns", "own", "a small boat|two dogs|a bakery|a horse"),
    ("drives", "drive", "a red truck|to work|very fast|an old car"),
    ("sings", "sing", "very well|in a choir|every morning"),
    ("hates", "hate", "waiting|long meetings|the rain|loud music"),
)
VP_CHOICES = tuple((s, p, c) for s, p, cs in AGREEING_VPS for c in cs.split("|"))


def _number_prep(rng: np.random.Generator) -> dict[str, list[str]]:
    head, other = _two(rng, OCCUPATIONS)
    prep = str(pick(rng, PREPS))
    sing_v, plural_v, continuation = pick(rng, VP_CHOICES)
    sing = ["The", head[0], prep, "the", other[1]]
    plural = ["The", head[1], prep, "the", other[0]]
    return {"match_sing": [*sing, sing_v, continuation],
            "mismatch_sing": [*sing, plural_v, continuation],
            "mismatch_plural": [*plural, sing_v, continuation],
            "match_plural": [*plural, plural_v, continuation]}


# --- reflexive_src_masc: The N that V-ed the N' V-ed himself/themselves ------------------

EMBED_VERBS = words("liked met hated discussed loved admired visited called hired interviewed "
                    "thanked praised followed helped knew trusted feared ignored blamed "
                    "remembered criticized saw watched greeted avoided trained paid envied "
                    "insulted annoyed impressed warned")
REFLEXIVE_VERBS = words("hurt injured trusted embarrassed doubted disguised hated praised blamed "
                        "criticized defended introduced congratulated surprised cut burned "
                        "scratched amused questioned forgave fooled deceived exhausted protected "
                        "photographed taught distracted prepared pushed encouraged")


def _reflexive_src_masc(rng: np.random.Generator) -> dict[str, list[str]]:
    head = pick(rng, MASCULINE)
    other = pick(rng, OCCUPATIONS)
    if other[0] == head[0]:
        return _reflexive_src_masc(rng)
    embed, matrix = str(pick(rng, EMBED_VERBS)), str(pick(rng, REFLEXIVE_VERBS))
    sing = ["The", head[0], "that", embed, "the", other[1], matrix]
    plural = ["The", head[1], "that", embed, "the", other[0], matrix]
    return {"match_sing": [*sing, "himself"], "mismatch_sing": [*sing, "themselves"],
            "match_plural": [*plural, "themselves"], "mismatch_plural": [*plural, "himself"]}


# --- one maker for every suite ----------------------------------------------------------

Draw = Callable[[np.random.Generator], dict[str, list[str]]]


def _joined(regions: list[str]) -> str:
    return " ".join(r.strip() for r in regions if r.strip())


def _family_texts(folder: Path) -> set[str]:
    """Normalised condition texts of every packaged suite next to the task's."""
    out: set[str] = set()
    for path in sorted(folder.glob("*.json")):
        suite = json.loads(path.read_text("utf-8"))
        for item in suite.get("items", []) if isinstance(suite, dict) else []:
            for cond in item.get("conditions", []):
                out.add(normalised_text(_joined([r["content"] for r in cond["regions"]])))
    return out


def _make(draw: Draw) -> Make:
    def make(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
             id_prefix: str) -> list[Item]:
        source = data_file(root, spec.files["suite"])
        registered = json.loads(source.read_text("utf-8"))
        n_regions = len(registered["region_meta"])
        taken = _family_texts(source.parent)
        raw_items: list[dict[str, Any]] = []
        for _ in range(200 * n_items):
            if len(raw_items) == n_items:
                break
            conditions = draw(rng)
            if any(len(regions) != n_regions for regions in conditions.values()):
                raise ValueError(f"{spec.id}: a condition without {n_regions} regions")
            norm = {normalised_text(_joined(regions)) for regions in conditions.values()}
            if len(norm) < len(conditions) or norm & taken:
                continue  # a repeat, or a sentence that is public: draw again
            taken |= norm
            raw_items.append({"item_number": len(raw_items) + 1, "conditions": [
                {"condition_name": name, "regions": [
                    {"region_number": k, "content": content}
                    for k, content in enumerate(regions, start=1)]}
                for name, regions in conditions.items()]})
        if len(raw_items) < n_items:
            raise ValueError(f"{spec.id}: drew only {len(raw_items)} fresh items of {n_items}")
        suite = {key: registered[key] for key in ("meta", "region_meta", "predictions")}
        suite["items"] = raw_items
        with tempfile.TemporaryDirectory(prefix="fresh-syntaxgym-") as tmp:
            path = Path(tmp) / source.name
            path.write_text(json.dumps(suite, indent=1) + "\n", "utf-8")
            data = get_format(spec.format).read(spec, {"suite": path})
        by_id = {i.id: i for split in data.splits.values() for i in split}
        name = registered["meta"]["name"]
        return [prefixed(by_id[f"{name}-{raw['item_number']}"], id_prefix)
                for raw in raw_items]
    return make


GENERATORS: tuple[FreshGenerator, ...] = (
    FreshGenerator(
        "syntaxgym_npi_orc_any", N_ITEMS,
        "Head and relative-clause subject occupations of opposite number, the RC verb and "
        "the has/have + participle + any + object vary; 'any' is licensed only by a "
        "c-commanding 'No' (neg_*), not by the 'no' inside the object relative clause.",
        _make(_npi_orc_any)),
    FreshGenerator(
        "syntaxgym_number_prep", N_ITEMS,
        "Head and attractor occupations (opposite numbers), the preposition and the verb "
        "with its continuation vary; the verb agrees with the head noun, not with the "
        "noun inside the prepositional phrase.",
        _make(_number_prep)),
    FreshGenerator(
        "syntaxgym_reflexive_src_masc", N_ITEMS,
        "A masculine or unmarked head noun, a subject relative clause with an "
        "opposite-number object, and the matrix verb vary; the reflexive "
        "(himself/themselves) agrees with the head noun, not the relative clause's noun.",
        _make(_reflexive_src_masc)),
)

__all__ = ["GENERATORS"]
