"""Build ``examples/senteval/sentence_length.txt``: a small multi-class SentEval probing
file, in the published format (``tr|va|te<TAB>label<TAB>sentence``, tokenised, one
sentence per line), made by probebench from real sentences.

The sentences are the grammatical sentences of the BLiMP paradigms and every condition
of the SyntaxGym suites packaged with probebench (``probebench/catalog/data``; see its
README for their licenses; some SyntaxGym conditions are ungrammatical by design, which
a length task does not mind). Each is tokenised as SentEval's files are (punctuation
split off) and labelled with SentEval's ``sentence_length`` rule (Conneau et al.,
2018): the bin of its length in words, punctuation excluded: 0 = 5-8, 1 = 9-12,
2 = 13-16. The longer bins have too few sentences here; shorter sentences are left out,
as SentEval does. Per class, a fixed number of sentences is taken in the order of a
salted SHA-256 of the text, then split 60/20/20 into tr/va/te the same way, so the file
is byte-identical on every run and the splits share no sentence.

    python tools/build_senteval_fixture.py   # rewrites the file; `git diff` shows nothing
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "probebench" / "catalog" / "data"
OUT = REPO / "examples" / "senteval" / "sentence_length.txt"
BINS = {0: (5, 8), 1: (9, 12), 2: (13, 16)}
PER_CLASS = 60
SALT = "probebench-senteval-sentence-length-v1"


def tokenise(text: str) -> str:
    text = re.sub(r"\s+", " ", text.strip())
    return re.sub(r"\s*([.,;:!?])", r" \1", text).strip()


def words(tokens: str) -> int:
    return sum(1 for t in tokens.split() if re.search(r"\w", t))


def sentences() -> set[str]:
    out = set()
    for path in sorted((DATA / "blimp").glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                out.add(tokenise(json.loads(line)["sentence_good"]))
    for path in sorted((DATA / "syntaxgym").glob("*.json")):
        suite = json.loads(path.read_text("utf-8"))
        for item in suite["items"]:
            for cond in item["conditions"]:
                text = " ".join(r["content"] for r in cond["regions"] if r["content"].strip())
                out.add(tokenise(text if text.rstrip()[-1:] in ".?!" else text + " ."))
    return out


def order(text: str) -> str:
    return hashlib.sha256(f"{SALT}/{text}".encode()).hexdigest()


def build() -> str:
    by_class: dict[int, list[str]] = {k: [] for k in BINS}
    for text in sentences():
        n = words(text)
        for label, (low, high) in BINS.items():
            if low <= n <= high:
                by_class[label].append(text)
    lines = []
    for label, texts in by_class.items():
        chosen = sorted(texts, key=order)[:PER_CLASS]
        if len(chosen) < PER_CLASS:
            raise SystemExit(f"class {label}: only {len(chosen)} sentences")
        for i, text in enumerate(chosen):
            part = "tr" if i < 0.6 * PER_CLASS else "va" if i < 0.8 * PER_CLASS else "te"
            lines.append((part, label, text))
    rank = {"tr": 0, "va": 1, "te": 2}
    lines.sort(key=lambda x: (rank[x[0]], order(x[2])))
    return "".join(f"{p}\t{label}\t{text}\n" for p, label, text in lines)


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(build(), "utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")
