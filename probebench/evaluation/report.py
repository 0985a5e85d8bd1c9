"""REPORT.md: the submission as human-readable tables (Jinja2 template in ``templates/``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from probebench.evaluation.baselines import BASELINES
from probebench.evaluation.results import Submission

if TYPE_CHECKING:
    from jinja2 import Environment


@cache
def _environment() -> Environment:
    """One Jinja2 environment, so the template is compiled once per process (the
    leaderboard renders a report per stored result)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(loader=FileSystemLoader(Path(__file__).with_name("templates")),
                       undefined=StrictUndefined, trim_blocks=False,
                       keep_trailing_newline=True, autoescape=False)  # Markdown, not HTML


def render_report(submission: Submission) -> str:
    template = _environment().get_template("report.md.j2")
    present = [b for b in BASELINES if any(b in t.baselines for t in submission.tasks)]
    return template.render(s=submission, baseline_names=present)
