"""Verb items as model prompts.

Every sentence is wrapped in ``data/eval/probe_prompt.txt`` (its ``{sentence}``
placeholder). Spans: ``question`` runs from the start to the end of the sentence,
``answer`` covers the verb form (the filled-in candidate, or the inline form).

* multiple choice: one prompt per candidate, label 1 for ``expected`` and 0 for the
  others; the item's answer is the candidate with the highest P(correct);
* classification: one prompt, label 1 (``correct``) or 0 (``incorrect``);
* ``ambiguous`` items keep label None on every prompt (not penalised).
"""

from __future__ import annotations

import re

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.verbs.schema import BLANK, VerbItem

PLACEHOLDER = "{sentence}"


def check_template(template: str, source: str) -> None:
    if template.count(PLACEHOLDER) != 1:
        raise InputError(f"{source}: the template must hold {PLACEHOLDER} exactly once")


def _prompt(template: str, sentence: str, form_start: int, form: str, pid: str,
            label: int | None, slices: dict[str, str]) -> Prompt:
    offset = template.index(PLACEHOLDER)
    text = template.replace(PLACEHOLDER, sentence)
    start = offset + form_start
    return Prompt(text, id=pid, label=label, slices=slices,
                  spans={"question": (0, offset + len(sentence)),
                         "answer": (start, start + len(form))})


def item_slices(item: VerbItem) -> dict[str, str]:
    return {"language": item.language, "regularity": item.regularity, "tense": item.tense,
            "person": item.person, "category": item.category,
            "reason_code": item.reason_code or "none",
            "form": "multiple_choice" if item.multiple_choice else "classification"}


def render_item(item: VerbItem, template: str) -> Item:
    slices = item_slices(item)
    ambiguous = item.label == "ambiguous"
    prompts = []
    if item.multiple_choice:
        at = item.prompt.index(BLANK)
        for cand in item.candidates:
            sentence = item.prompt.replace(BLANK, cand)
            label = None if ambiguous else int(cand == item.expected)
            prompts.append(_prompt(template, sentence, at, cand, f"{item.id}:{cand}", label,
                                   slices))
    else:
        inline = item.inline_candidates()[0]
        m = re.search(rf"(?<!\w){re.escape(inline)}(?!\w)", item.prompt)
        assert m is not None
        label = None if ambiguous else int(item.label == "correct")
        prompts.append(_prompt(template, item.prompt, m.start(), inline, item.id, label, slices))
    return Item(id=item.id, prompts=tuple(prompts), slices=slices,
                data={"form": slices["form"], "expected": item.expected,
                      "candidates": list(item.candidates), "label": item.label,
                      "verb": item.verb})
