from __future__ import annotations

import time
from pathlib import Path

import pytest

from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import get_format
from probebench.tasks.pii import luhn_ok, scan_file, scan_lines

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("line", "kind"), [
    ("Write to maria.lopez@example.org today.", "e-mail address"),
    ("Call me on +34 612 345 678 tomorrow.", "phone number"),
    ("Her number is (555) 123-4567.", "phone number"),
    ("Card 4111 1111 1111 1111 expires soon.", "payment-card number"),
    ("SSN 123-45-6789 on file.", "national id"),
    ("DNI 12345678Z en la ficha.", "national id"),
    ("He lives at 221 Baker Street now.", "street address"),
    ("Vive en Calle Mayor 12, Madrid.", "street address"),
    ("Paid from ES07 2085 7361 3501 0483 9271 last week.", "bank account number"),
])
def test_each_kind_is_found(tmp_path: Path, line: str, kind: str) -> None:
    findings = scan_lines(tmp_path / "t.jsonl", ["clean line", line])
    assert [f.kind for f in findings] == [kind]
    assert findings[0].line == 2
    assert str(findings[0]).startswith(f"{tmp_path / 't.jsonl'}:2: {kind}")


#: the kinds of the 20 realistic strings the scan missed before it read numbers with
#: maintained validators, in strings of our own (each one missed by the old patterns)
THIRD_ROUND = [
    ("Llámame al 622418390 esta noche.", "phone number"),            # ES mobile
    ("La consulta está en el 915342210.", "phone number"),            # ES fixed
    ("Erreichbar unter 089 21096345, sagt sie.", "phone number"),     # DE Munich
    ("His Berlin mobile: 0170 4455667.", "phone number"),             # DE mobile
    ("The Osaka shop is on 06(6341)2211.", "phone number"),           # JP fixed
    ("Mi móvil en Japón es 08034567890.", "phone number"),            # JP mobile
    ("The Paris flat's line is 0142685300.", "phone number"),         # FR fixed
    ("Su móvil francés: 0645238197.", "phone number"),                # FR mobile
    ("Mail pablo.nieto＠example.org for tickets.", "e-mail address"),  # fullwidth ＠
    ("Es marta punto gil arroba correo punto es.", "e-mail address"),  # arroba … punto
    ("Adjunto el DNI 71.926.430-W escaneado.", "national id"),        # dotted DNI
    ("NIE Z-1478203-K, permiso de residencia.", "national id"),       # hyphenated NIE
    ("Ship it to 18 queensway road, york.", "street address"),        # EN lower case
    ("We met at 7b willow lane in the rain.", "street address"),      # EN lower, 7b
    ("Vivo en calle de la luna 9, 2º izquierda.", "street address"),  # ES lower case
    ("La oficina: avenida del mar número 14.", "street address"),     # ES, "número"
    ("Pagó con 5520.0497.1356.2186 en la tienda.", "payment-card number"),  # dots
    ("Refund to DE44 5001 0517 5407 3249 31, please.", "bank account number"),  # IBAN
    ("Su número de la Sécu: 1 85 05 78 006 084 91.", "national id"),  # French NIR
    ("Insured under NIR 271039912345629.", "national id"),            # NIR, unbroken
]


@pytest.mark.parametrize(("line", "kind"), THIRD_ROUND)
def test_the_third_rounds_kinds_are_found(tmp_path: Path, line: str, kind: str) -> None:
    findings = scan_lines(tmp_path / "t", [line])
    assert [f.kind for f in findings] == [kind], [(f.kind, f.text) for f in findings]


def test_a_list_of_years_is_no_phone(tmp_path: Path) -> None:
    assert scan_lines(tmp_path / "t", ["The years 1998 2004 2010"]) == []
    assert scan_lines(tmp_path / "t", ["Los años 1998, 2004 y 2010 fueron secos."]) == []


def test_findings_name_the_original_text_and_span(tmp_path: Path) -> None:
    """Matching runs on NFKC text; the report quotes the line as written."""
    line = "Ｍａｉｌ ｊｕａｎ＠ｅｘａｍｐｌｅ．ｏｒｇ or call ９１２ ３４５ ６７８."
    email, phone = scan_lines(tmp_path / "t", [line])
    assert (email.kind, email.text) == ("e-mail address", "ｊｕａｎ＠ｅｘａｍｐｌｅ．ｏｒｇ")
    assert (phone.kind, phone.text) == ("phone number", "９１２ ３４５ ６７８")
    for f in (email, phone):
        assert f.span is not None and line[f.span[0]:f.span[1]] == f.text
        assert f.column == f.span[0] + 1
    # a letter with a combining accent is one letter of the address
    (found,) = scan_lines(tmp_path / "t", ["Escribe a jose\u0301.ruiz@correo.es hoy."])
    assert found.text == "jose\u0301.ruiz@correo.es" and found.column == 11


def test_ordinary_sentences_are_clean(tmp_path: Path) -> None:
    lines = ["In 1998 the poet wrote her first novel.", "The bus leaves at 10:45 from gate 3.",
             "Card 4111 1111 1111 1112 fails the Luhn check.", "She has 12 cats and 3 dogs.",
             "DNI 12345678A lleva una letra que no cuadra.",   # check letter is Z
             "IBAN ES08 2085 7361 3501 0483 9271 fails its check digits."]
    assert scan_lines(tmp_path / "t", lines) == []
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")


def test_registered_test_sets_hold_no_personal_data() -> None:
    catalog = TaskCatalog.default()
    files = sorted({catalog.root / rel for t in catalog.specs.values()
                    for role, rel in t.files.items()
                    if role in get_format(t.format).test_roles})
    findings = [f for path in files for f in scan_file(path)]
    assert findings == [], [str(f) for f in findings[:10]]


def test_no_prompt_of_any_registered_task_is_flagged() -> None:
    """Every prompt text of every split and holdout of every packaged task, scanned as
    ``registry check-task`` scans a proposal's."""
    catalog = TaskCatalog.default()
    texts: list[tuple[str, str]] = []
    for task_id, spec in catalog.specs.items():
        fmt, home = get_format(spec.format), catalog.root_of(task_id)
        sets = dict(fmt.load(spec, home).splits)
        sets.update({f"holdout v{h.version}": fmt.read_holdout(spec, h, home).test
                     for h in spec.holdouts})
        texts += [(f"{task_id} {name} {p.id or item.id}", p.text)
                  for name, items in sets.items() for item in items for p in item.prompts]
    start = time.perf_counter()
    findings = [f for where, text in texts for f in scan_lines(Path(where), [text])]
    elapsed = time.perf_counter() - start
    print(f"{len(texts)} prompts of {len(catalog.specs)} tasks scanned in {elapsed:.2f} s")
    assert len(catalog.specs) >= 33 and len(texts) > 20_000
    assert findings == [], [str(f) for f in findings[:10]]


def _corpus() -> list[tuple[str, str]]:
    path = REPO / "tests" / "data" / "pii_corpus.tsv"
    rows = [line.split("\t") for line in path.read_text("utf-8").splitlines()
            if line and not line.startswith("#")]
    return [(kind, text) for kind, text in rows]


def test_recall_on_the_corpus_is_at_least_95_percent(tmp_path: Path) -> None:
    """Realistic EN/ES (and UK, DE, FR, JP, Latin American phone) personal data,
    including obfuscated and fullwidth e-mails, grouped ids, IBANs and addresses in lower
    case; and look-alike ordinary sentences (years, dates, prices, versions, ISBNs,
    times, scores), none of which may be flagged."""
    corpus = _corpus()
    positives = [(k, t) for k, t in corpus if k != "none"]
    negatives = [t for k, t in corpus if k == "none"]
    assert len(positives) >= 85 and len(negatives) >= 55
    missed = [(k, t) for k, t in positives
              if k not in {f.kind for f in scan_lines(tmp_path / "c", [t])}]
    recall = 1 - len(missed) / len(positives)
    print(f"personal-data recall {recall:.1%} on {len(positives)} positives, "
          f"{len(negatives)} negatives")
    assert recall >= 0.95, missed
    false = {t: [f.kind for f in scan_lines(tmp_path / "c", [t])] for t in negatives}
    assert not any(false.values()), {t: k for t, k in false.items() if k}
