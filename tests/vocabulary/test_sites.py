from __future__ import annotations

import numpy as np
import pytest

from probebench.errors import InputError, SiteError
from probebench.models.activations import length_batches, span_token_indices
from probebench.prompts import Prompt, read_prompts_jsonl
from probebench.sites import Site


def test_site_parse_and_str_round_trip() -> None:
    site = Site.parse("15:last_token")
    assert site == Site(15, "last_token")
    assert str(site) == "15:last_token"
    assert site.tensor_name == "layer15.last_token"


@pytest.mark.parametrize("text", ["15", "x:last_token", "15:nowhere", "-1:last_token",
                                  "0:attention_weighted"])
def test_site_parse_rejects_bad_sites(text: str) -> None:
    with pytest.raises(SiteError):
        Site.parse(text)


def test_span_token_indices_skips_special_tokens_and_finds_overlap() -> None:
    offsets = [(0, 0), (0, 3), (3, 7), (7, 11), (0, 0)]
    assert span_token_indices(offsets, (4, 9)) == [2, 3]
    assert span_token_indices(offsets, (0, 1)) == [1]
    assert span_token_indices(offsets, (11, 12)) == []


def test_length_batches_respects_budget_and_covers_every_prompt() -> None:
    lengths = np.array([5, 30, 12, 12, 7, 30, 1, 40])
    batches = length_batches(lengths, batch_tokens=60, max_batch_size=3)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    for rows in batches:
        assert len(rows) <= 3
        assert len(rows) == 1 or len(rows) * lengths[rows].max() <= 60
    # longest first, so padding is small: each batch's lengths are contiguous in order
    firsts = [int(lengths[b].max()) for b in batches]
    assert firsts == sorted(firsts, reverse=True)


def test_prompt_rejects_span_outside_text() -> None:
    with pytest.raises(InputError, match="span 'question'"):
        Prompt("short", spans={"question": (0, 9)})


def test_read_prompts_jsonl_names_file_line_and_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "p.jsonl"
    path.write_text('{"text": "fine"}\n\n{"text": "also", "spans": {"question": [0, "x"]}}\n')
    with pytest.raises(InputError, match=r"p\.jsonl:3: field 'spans\.question\.1'"):
        read_prompts_jsonl(path)
    path.write_text('{"text": "a", "id": "x"}\n{"text": "b", "id": "x"}\n')
    with pytest.raises(InputError, match=r":2: field 'id': 'x' already used on line 1"):
        read_prompts_jsonl(path)
    path.write_text('{"text": "a", "colour": 1}\n')
    with pytest.raises(InputError, match=r":1: field 'colour'"):
        read_prompts_jsonl(path)
    path.write_text('{"text": "a"\n')
    with pytest.raises(InputError, match=r":1: not valid JSON"):
        read_prompts_jsonl(path)
    path.write_text('{"text": "ok", "spans": {"answer": [1, 2]}}\n')
    (prompt,) = read_prompts_jsonl(path)
    assert prompt.spans == {"answer": (1, 2)}
