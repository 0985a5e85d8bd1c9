"""METHODOLOGY.md's tables that repeat stored numbers are generated from the stored
results (``leaderboard.methodology``), and a test fails when the document, the store
or the code that made the store drift apart."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from probebench.leaderboard.methodology import (
    REGISTRY,
    control_rows,
    pairs_table,
    render,
    stored_pairs_split,
    transfers_table,
)

REPO = Path(__file__).resolve().parents[2]
METHODOLOGY = REPO / "METHODOLOGY.md"
REGENERATE = "run `python -m probebench.leaderboard.methodology METHODOLOGY.md` and commit"


def _block(text: str, name: str) -> str:
    found = re.search(rf"<!-- generated:{name} -->\n(.*?)<!-- /generated:{name} -->", text,
                      re.DOTALL)
    assert found, f"METHODOLOGY.md has no generated:{name} block"
    return found.group(1)


def _rows(block: str) -> dict[str, list[str]]:
    """First cell -> the cells of each row of a markdown table (header rows left out)."""
    out = {}
    for line in block.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[cells[0]] = cells
    return out


def test_the_pairs_table_equals_the_stored_results() -> None:
    """Every stored ``pairs_split`` is the share the control task's code computes on the
    task's test items, and METHODOLOGY's table shows it: number_prep and reflexive_src
    0.500 (the table once said 44% and 47%), anaphor gender 0.802 (82%), irregular
    plural 0.359 (38%)."""
    committed = METHODOLOGY.read_text("utf-8")
    block = _block(committed, "pairs")
    assert block == pairs_table(), REGENERATE
    computed = {r.task: r for r in control_rows()}
    stored = stored_pairs_split()
    assert set(stored) >= {"verb_grammar", "syntaxgym_number_prep",
                           "blimp_anaphor_gender_agreement"}
    rows = _rows(block)
    for task, by_entry in stored.items():
        code = computed[task].pairs_split
        assert code is not None, task
        for entry_id, value in by_entry.items():
            # the stored share is rounded to 6 decimals
            assert value == pytest.approx(code, abs=5e-7), (task, entry_id, value, code)
        cells = rows[f"`{task}`"]
        assert cells[1] == f"{code:.3f}"
        assert cells[2].startswith(f"{code:.3f} ({len(by_entry)} entr"), cells
    expected = {"syntaxgym_number_prep": "0.500", "syntaxgym_reflexive_src_masc": "0.500",
                "blimp_anaphor_gender_agreement": "0.802",
                "blimp_irregular_plural_subject_verb_agreement_1": "0.359"}
    for task, share in expected.items():
        assert rows[f"`{task}`"][1] == share and rows[f"`{task}`"][2].startswith(share)
    # the prose's example agrees with the table: npi_orc's sentence vote splits 4 of 56
    npi = computed["syntaxgym_npi_orc_any"].sentence_vote_split
    assert npi == pytest.approx(4 / 56)
    assert "52\n  of the 56 good/bad pairs of its test items (93%)" in committed


def test_the_transfer_table_repeats_the_stored_transfers() -> None:
    """The transfer figures METHODOLOGY gives for the reference entries are the live
    entries' stored records, row for row (the prose they replace had drifted: 0.27 for a
    stored 0.259, 0.0 for a verb probe that stores 0.175)."""
    from probebench.evaluation.results import TransferOut
    from probebench.registry.entry import entry_files, read_entry
    from probebench.registry.store import latest_results

    block = _block(METHODOLOGY.read_text("utf-8"), "transfers")
    assert block == transfers_table(), REGENERATE
    rows = _rows(block)
    n = 0
    for e in map(read_entry, entry_files(REGISTRY)):
        for task, record in latest_results(REGISTRY, e.id).items():
            for t in record.result.transfer.values():
                if not isinstance(t, TransferOut) or t.auroc is None:
                    continue
                key = f"`{e.id}` ({task})"
                if e.status != "live":
                    assert key not in rows
                    continue
                cells = rows[key]
                assert cells[3].startswith(f"{t.auroc.value:.3f} [")
                assert cells[5] == f"{t.transfer:.3f} ({t.control_transfer:.3f})"
                n += 1
    assert n == len(rows) >= 10


@pytest.fixture
def registry_copy(tmp_path: Path) -> Path:
    """The entries and stored results of the repository's registry (no artifacts)."""
    root = tmp_path / "registry"
    for part in ("probes", "results"):
        shutil.copytree(REGISTRY / part, root / part)
    return root


def _edit_latest(path: Path, edit: dict[str, float]) -> None:
    """Set dotted ``result`` fields of the file's latest record."""
    data = json.loads(path.read_text("utf-8"))
    for dotted, value in edit.items():
        node = data["history"][-1]["result"]
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node[part]
        node[leaf] = value
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")


def test_a_stored_number_that_moves_makes_the_document_stale(registry_copy: Path) -> None:
    """The blocks are rendered from the store: a stored share or transfer that changes
    changes the rendered document, so the committed one no longer equals it (the test
    above fails) until it is regenerated."""
    committed = METHODOLOGY.read_text("utf-8")
    assert render(committed, registry=registry_copy) == committed
    results = registry_copy / "results" / "probebench"
    _edit_latest(results / "syntaxgym-number-prep-smollm2-135m-l15-v2"
                 / "syntaxgym_number_prep.json", {"selectivity.pairs_split": 0.44})
    _edit_latest(results / "verb-grammar-smollm2-135m-l15-v3" / "verb_grammar_v2.json",
                 {"transfer.minilm-l6@4:token_avg.transfer": 0.0})
    rendered = render(committed, registry=registry_copy)
    assert rendered != committed
    pairs = _rows(_block(rendered, "pairs"))["`syntaxgym_number_prep`"]
    # the code's share and both stored ones, so the disagreement is in plain sight
    assert pairs[1] == "0.500" and pairs[2] == "0.440 (1 entry); 0.500 (1 entry)"
    transfers = _rows(_block(rendered, "transfers"))
    assert transfers["`probebench/verb-grammar-smollm2-135m-l15-v3` (verb_grammar_v2)"][5] == (
        "0.000 (0.010)")
    assert stored_pairs_split(registry_copy)["syntaxgym_number_prep"] == {
        "probebench/syntaxgym-number-prep-smollm2-135m-l15-v1": 0.5,
        "probebench/syntaxgym-number-prep-smollm2-135m-l15-v2": 0.44}


def test_a_registry_without_results_is_named(tmp_path: Path) -> None:
    from probebench.errors import InputError

    with pytest.raises(InputError, match=r"no results/ folder"):
        render(METHODOLOGY.read_text("utf-8"), registry=tmp_path)
