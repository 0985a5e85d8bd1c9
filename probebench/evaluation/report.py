"""REPORT.md: the submission as human-readable tables (Jinja2 template in ``templates/``)."""

from __future__ import annotations

from pathlib import Path

from probebench.evaluation.baselines import BASELINES
from probebench.evaluation.results import Submission


def render_report(submission: Submission) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(loader=FileSystemLoader(Path(__file__).with_name("templates")),
                      undefined=StrictUndefined, trim_blocks=False, keep_trailing_newline=True,
                      autoescape=False)  # Markdown, not HTML
    template = env.get_template("report.md.j2")
    present = [b for b in BASELINES if any(b in t.baselines for t in submission.tasks)]
    return template.render(s=submission, baseline_names=present)
