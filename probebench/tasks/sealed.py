"""Sealed holdouts: test sets a submitter cannot train on, committed now, revealed later.

A task's holdout is kept in *generations*. Each generation's items are sealed with the
maintainers' key; only the ciphertext and a public commitment are in the repository and
the wheel. The lifecycle, one function each (the ``probebench holdout`` commands call
them, and do all that the commands do): :func:`seal` the first generation, :func:`rotate`
(retire the current one and seal the next), :func:`reveal` a retired one (its plaintext
and commitment nonce go into the repository, so anyone can check the old commitment),
:func:`unseal` (plaintext for maintainers, in memory; :func:`unseal_to` writes it) and
:func:`verify_holdouts`.

**Plaintext.** The generation's items in the canonical form of test-set hashes
(``probebench.tasks.hygiene.canonical_test_text``: items sorted by id, each
``Item.record()`` as canonical JSON, joined by ``\\n``; no trailing newline).

**Commitment.** ``sha256(commitment_nonce || plaintext)``, hex, where
``commitment_nonce`` is 32 random bytes drawn at sealing. The commitment is public from
the start; the nonce stays inside the ciphertext until the reveal, so nobody can test a
guessed item set against the commitment (a bare SHA-256 of the plaintext would allow it).

**Sealed file** (``holdouts/<task>/gen-<N>.sealed`` beside the tasks file): one line of
JSON, ``{"format", "cipher", "task", "generation", "nonce", "ciphertext"}``; the cipher is
AES-256-GCM (``cryptography``'s AEAD) with a random 96-bit nonce, and the associated data
is ``canonical_json({"format", "task", "generation"})``, computed from where the file is
*listed*, so a sealed file moved to another task or generation fails authentication.
The encrypted envelope is one header line of canonical JSON (format, task, generation,
``commitment_nonce`` in hex, ``n_items``), a newline, then the plaintext.

**Listing** (``holdouts.yaml`` beside the tasks file, ``probebench.tasks.holdout_listing``;
the tasks file is never written, and a task's generation 0 is its public holdout under
``holdouts`` there): per task, every generation with its number, status (``current``,
``retired``, ``revealed``), commitment, sealed file and its SHA-256 and size, the key id
(a one-way fingerprint of the key, so a wrong key is named as such), n_items, the dates,
and for a revealed one the revealed file (``holdouts/<task>/gen-<N>.revealed.jsonl``, the
plaintext's exact bytes) and the commitment nonce. Written only by these functions, each
write atomic.

**The key** (``probebench.tasks.holdout_key``) is 32 random bytes, written as 64 hex
digits. Every function here takes it as its bytes, as a key file given explicitly
(``--key FILE``), or from the environment variable ``PROBEBENCH_HOLDOUT_KEY`` holding the
key's text (as a GitHub secret is passed); no default path is ever read. Without one,
:class:`HoldoutKeyMissingError`.

Without the key, :func:`verify_holdouts` checks form only (files present, sizes and
hashes as listed, the sealed files well formed): an AES-GCM tag cannot be checked
without the key. Revealed generations are checked in full without a key.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime as dt
import logging
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probebench.errors import InputError, field_problem
from probebench.hashing import atomic_write_bytes, canonical_json, sha256_bytes
from probebench.jsonsafe import loads_json, read_capped
from probebench.paths import enclosing_repo
from probebench.prompts import Prompt, check_messages, plain_chat_text
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.datapaths import data_file
from probebench.tasks.holdout_key import (
    KEY_ENV,
    HoldoutKey,
    HoldoutKeyInvalidError,
    HoldoutKeyMissingError,
    key_bytes,
    key_id,
    parse_key,
    read_key,
    write_key_file,
)
from probebench.tasks.holdout_listing import (
    LISTING_FILE,
    Generation,
    HoldoutFormError,
    HoldoutsFile,
    TaskHoldouts,
    read_listing,
    write_listing,
)
from probebench.tasks.hygiene import canonical_test_text

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

log = logging.getLogger(__name__)

FOLDER = "holdouts"
SEALED_FORMAT = "probebench-sealed-holdout/1"
ENVELOPE_FORMAT = "probebench-holdout-envelope/1"
CIPHER: Literal["AES-256-GCM"] = "AES-256-GCM"
NONCE_BYTES = 12
COMMITMENT_NONCE_BYTES = 32
#: the largest sealed or revealed file read (a holdout of a few thousand items is ~1 MB)
MAX_HOLDOUT_BYTES = 64 << 20

# --- errors -------------------------------------------------------------------------

class HoldoutAuthenticationError(InputError):
    """A sealed file failed authentication: changed, moved from another task or
    generation, or sealed under another key."""


class HoldoutWrongKeyError(HoldoutAuthenticationError):
    """The key given is not the one that sealed the generation."""


class HoldoutStateError(InputError):
    """A lifecycle step that the generation's status does not allow."""


# --- items --------------------------------------------------------------------------

class _PromptRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    spans: dict[str, tuple[int, int]] = Field(default_factory=dict)
    id: str | None = None
    label: int | None = None
    slices: dict[str, str] = Field(default_factory=dict)
    messages: list[tuple[str, str]] | None = None


class _ItemRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    slices: dict[str, str] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)
    prompts: list[_PromptRecord] = Field(min_length=1)


def item_from_record(record: Any, where: str) -> Item:
    """An ``Item`` from its canonical record (``Item.record()``: id, slices, data and
    prompts with text, spans, id, label, slices); the error names ``where`` and the
    field."""
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a JSON object (an item record)")
    try:
        parsed = _ItemRecord.model_validate(record)
    except ValidationError as exc:
        raise InputError(f"{where}: {field_problem(exc, '(item)')}") from None
    for k, p in enumerate(parsed.prompts):
        if p.messages is not None and p.text != plain_chat_text(
                check_messages(p.messages, f"{where}: prompts.{k}.messages")):
            raise InputError(f"{where}: prompts.{k}.text must be the plain rendering of its "
                             "messages (probebench.prompts.plain_chat_text)")
    try:
        prompts = tuple(Prompt(p.text, spans=dict(p.spans), id=p.id, label=p.label,
                               slices=dict(p.slices),
                               messages=None if p.messages is None else
                               tuple(p.messages))
                        for p in parsed.prompts)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return Item(parsed.id, prompts, slices=dict(parsed.slices), data=parsed.data)


def items_from_text(text: str, where: str) -> list[Item]:
    """Items from JSONL text, one item record per non-blank line; ids unique."""
    items: list[Item] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        item = item_from_record(loads_json(line, f"{where}:{number}"), f"{where}:{number}")
        if item.id in seen:
            raise InputError(f"{where}:{number}: item id {item.id!r} already used on line "
                             f"{seen[item.id]}")
        seen[item.id] = number
        items.append(item)
    return items


def read_items(path: Path) -> list[Item]:
    """The items to seal: a JSONL file of item records in canonical form (one
    ``Item.record()`` per line, as ``probebench holdout unseal`` writes them), or a
    folder holding ``items.jsonl``."""
    path = Path(path)
    if path.is_dir():
        path = path / "items.jsonl"
    if not path.is_file():
        raise InputError(f"{path}: no such file (give a JSONL file of item records, or a "
                         "folder holding items.jsonl)")
    raw = read_capped(path, MAX_HOLDOUT_BYTES, "holdout")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    items = items_from_text(text, str(path))
    if not items:
        raise InputError(f"{path}: no items")
    return items


def canonical_plaintext(items: Iterable[Item]) -> bytes:
    """A generation's plaintext: the canonical test text of its items, UTF-8."""
    return canonical_test_text(items).encode("utf-8")


def commitment_of(plaintext: bytes, nonce: bytes) -> str:
    """``sha256(nonce || plaintext)`` in hex: the public commitment."""
    return sha256_bytes(nonce + plaintext)


#: what ``items`` of :func:`seal` and :func:`rotate` is to have the task's fresh-item
#: generator make them
FRESH: Literal["fresh"] = "fresh"
#: the items to seal: Items, a JSONL file of item records (:func:`read_items`), or FRESH
HoldoutItems = Sequence[Item] | os.PathLike[str] | Literal["fresh"]


# --- paths --------------------------------------------------------------------------

def sealed_path(task_id: str, generation: int) -> str:
    return f"{FOLDER}/{task_id}/gen-{generation}.sealed"


def revealed_path(task_id: str, generation: int) -> str:
    return f"{FOLDER}/{task_id}/gen-{generation}.revealed.jsonl"


# --- sealing and opening ------------------------------------------------------------

def associated_data(task_id: str, generation: int) -> bytes:
    """What the cipher authenticates besides the ciphertext: the task and generation."""
    return canonical_json({"format": SEALED_FORMAT, "task": task_id,
                           "generation": generation}).encode("utf-8")


def _aead(key: bytes) -> AESGCM:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:  # pragma: no cover - a declared dependency
        raise InputError("sealed holdouts need the cryptography package: pip install "
                         "'cryptography>=42'") from None
    return AESGCM(key)


def _decrypt(key: bytes, parts: SealedParts, ad: bytes) -> bytes | None:
    """The envelope, or None when authentication fails."""
    aead = _aead(key)
    from cryptography.exceptions import InvalidTag

    try:
        return aead.decrypt(parts.nonce, parts.ciphertext, ad)
    except InvalidTag:
        return None


def seal_bytes(task_id: str, generation: int, items: Sequence[Item],
               key: bytes) -> tuple[bytes, str]:
    """(sealed file bytes, commitment) of ``items`` as ``generation`` of ``task_id``."""
    plaintext = canonical_plaintext(items)
    commit_nonce = secrets.token_bytes(COMMITMENT_NONCE_BYTES)
    header = canonical_json({"format": ENVELOPE_FORMAT, "task": task_id,
                             "generation": generation, "commitment_nonce": commit_nonce.hex(),
                             "n_items": len(items)})
    envelope = header.encode("utf-8") + b"\n" + plaintext
    nonce = secrets.token_bytes(NONCE_BYTES)
    ciphertext = _aead(key).encrypt(nonce, envelope, associated_data(task_id, generation))
    sealed = canonical_json({"format": SEALED_FORMAT, "cipher": CIPHER, "task": task_id,
                             "generation": generation, "nonce": nonce.hex(),
                             "ciphertext": base64.b64encode(ciphertext).decode("ascii")})
    return (sealed + "\n").encode("ascii"), commitment_of(plaintext, commit_nonce)


@dataclass(frozen=True)
class SealedParts:
    """A sealed file's fields, read without the key."""

    task: str
    generation: int
    nonce: bytes
    ciphertext: bytes


def parse_sealed(data: bytes, where: str) -> SealedParts:
    """The fields of a sealed file; :class:`HoldoutFormError` when malformed."""
    obj = loads_json(data, where)
    if not isinstance(obj, dict) or obj.get("format") != SEALED_FORMAT:
        raise HoldoutFormError(f"{where}: not a sealed holdout (format {SEALED_FORMAT})")
    if obj.get("cipher") != CIPHER:
        raise HoldoutFormError(f"{where}: cipher {obj.get('cipher')!r}, expected {CIPHER}")
    try:
        nonce = bytes.fromhex(str(obj["nonce"]))
        ciphertext = base64.b64decode(str(obj["ciphertext"]), validate=True)
        task, generation = str(obj["task"]), int(obj["generation"])
    except (KeyError, ValueError, TypeError, binascii.Error):
        raise HoldoutFormError(f"{where}: a field is missing or malformed (task, "
                               "generation, nonce, ciphertext)") from None
    if len(nonce) != NONCE_BYTES or len(ciphertext) < 16:
        raise HoldoutFormError(f"{where}: nonce of {len(nonce)} bytes or ciphertext of "
                               f"{len(ciphertext)} bytes is too short")
    return SealedParts(task, generation, nonce, ciphertext)


@dataclass(frozen=True)
class Unsealed:
    """A generation opened with the key (or read from its revealed file)."""

    task: str
    generation: int
    items: list[Item]
    plaintext: bytes
    commitment_nonce: str


def _read_listed(root: Path, rel: str, expected_sha256: str | None, what: str) -> bytes:
    path = data_file(root, rel)
    if not path.is_file():
        raise HoldoutFormError(f"{path}: the {what} is missing")
    data = read_capped(path, MAX_HOLDOUT_BYTES, what)
    if expected_sha256 is not None and sha256_bytes(data) != expected_sha256:
        raise HoldoutFormError(f"{path}: the {what} changed since it was listed (its "
                               f"sha256 is {sha256_bytes(data)[:16]}..., listed "
                               f"{expected_sha256[:16]}...)")
    return data


def open_generation(root: Path, task_id: str, gen: Generation, key: bytes) -> Unsealed:
    """Decrypt and check one listed generation: authenticated under the task and
    generation it is listed as, its envelope naming the same, its commitment and item
    count as listed."""
    where = f"generation {gen.generation} of {task_id}"
    data = _read_listed(root, gen.sealed_file, gen.sealed_sha256, "sealed file")
    parts = parse_sealed(data, str(root / gen.sealed_file))
    envelope = _decrypt(key, parts, associated_data(task_id, gen.generation))
    if envelope is None:
        if key_id(key) != gen.key_id:
            raise HoldoutWrongKeyError(f"{where}: this key (id {key_id(key)}) is not the one "
                                  f"that sealed it (id {gen.key_id}); authentication "
                                  "failed") from None
        raise HoldoutAuthenticationError(
            f"{where}: the sealed file failed authentication: it was changed, or sealed "
            f"for another task or generation (its header says {parts.task!r} generation "
            f"{parts.generation})") from None
    head, _, plaintext = envelope.partition(b"\n")
    header = loads_json(head, where)
    if (not isinstance(header, dict) or header.get("format") != ENVELOPE_FORMAT
            or header.get("task") != task_id or header.get("generation") != gen.generation):
        raise HoldoutAuthenticationError(f"{where}: the envelope names another task or "
                                         "generation")
    nonce_hex = str(header.get("commitment_nonce", ""))
    if (len(nonce_hex) != 2 * COMMITMENT_NONCE_BYTES
            or commitment_of(plaintext, bytes.fromhex(nonce_hex)) != gen.commitment):
        raise HoldoutAuthenticationError(f"{where}: the plaintext does not match the "
                                         "listed commitment")
    items = items_from_text(plaintext.decode("utf-8"), where)
    if len(items) != gen.n_items or header.get("n_items") != gen.n_items:
        raise HoldoutFormError(f"{where}: {len(items)} items, listed {gen.n_items}")
    _check_label_counts(where, items, gen)
    return Unsealed(task_id, gen.generation, items, plaintext, nonce_hex)


def _check_label_counts(where: str, items: Sequence[Item], gen: Generation) -> None:
    labels = [p.label for item in items for p in item.prompts]
    found = (labels.count(1), labels.count(0))
    listed = (gen.n_label_1, gen.n_label_0)
    if listed != (None, None) and found != listed:
        raise HoldoutFormError(f"{where}: {found[0]} prompts labelled 1 and {found[1]} "
                               f"labelled 0, listed {listed[0]} and {listed[1]}")


def read_revealed(root: Path, task_id: str, gen: Generation) -> Unsealed:
    """A revealed generation's items, checked against its commitment (no key needed)."""
    where = f"generation {gen.generation} of {task_id}"
    if gen.status != "revealed" or gen.revealed_file is None or gen.commitment_nonce is None:
        raise HoldoutStateError(f"{where} is {gen.status}, not revealed")
    if gen.revealed_file != revealed_path(task_id, gen.generation):
        raise HoldoutFormError(f"{where}: revealed_file {gen.revealed_file!r}, expected "
                               f"{revealed_path(task_id, gen.generation)!r}")
    plaintext = _read_listed(root, gen.revealed_file, None, "revealed file")
    if commitment_of(plaintext, bytes.fromhex(gen.commitment_nonce)) != gen.commitment:
        raise HoldoutAuthenticationError(f"{where}: the revealed file does not match the "
                                         "commitment listed since its sealing")
    try:
        text = plaintext.decode("utf-8")
    except UnicodeDecodeError:
        raise HoldoutFormError(f"{where}: the revealed file is not UTF-8") from None
    items = items_from_text(text, str(root / gen.revealed_file))
    if len(items) != gen.n_items:
        raise HoldoutFormError(f"{where}: {len(items)} items revealed, listed {gen.n_items}")
    _check_label_counts(where, items, gen)
    return Unsealed(task_id, gen.generation, items, plaintext, gen.commitment_nonce)


# --- the lifecycle ------------------------------------------------------------------

def _today(today: dt.date | None) -> dt.date:
    return today or dt.datetime.now(dt.UTC).date()


def _task(catalog: TaskCatalog, task_id: str) -> tuple[Path, HoldoutsFile, TaskHoldouts]:
    """(the task's data root, its tasks file's listing, the task's generations)."""
    catalog.spec(task_id)  # an unknown task is refused, with close ids
    listing = read_listing(catalog.source_of(task_id))
    return catalog.root_of(task_id), listing, listing.of(task_id)


def _shared(items: Sequence[Item], others: Iterable[Item]) -> tuple[list[str], list[str]]:
    """(ids, ids of items with a prompt text) of ``items`` found in ``others``."""
    pool = list(others)
    ids = {i.id for i in pool}
    texts = {p.text for i in pool for p in i.prompts}
    return (sorted(i.id for i in items if i.id in ids),
            sorted(i.id for i in items if any(p.text in texts for p in i.prompts)))


def _check_new_items(catalog: TaskCatalog, task_id: str, number: int, items: Sequence[Item],
                     earlier: Sequence[Generation], root: Path, key: bytes) -> None:
    """Refuse items that repeat an item id or prompt text of the task's splits or of an
    earlier generation this key (or its reveal) can read."""
    if not items:
        raise InputError(f"generation {number} of {task_id}: no items to seal")
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise InputError(f"generation {number} of {task_id}: item ids repeat")
    pools: list[tuple[str, list[Item]]] = [
        (f"{split} split", split_items)
        for split, split_items in catalog.load(task_id).splits.items()]
    for gen in earlier:
        if gen.status == "revealed":
            pools.append((f"revealed generation {gen.generation}",
                          read_revealed(root, task_id, gen).items))
        elif gen.key_id == key_id(key):
            pools.append((f"sealed generation {gen.generation}",
                          open_generation(root, task_id, gen, key).items))
    for name, pool in pools:
        same_id, same_text = _shared(items, pool)
        if same_id or same_text:
            shown = ", ".join((same_id or same_text)[:3])
            raise InputError(f"generation {number} of {task_id} refused: {len(same_id)} "
                             f"item id(s) and {len(same_text)} item(s) with prompt texts of "
                             f"the {name} (e.g. {shown}); a holdout shares nothing with "
                             "what a submitter can see")


def _items_to_seal(catalog: TaskCatalog, task_id: str, items: HoldoutItems, key: bytes,
                   number: int, n_items: int | None) -> list[Item]:
    """The items that ``items`` stands for (see :func:`seal`)."""
    if isinstance(items, str):
        if items != FRESH:
            raise InputError(f"items {items!r}: give Items, a Path to a JSONL file of item "
                             f"records, or {FRESH!r} for the task's fresh-item generator")
        from probebench.tasks.fresh_items import fresh_items  # the generators load only here

        return fresh_items(catalog, task_id, key, number, n_items=n_items)
    if n_items is not None:
        raise InputError(f"n_items {n_items}: only fresh items ({FRESH!r}) are made to a "
                         "size")
    if isinstance(items, os.PathLike):
        return read_items(Path(items))
    return list(items)


def _seal_next(catalog: TaskCatalog, task_id: str, items: HoldoutItems, key: bytes,
               today: dt.date | None, n_items: int | None, *,
               rotating: bool) -> tuple[Generation | None, Generation]:
    root, listing, held = _task(catalog, task_id)
    current = held.current
    retired: Generation | None = None
    if rotating:
        if current is None:
            raise HoldoutStateError(f"{task_id} has no current sealed generation to retire; "
                                    "seal the first with `probebench holdout seal`")
        open_generation(root, task_id, current, key)  # only the key's holder rotates
        retired = current.model_copy(update={"status": "retired",
                                             "retired_at": _today(today)})
    elif current is not None:
        raise HoldoutStateError(f"{task_id} already has a current sealed generation "
                                f"({current.generation}): retire it and seal the next with "
                                "`probebench holdout rotate`")
    number = len(held.generations) + 1
    chosen = _items_to_seal(catalog, task_id, items, key, number, n_items)
    _check_new_items(catalog, task_id, number, chosen, held.generations, root, key)
    sealed, commitment = seal_bytes(task_id, number, chosen, key)
    rel = sealed_path(task_id, number)
    labels = [p.label for item in chosen for p in item.prompts]
    gen = Generation(generation=number, status="current", commitment=commitment,
                     sealed_file=rel, sealed_sha256=sha256_bytes(sealed),
                     sealed_bytes=len(sealed), key_id=key_id(key), n_items=len(chosen),
                     n_label_1=labels.count(1), n_label_0=labels.count(0),
                     sealed_at=_today(today))
    gens = [retired if retired is not None and g.generation == retired.generation else g
            for g in held.generations] + [gen]
    _write_with(catalog, task_id, listing.with_task(task_id, gens), data_file(root, rel),
                sealed)
    return retired, gen


def _write_with(catalog: TaskCatalog, task_id: str, listing: HoldoutsFile, path: Path,
                data: bytes) -> None:
    """Write ``data`` to ``path`` (a file the new listing names), then the listing; a
    failed listing write takes the file back, so no file is left that no listing names."""
    atomic_write_bytes(path, data)
    try:
        write_listing(catalog.source_of(task_id), listing)
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        raise


def seal(catalog: TaskCatalog, task_id: str, items: HoldoutItems, key: HoldoutKey = None, *,
         n_items: int | None = None, today: dt.date | None = None) -> Generation:
    """Seal ``items`` as the next generation of ``task_id``'s holdout, now current, and
    list it in ``holdouts.yaml`` beside the task's tasks file (the tasks file itself is
    never written).

    ``items``: a sequence of ``Item``; a ``Path`` to a JSONL file of item records (or a
    folder holding ``items.jsonl``, :func:`read_items`); or ``"fresh"``: the task's
    fresh-item generator makes them, seeded from the key and the generation, in memory
    only (``n_items`` of them, default the generator's). ``key``: the key's bytes, a key
    file's ``Path``, or None for ``$PROBEBENCH_HOLDOUT_KEY`` (:func:`read_key`).
    Refused when a current generation exists (:func:`rotate` retires it), or when an
    item repeats an item id or prompt text of the task or of an earlier generation."""
    secret = key_bytes(key)
    return _seal_next(catalog, task_id, items, secret, today, n_items, rotating=False)[1]


def rotate(catalog: TaskCatalog, task_id: str, items: HoldoutItems, key: HoldoutKey = None,
           *, n_items: int | None = None, today: dt.date | None = None
           ) -> tuple[Generation, Generation]:
    """Retire the current generation (the key must open it) and seal ``items`` as the
    next: (the retired generation, the new current one), in one listing write.
    ``items``, ``key`` and ``n_items`` as for :func:`seal`."""
    secret = key_bytes(key)
    retired, gen = _seal_next(catalog, task_id, items, secret, today, n_items, rotating=True)
    assert retired is not None
    return retired, gen


def unseal(catalog: TaskCatalog, task_id: str, key: HoldoutKey = None, *,
           generation: int | None = None) -> Unsealed:
    """The plaintext items of a generation (default: the current one), checked, in
    memory. ``key`` as for :func:`seal`."""
    root, _, held = _task(catalog, task_id)
    gen = held.current if generation is None else held.get(generation)
    if gen is None:
        which = "no current generation" if generation is None else \
            f"no generation {generation}"
        raise HoldoutStateError(f"{task_id} has {which} (listed: "
                                f"{[g.generation for g in held.generations]})")
    return open_generation(root, task_id, gen, key_bytes(key))


def current_generation(catalog: TaskCatalog, task_id: str) -> Generation | None:
    """The task's current sealed generation as listed (no key needed), or None."""
    return read_listing(catalog.source_of(task_id)).of(task_id).current


def generations(catalog: TaskCatalog, task_id: str) -> list[Generation]:
    """Every listed sealed generation of the task, oldest first."""
    return list(read_listing(catalog.source_of(task_id)).of(task_id).generations)


def sealed_tasks(catalog: TaskCatalog) -> list[str]:
    """The catalog's tasks that have a current sealed generation, sorted."""
    return sorted(t for t in catalog.ids if current_generation(catalog, t) is not None)


def write_unsealed(unsealed: Unsealed, out: Path) -> Path:
    """Write ``OUT/<task>/gen-<N>.jsonl`` (mode 0600, atomically): the items, one
    canonical record a line, as :func:`read_items` reads them back."""
    path = Path(out) / unsealed.task / f"gen-{unsealed.generation}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write_bytes(path, unsealed.plaintext + b"\n", mode=0o600)
    return path


def _plaintext_folder(catalog: TaskCatalog, out: Path) -> Path:
    """``out``, resolved; refused inside a task catalog's folder (committed, and shipped
    in the wheel), warned about inside a git checkout."""
    folder = Path(out).resolve()
    for root in sorted({catalog.root_of(t).resolve() for t in catalog.ids}):
        if folder.is_relative_to(root):
            raise InputError(f"{out}: inside the task catalog {root}, which is "
                             "committed and shipped in the wheel; write the plaintext "
                             "elsewhere")
    repo = enclosing_repo(folder)
    if (repo / ".git").exists():
        log.warning("%s is inside the git checkout %s: never commit the plaintext",
                    folder, repo)
    return folder


def unseal_to(catalog: TaskCatalog, out: Path, key: HoldoutKey = None, *,
              task_id: str | None = None, generation: int | None = None
              ) -> list[tuple[Unsealed, Path]]:
    """Decrypt ``task_id``'s current generation (or ``generation``), or with no
    ``task_id`` every task's current one, and write each to ``OUT/<task>/gen-<N>.jsonl``
    (:func:`write_unsealed`, mode 0600): (the generation opened, its file), in task
    order. ``out`` may not be inside a task catalog's folder; inside a git checkout it
    is warned about. ``key`` as for :func:`seal`."""
    if task_id is None and generation is not None:
        raise InputError(f"generation {generation} picks one task's generation: name the "
                         "task (a TASK with --generation)")
    secret = key_bytes(key)
    folder = _plaintext_folder(catalog, out)
    tasks = [task_id] if task_id is not None else sealed_tasks(catalog)
    if not tasks:
        raise InputError(f"{catalog.describe()}: no task has a current sealed generation")
    done = []
    for task in tasks:
        opened = unseal(catalog, task, secret, generation=generation)
        done.append((opened, write_unsealed(opened, folder)))
    return done


def reveal(catalog: TaskCatalog, task_id: str, generation: int, key: HoldoutKey = None, *,
           today: dt.date | None = None) -> Generation:
    """Publish a retired generation: its plaintext's exact bytes go to
    ``holdouts/<task>/gen-<N>.revealed.jsonl`` and its commitment nonce into the listing
    (``holdouts.yaml``), so anyone can check the commitment listed since its sealing.
    The current generation is never revealed (rotate first). ``key`` as for
    :func:`seal`."""
    secret = key_bytes(key)
    root, listing, held = _task(catalog, task_id)
    gen = held.get(generation)
    if gen is None:
        raise HoldoutStateError(f"{task_id} has no generation {generation}")
    if gen.status != "retired":
        hint = (": rotate first, so that audits use a generation nobody has seen"
                if gen.status == "current" else "")
        raise HoldoutStateError(f"generation {generation} of {task_id} is {gen.status}; "
                                f"only a retired generation is revealed{hint}")
    opened = open_generation(root, task_id, gen, secret)
    rel = revealed_path(task_id, generation)
    shown = gen.model_copy(update={"status": "revealed", "revealed_at": _today(today),
                                   "revealed_file": rel,
                                   "commitment_nonce": opened.commitment_nonce})
    Generation.model_validate(shown.model_dump())
    gens = [shown if g.generation == generation else g for g in held.generations]
    _write_with(catalog, task_id, listing.with_task(task_id, gens), data_file(root, rel),
                opened.plaintext)
    return shown


# --- leaks --------------------------------------------------------------------------

#: a line of a prompt shorter than this is not searched for on its own (too common)
MIN_LEAK_LINE = 25


def hidden_texts(items: Iterable[Item], public: Iterable[Item] = ()) -> set[str]:
    """What must never appear outside the sealed file: every prompt text of ``items``,
    and each line of one (a verb sentence inside its public template) of at least
    ``MIN_LEAK_LINE`` characters that is not a line of a ``public`` prompt."""
    public_lines = {line.strip() for item in public for p in item.prompts
                    for line in p.text.splitlines()}
    out: set[str] = set()
    for item in items:
        for prompt in item.prompts:
            out.add(prompt.text)
            out.update(line.strip() for line in prompt.text.splitlines()
                       if len(line.strip()) >= MIN_LEAK_LINE
                       and line.strip() not in public_lines)
    return out


def leaks(hidden: Iterable[str], files: Iterable[tuple[str, bytes]]) -> list[tuple[str, str]]:
    """(file name, text) for every hidden text found in one of ``files`` (name, bytes):
    the check that a holdout's plaintext is in no tracked file and no wheel."""
    needles = sorted({h.encode("utf-8") for h in hidden if h}, key=len)
    found: list[tuple[str, str]] = []
    for name, data in files:
        for needle in needles:
            if needle in data:
                found.append((name, needle.decode("utf-8")))
    return found


# --- verification -------------------------------------------------------------------

@dataclass(frozen=True)
class HoldoutCheck:
    """One generation (or the listing) checked. ``level``: ``authentic`` (opened with the
    key), ``revealed`` (the revealed file matches its commitment), ``form`` (no key:
    files, sizes and hashes only) or ``listing``."""

    task: str
    generation: int | None
    ok: bool
    level: Literal["authentic", "revealed", "form", "listing"]
    message: str


FORM_ONLY = "form only: authenticity needs the key"


def _check_form(root: Path, task_id: str, gen: Generation) -> str:
    """What the listing says of a sealed file, checked without the key."""
    if gen.sealed_file != sealed_path(task_id, gen.generation):
        raise HoldoutFormError(f"sealed_file {gen.sealed_file!r}, expected "
                               f"{sealed_path(task_id, gen.generation)!r}")
    data = _read_listed(root, gen.sealed_file, gen.sealed_sha256, "sealed file")
    if len(data) != gen.sealed_bytes:
        raise HoldoutFormError(f"{gen.sealed_file}: {len(data)} bytes, listed "
                               f"{gen.sealed_bytes}")
    parts = parse_sealed(data, str(root / gen.sealed_file))
    if (parts.task, parts.generation) != (task_id, gen.generation):
        raise HoldoutFormError(f"{gen.sealed_file}: its header names {parts.task!r} "
                               f"generation {parts.generation}")
    return f"{gen.n_items} items, sealed file sha256 {gen.sealed_sha256[:16]}..."


def _check_generation(root: Path, task_id: str, gen: Generation,
                      key: bytes | None) -> HoldoutCheck:
    def check(ok: bool, level: Literal["authentic", "revealed", "form"],
              message: str) -> HoldoutCheck:
        return HoldoutCheck(task_id, gen.generation, ok, level, f"({gen.status}) {message}")

    try:
        form = _check_form(root, task_id, gen)
    except InputError as exc:
        return check(False, "form", str(exc))
    try:
        if gen.status == "revealed":
            read_revealed(root, task_id, gen)
            if key is not None and key_id(key) == gen.key_id:
                open_generation(root, task_id, gen, key)
                return check(True, "authentic", f"{form}; opened with the key, and the "
                             "revealed file matches its commitment")
            return check(True, "revealed", f"{form}; the revealed file matches its "
                         "commitment")
        if key is None:
            return check(True, "form", f"{form}; {FORM_ONLY}")
        if key_id(key) != gen.key_id:
            return check(True, "form", f"{form}; sealed under another key (id "
                         f"{gen.key_id}): {FORM_ONLY}")
        open_generation(root, task_id, gen, key)
        return check(True, "authentic", f"{form}; opened with the key, commitment matches")
    except InputError as exc:
        return check(False, "revealed" if gen.status == "revealed" else "authentic",
                     str(exc))


def _check_listing(root: Path, listing: HoldoutsFile, catalog: TaskCatalog,
                   task_ids: Sequence[str] | None, key: bytes | None) -> list[HoldoutCheck]:
    """The generations one folder's listing names, and the files under its holdouts/
    that none names."""
    where = (root / LISTING_FILE).as_posix()
    out: list[HoldoutCheck] = []
    listed: set[str] = set()
    for task_id, held in listing.sealed_holdouts.items():
        if task_ids and task_id not in task_ids:
            continue
        listed.update(f for gen in held.generations
                      for f in (gen.sealed_file, gen.revealed_file) if f)
        if task_id not in catalog.specs or catalog.root_of(task_id).resolve() != root:
            out.append(HoldoutCheck(task_id, None, False, "listing",
                                    f"{where}: lists {task_id}, which no tasks file of this "
                                    "folder registers"))
            continue
        out.extend(_check_generation(root, task_id, gen, key) for gen in held.generations)
    folder = root / FOLDER
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(root).as_posix()
            task_id = rel.split("/")[1] if rel.count("/") >= 2 else "-"
            if (path.is_file() or path.is_symlink()) and rel not in listed and (
                    not task_ids or task_id in task_ids):
                out.append(HoldoutCheck(task_id, None, False, "listing",
                                        f"{rel}: no generation in {LISTING_FILE} names it"))
    return out


def verify_holdouts(catalog: TaskCatalog, task_ids: Sequence[str] | None = None,
                    key: HoldoutKey = None) -> list[HoldoutCheck]:
    """Every listed generation of ``task_ids`` (default: all listed), checked: with the
    key, opened and matched to its commitment; without one, form only (an AES-GCM tag
    needs the key), except revealed generations, matched to their commitment. ``key``
    as for :func:`seal`, but optional: without the bytes or a key file, the key is read
    from ``$PROBEBENCH_HOLDOUT_KEY`` when set. Tasks a listing names that no tasks
    file of its folder registers, and files under ``holdouts/`` no generation names,
    are reported too."""
    for task_id in task_ids or ():
        catalog.spec(task_id)
    secret = read_key(key, required=False)
    # one listing per folder: the tasks files of a folder share holdouts.yaml
    folders = {catalog.root_of(t).resolve(): catalog.source_of(t) for t in catalog.ids}
    out: list[HoldoutCheck] = []
    for root, tasks_file in sorted(folders.items()):
        try:
            listing = read_listing(tasks_file)
        except InputError as exc:
            out.append(HoldoutCheck("-", None, False, "listing", str(exc)))
            continue
        out.extend(_check_listing(root, listing, catalog, task_ids, secret))
    return out


__all__ = [
    "CIPHER",
    "FORM_ONLY",
    "FRESH",
    "KEY_ENV",
    "LISTING_FILE",
    "Generation",
    "HoldoutAuthenticationError",
    "HoldoutCheck",
    "HoldoutFormError",
    "HoldoutItems",
    "HoldoutKey",
    "HoldoutKeyInvalidError",
    "HoldoutKeyMissingError",
    "HoldoutStateError",
    "HoldoutWrongKeyError",
    "HoldoutsFile",
    "TaskHoldouts",
    "Unsealed",
    "canonical_plaintext",
    "commitment_of",
    "current_generation",
    "generations",
    "hidden_texts",
    "item_from_record",
    "items_from_text",
    "key_id",
    "leaks",
    "open_generation",
    "parse_key",
    "read_items",
    "read_key",
    "read_listing",
    "read_revealed",
    "reveal",
    "rotate",
    "seal",
    "seal_bytes",
    "sealed_tasks",
    "unseal",
    "unseal_to",
    "verify_holdouts",
    "write_key_file",
    "write_unsealed",
]
