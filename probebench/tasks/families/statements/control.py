"""The control set of a statements task: ordinary prompts on which the recall at 1% false
positives sets its threshold (``TaskSpec.control``, ``StatementsFormat.read_control``).

A control file is a statements file like the task's own (``.csv`` or ``.jsonl``, read by
the format's ``read_statements`` with the task's ``options``: the same columns,
``label_map``, declared slices, ``strict`` rule and chat exchanges; a CSV file without an
id column gives its prompts the ids ``control-<line>``). Every control prompt must carry
label 0, the task's ordinary (unflagged) class: the threshold is the probe's 99th
percentile on prompts that should not be flagged, so a control prompt of the flagged
class would count as a false positive and raise the threshold. A label 1 is refused with
its file and line rather than ignored, which also catches a control file that is really
a test file.

The format reads the file and hands the prompts here (this module imports nothing of
the format, so the two do not import each other).
"""

from __future__ import annotations

from collections.abc import Sequence

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.spec import TaskSpec

#: the role that names a CSV control file's prompts (``control-<line>``)
CONTROL_ROLE = "control"


def control_prompts(spec: TaskSpec, read: Sequence[tuple[str, Prompt]]) -> list[Prompt]:
    """The control prompts of statements task ``spec``, in file order, from the
    statements ``read`` from its control file (``file:line`` where each was read, and its
    one prompt); a prompt not labelled 0 is refused with its file and line."""
    for where, prompt in read:
        if prompt.label != 0:
            meaning = spec.labels.get(0, "the ordinary class")
            raise InputError(f"{where}: a control prompt is labelled {prompt.label}; every "
                             f"prompt of a control set has label 0 ({meaning}), the class "
                             "a probe should not flag")
    return [prompt for _, prompt in read]


__all__ = ["CONTROL_ROLE", "control_prompts"]
