"""Generators of the chat-exchange tasks (``refusal_harmful``, ``honesty_instructed``):
deterministic, from pinned source files, standard library only.

``python -m probebench.tasks.families.statements.exchanges --source DATA --out DIR``
writes every file these tasks register; run on the same sources it reproduces the
packaged files byte for byte (``tests/tasks/test_exchange_tasks.py`` checks it). ``DATA``
is a folder with ``refusal/`` (AdvBench's ``advbench.csv``, Alpaca's
``harmless_val.json`` and ``harmless_test.json``, as copied from andyrdt/refusal_direction)
and ``honesty/`` (``facts_true_false.csv`` from andyzoujm/representation-engineering).
"""

from probebench.tasks.families.statements.exchanges.files import (
    EXCHANGE_FILES,
    write_jsonl,
)
from probebench.tasks.families.statements.exchanges.honesty import (
    DISHONEST_INSTRUCTION,
    HONEST_INSTRUCTION,
    ORDINARY_REQUESTS,
    honesty_cities_files,
    honesty_files,
)
from probebench.tasks.families.statements.exchanges.refusal import refusal_files

__all__ = ["DISHONEST_INSTRUCTION", "EXCHANGE_FILES", "HONEST_INSTRUCTION",
           "ORDINARY_REQUESTS", "honesty_cities_files", "honesty_files", "refusal_files",
           "write_jsonl"]
