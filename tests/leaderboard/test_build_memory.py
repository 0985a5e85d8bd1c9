"""The leaderboard build's memory grows linearly with the entries, and its economies
change no number and no byte: ranks counted from sorted rows equal the pairwise
definition (one group's ranks and intervals included), ``leaderboard.json`` written in
parts equals the whole text, and a build's stored predictions share equal lists.

At 10,000 entries the pairwise rank count alone held a (resamples x entries x entries)
boolean array: 15 GB for a table of 8,700 entries (``benchmarks/leaderboard_scale.py``).
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import numpy as np
import pytest
from pydantic import BaseModel

from probebench.leaderboard import ranks as ranks_module
from probebench.leaderboard.build import (
    ENTRY_FIELDS,
    _entries_script,
    page_name,
    select_entries,
)
from probebench.leaderboard.downloads import (
    Leaderboard,
    leaderboard_json,
    leaderboard_json_parts,
    write_leaderboard_json,
)
from probebench.leaderboard.probescore import DEFAULT_SPEC, axis_values, load_probescore_spec
from probebench.leaderboard.ranks import Scored, _ranks, rank_group
from probebench.registry.store import latest_results
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_record, synthetic_registry, synthetic_result


def _pairwise(scores: np.ndarray) -> np.ndarray:
    """The definition: 1 + the entries of the row with a strictly higher score."""
    higher: np.ndarray = (scores[:, None, :] > scores[:, :, None]).sum(axis=2)
    return 1 + higher


def test_ranks_equal_the_pairwise_definition_with_ties_nans_and_infinities() -> None:
    rng = np.random.default_rng(7)
    values = np.array([0.1, 0.2, 0.2, 0.5, np.nan, -np.inf, np.inf, 0.0, -0.0])
    for trial in range(200):
        shape = (int(rng.integers(1, 6)), int(rng.integers(1, 30)))
        scores = rng.choice(values, size=shape) if trial % 2 else rng.random(shape)
        np.testing.assert_array_equal(_ranks(scores), _pairwise(scores))


def test_ranks_memory_grows_with_rows_times_entries_not_entries_squared() -> None:
    rows, n = 20, 4000
    scores = np.random.default_rng(0).random((rows, n))
    tracemalloc.start()
    try:
        _ranks(scores)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the output and a sorted row are rows x n x 8 bytes; pairwise would be rows x n x n
    # booleans (320 MB here)
    assert peak < 4 * rows * n * 8, f"{peak / 1e6:.1f} MB for {rows} x {n} scores"


def _group(n: int, n_items: int = 12) -> list[Scored]:
    rng = np.random.default_rng(3)
    out: list[Scored] = []
    for k in range(n):
        records = {task: synthetic_record(synthetic_result(task, float(rng.uniform(0, 0.6)),
                                                           rng, n_items=n_items))
                   for task in ("blimp_passive_1", "verb_grammar")}
        # a few exact ties: entries with the same results as an earlier one
        if k % 5 == 4:
            records = out[k - 1].results
        out.append(Scored(f"e{k}", records, axis_values(records, "MIT"), closed=False,
                          beats=k % 4 != 3))
    return out


def test_a_group_ranked_with_the_pairwise_count_is_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spec = load_probescore_spec(DEFAULT_SPEC)
    entries = _group(10)
    sorted_rows = rank_group(entries, spec, family="blimp", n_resamples=15, seed=4)
    monkeypatch.setattr(ranks_module, "_ranks", _pairwise)
    pairwise = rank_group(entries, spec, family="blimp", n_resamples=15, seed=4)
    assert sorted_rows == pairwise
    # the resamples did reorder the entries: the intervals are not all one rank
    assert any(r.best != r.worst for r in sorted_rows.ranks.values() if r.rank is not None)


def _value(annotation: Any) -> Any:
    """A valid value of ``annotation``: a model filled in, a list of two, a literal's
    first choice; a string with a newline, a tab, a bidi override and an escape."""
    origin, args = get_origin(annotation), get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {name: _value(f.annotation) for name, f in annotation.model_fields.items()}
    if origin is Literal:
        return args[0]
    if origin in (list, tuple):
        return [_value(args[0]), _value(args[0])]
    if origin is dict:
        return {"k\n1": _value(args[1])}
    if args:  # a union: its first member that is not None
        return _value(next(a for a in args if a is not type(None)))
    return {bool: True, int: 3, float: 0.25, str: "a\nb\t\u202ec\x1b"}[annotation]


def _board() -> Leaderboard:
    """A leaderboard.json's content with every list holding two filled-in elements."""
    return Leaderboard.model_validate(_value(Leaderboard))


def test_leaderboard_json_in_parts_is_the_whole_text(tmp_path: Path) -> None:
    board = _board()
    whole = leaderboard_json(board)
    assert "".join(leaderboard_json_parts(board)) == whole
    write_leaderboard_json(board, tmp_path / "leaderboard.json")
    assert (tmp_path / "leaderboard.json").read_bytes() == whole.encode("utf-8")
    assert json.loads(whole)["results"][0]["entry_id"] == "a\nb\t\\u202ec\\x1b"  # visible
    assert "  },\n  {" in whole and "\n   \"" in whole  # nested, indented


def test_a_builds_stored_predictions_share_equal_lists(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    ids = synthetic_registry(registry, 4, n_items=8)
    selection = select_entries(registry, TaskCatalog.default())
    preds = [selection.results[i]["blimp_passive_1"].result.predictions for i in ids]
    for name in ("prompt_ids", "items", "labels"):
        assert all(getattr(p, name) is getattr(preds[0], name) for p in preds)
    # the values are the stored ones
    for i, pred in zip(ids, preds, strict=True):
        stored = latest_results(registry, i)["blimp_passive_1"].result.predictions
        assert (pred.prompt_ids, pred.items, pred.labels, pred.probs) == (
            stored.prompt_ids, stored.items, stored.labels, stored.probs)
        assert pred.probs is not preds[0].probs or i == ids[0]


def _rows_of(script: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A data script's rows as app.js reads them: each row's fields (a coded column's
    index read back through ``codes``), then ``same``'s, and the entry's page where the
    row has no href."""
    data = json.loads(script.split("window.PROBEBENCH_ENTRIES = ", 1)[1].rstrip().rstrip(";"))
    codes = data.get("codes", {})
    rows = []
    for row in data["rows"]:
        values = [codes[f][v] if f in codes else v
                  for f, v in zip(data["fields"], row, strict=True)]
        full = {**data["same"], **dict(zip(data["fields"], values, strict=True))}
        full.setdefault("href", page_name(full["id"]))
        rows.append(full)
    return data, rows


def test_an_entry_list_gives_a_column_equal_on_every_row_once() -> None:
    fields = list(ENTRY_FIELDS)
    rows = [[f"org/p{k}", f"p-{k}", page_name(f"org/p{k}"), "BLiMP", "blimp_passive_1",
             "smollm2-135m", "live", ["grammar", "syntax"][k % 2], 0.5 + k / 100, 0.75,
             f"{k + 1} [1, 4]", "✓"] for k in range(4)]
    data, read = _rows_of(_entries_script(rows, 2, "a test"))
    assert read == [dict(zip(fields, r, strict=True)) for r in rows]
    assert data["fields"] == ["id", "short_name", "category", "probescore", "rank"]
    assert data["same"] == {"family": "BLiMP", "tasks": "blimp_passive_1",
                            "model": "smollm2-135m", "status": "live", "auroc": 0.75,
                            "beats": "✓"}
    # an href that is not the entry's page, a 1 that is not True: kept in the rows
    rows[1][2], rows[0][8], rows[1][8] = "elsewhere.html", 1, True
    data, read = _rows_of(_entries_script(rows[:2], 2, "a test"))
    assert read == [dict(zip(fields, r, strict=True)) for r in rows[:2]]
    assert "href" in data["fields"] and "probescore" in data["fields"]
