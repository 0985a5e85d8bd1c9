"""What is stored, and nothing that runs: registry entries (``entry``), the results store
(``store``), task baselines (``baselines``) and the eval-awareness guards (``guards``).

The jobs that write these records live in ``probebench.runs``; what a pull request goes
through lives in ``probebench.intake``.
"""
