from __future__ import annotations

from pathlib import Path

import pytest

from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.formats import get_format
from probebench.tasks.pii import luhn_ok, scan_file, scan_lines

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("line", "kind"), [
    ("Write to maria.lopez@example.org today.", "e-mail address"),
    ("Call me on +34 612 345 678 tomorrow.", "phone number"),
    ("Her number is (555) 123-4567.", "phone number"),
    ("Card 4111 1111 1111 1111 expires soon.", "payment-card number"),
    ("SSN 123-45-6789 on file.", "national id"),
    ("DNI 12345678Z en la ficha.", "national id"),
    ("He lives at 221 Baker Street now.", "street address"),
    ("Vive en Calle Mayor 12, Madrid.", "street address"),
])
def test_each_kind_is_found(tmp_path: Path, line: str, kind: str) -> None:
    findings = scan_lines(tmp_path / "t.jsonl", ["clean line", line])
    assert [f.kind for f in findings] == [kind]
    assert findings[0].line == 2
    assert str(findings[0]).startswith(f"{tmp_path / 't.jsonl'}:2: {kind}")


def test_ordinary_sentences_are_clean(tmp_path: Path) -> None:
    lines = ["In 1998 the poet wrote her first novel.", "The bus leaves at 10:45 from gate 3.",
             "Card 4111 1111 1111 1112 fails the Luhn check.", "She has 12 cats and 3 dogs."]
    assert scan_lines(tmp_path / "t", lines) == []
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")


def test_registered_test_sets_hold_no_personal_data() -> None:
    catalog = TaskCatalog.default()
    files = sorted({catalog.root / rel for t in catalog.specs.values()
                    for role, rel in t.files.items()
                    if role in get_format(t.format).test_roles})
    findings = [f for path in files for f in scan_file(path)]
    assert findings == [], [str(f) for f in findings[:10]]


def _corpus() -> list[tuple[str, str]]:
    path = REPO / "tests" / "data" / "pii_corpus.tsv"
    rows = [line.split("\t") for line in path.read_text("utf-8").splitlines()
            if line and not line.startswith("#")]
    return [(kind, text) for kind, text in rows]


def test_recall_on_the_corpus_is_at_least_90_percent(tmp_path: Path) -> None:
    """Realistic EN/ES (and UK, DE, FR phone) personal data, including obfuscated
    e-mails, spaced ids and street abbreviations; and look-alike ordinary sentences."""
    corpus = _corpus()
    positives = [(k, t) for k, t in corpus if k != "none"]
    negatives = [t for k, t in corpus if k == "none"]
    assert len(positives) >= 35 and len(negatives) >= 20
    missed = [(k, t) for k, t in positives
              if k not in {f.kind for f in scan_lines(tmp_path / "c", [t])}]
    assert len(missed) <= 0.1 * len(positives), missed
    false = {t: [f.kind for f in scan_lines(tmp_path / "c", [t])] for t in negatives}
    assert not any(false.values()), {t: k for t, k in false.items() if k}
