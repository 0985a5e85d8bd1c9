"""The verb-grammar task: ``data/eval`` probes (test) and generated train/val sentences.

Loading runs every check of ``probebench tasks check-verbs`` first and refuses the task
while any fails. The test split is the non-deprecated lines of ``probes.jsonl`` and
``adversarial.jsonl``; ``train`` and ``val`` are the generated files.
"""

from __future__ import annotations

from pathlib import Path

from probebench.errors import InputError
from probebench.tasks.formats.base import TaskData, TaskFormat
from probebench.tasks.spec import TaskSpec
from probebench.tasks.verbs.checks import VerbFiles, check_verbs
from probebench.tasks.verbs.render import check_template, render_item
from probebench.tasks.verbs.schema import read_verb_file

ROLES = ("test", "adversarial", "train", "val", "verbs", "lexicon", "template")


def verb_files(files: dict[str, Path]) -> VerbFiles:
    return VerbFiles(probes=files["test"], adversarial=files["adversarial"],
                     train=files["train"], val=files["val"], verbs=files["verbs"],
                     lexicon=files["lexicon"])


class VerbsFormat(TaskFormat):
    name = "verbs"
    roles = ROLES

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        report = check_verbs(verb_files(files))
        if not report.ok:
            shown = "; ".join(report.failures[:5])
            more = f" (and {len(report.failures) - 5} more)" if len(report.failures) > 5 else ""
            raise InputError(f"task {spec.id} refused: check-verbs failed: {shown}{more}")
        template = files["template"].read_text("utf-8")
        check_template(template, str(files["template"]))
        splits = {}
        for split, roles in (("test", ("test", "adversarial")), ("train", ("train",)),
                             ("val", ("val",))):
            lines = [ln for role in roles for ln in read_verb_file(files[role])]
            splits[split] = [render_item(ln.item, template) for ln in lines
                             if not ln.item.deprecated]
        return TaskData(spec, splits)
