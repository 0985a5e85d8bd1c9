"""Sealed holdouts: sealed, committed, rotated and revealed (probebench.tasks.sealed and
``probebench holdout``). Every test works on a trimmed copy of the packaged catalog in
tmp_path with a throwaway key; the repository's catalog is never written."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
import yaml

from probebench.cli import build_parser, main
from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog, packaged_tasks_file
from probebench.tasks.holdout_listing import HEADER, listing_text
from probebench.tasks.hygiene import canonical_test_text
from probebench.tasks.sealed import (
    FORM_ONLY,
    KEY_ENV,
    LISTING_FILE,
    HoldoutAuthenticationError,
    HoldoutFormError,
    HoldoutKeyInvalidError,
    HoldoutKeyMissingError,
    HoldoutStateError,
    HoldoutWrongKeyError,
    canonical_plaintext,
    commitment_of,
    current_generation,
    key_id,
    read_items,
    read_key,
    read_listing,
    read_revealed,
    reveal,
    rotate,
    seal,
    seal_bytes,
    unseal,
    verify_holdouts,
    write_key_file,
)

TASK, OTHER = "blimp_passive_1", "syntaxgym_cleft"


@pytest.fixture(autouse=True)
def _no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


@pytest.fixture
def catalog(tmp_path: Path) -> TaskCatalog:
    """A copy of the packaged catalog trimmed to two tasks (and only their files)."""
    root = tmp_path / "catalog"
    packaged = packaged_tasks_file()
    data = yaml.safe_load(packaged.read_text("utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] in (TASK, OTHER)]
    for task in data["tasks"]:
        for rel in task["files_sha256"]:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(packaged.parent / rel, root / rel)
    (root / "tasks.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    return TaskCatalog.from_file(root / "tasks.yaml")


def fixture_items(tag: str, n: int = 6) -> list[Item]:
    """Items no task file holds: blimp-like minimal pairs with made-up words."""
    return [Item(f"{tag}-{i:03d}",
                 (Prompt(f"The zorblat {tag} number {i} was glimfed by the quaxel.", label=1,
                         slices={"field": "syntax"}),
                  Prompt(f"The zorblat {tag} number {i} was glimfed the by quaxel.", label=0,
                         slices={"field": "syntax"})),
                 slices={"UID": "passive_1"}, data={"pair": i})
            for i in range(n)]


def texts(items: list[Item]) -> list[str]:
    return [p.text for item in items for p in item.prompts]


def write_items(path: Path, items: list[Item]) -> Path:
    path.write_text("\n".join(json.dumps(i.record()) for i in items) + "\n", "utf-8")
    return path


def new_key(tmp_path: Path, name: str = "holdout.key") -> tuple[Path, bytes]:
    path = tmp_path / "keys" / name
    write_key_file(path)
    key = read_key(path)
    assert key is not None
    return path, key


def cli(catalog: TaskCatalog, *argv: str) -> int:
    return main(["holdout", *argv, "--tasks-file", str(catalog.path)])


def test_round_trip_with_a_throwaway_key(catalog: TaskCatalog, tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    items = fixture_items("rt")
    gen = seal(catalog, TASK, items, key)
    assert (gen.generation, gen.status, gen.n_items, gen.key_id) == (1, "current", 6,
                                                                   key_id(key))
    listed = read_listing(catalog.path).of(TASK).generations
    assert listed == [gen]
    sealed = catalog.root / gen.sealed_file
    assert sealed.is_file() and len(sealed.read_bytes()) == gen.sealed_bytes
    opened = unseal(catalog, TASK, key)
    assert opened.plaintext == canonical_test_text(items).encode()
    assert [i.record() for i in opened.items] == [i.record() for i in items]
    assert commitment_of(opened.plaintext, bytes.fromhex(opened.commitment_nonce)) == \
        gen.commitment
    checks = verify_holdouts(catalog, key=key)
    assert [(c.task, c.generation, c.ok, c.level) for c in checks] == \
        [(TASK, 1, True, "authentic")]


def test_a_wrong_key_is_named(catalog: TaskCatalog, tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    _, other = new_key(tmp_path, "other.key")
    seal(catalog, TASK, fixture_items("wk"), key)
    with pytest.raises(HoldoutWrongKeyError, match="not the one that sealed it"):
        unseal(catalog, TASK, other)
    (check,) = verify_holdouts(catalog, key=other)
    assert check.ok and check.level == "form" and "another key" in check.message


def _edit_listing(root: Path, **fields: object) -> None:
    path = root / LISTING_FILE
    data = yaml.safe_load(path.read_text("utf-8"))
    data["sealed_holdouts"][fields.pop("task", TASK)]["generations"][
        int(str(fields.pop("index", 0)))].update(fields)
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")


def _sealed_fields(path: Path) -> dict[str, object]:
    obj: dict[str, object] = json.loads(path.read_text("ascii"))
    return obj


def test_a_tampered_ciphertext_byte_is_refused(catalog: TaskCatalog, tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    gen = seal(catalog, TASK, fixture_items("tc"), key)
    path = catalog.root / gen.sealed_file
    obj = _sealed_fields(path)
    cipher = bytearray(base64.b64decode(str(obj["ciphertext"])))
    cipher[len(cipher) // 2] ^= 0x01
    obj["ciphertext"] = base64.b64encode(bytes(cipher)).decode()
    tampered = (json.dumps(obj) + "\n").encode()
    path.write_bytes(tampered)
    # the listed hash catches it first, without the key
    with pytest.raises(HoldoutFormError, match="changed since it was listed"):
        unseal(catalog, TASK, key)
    (check,) = verify_holdouts(catalog)
    assert not check.ok and "changed since it was listed" in check.message
    # one who edits the listing too is stopped by the cipher's tag
    from probebench.hashing import sha256_bytes

    _edit_listing(catalog.root, sealed_sha256=sha256_bytes(tampered),
                  sealed_bytes=len(tampered))
    with pytest.raises(HoldoutAuthenticationError, match="failed authentication") as caught:
        unseal(catalog, TASK, key)
    assert not isinstance(caught.value, HoldoutWrongKeyError)
    (form,) = verify_holdouts(catalog)  # form only: the tag needs the key
    assert form.ok and FORM_ONLY in form.message
    (full,) = verify_holdouts(catalog, key=key)
    assert not full.ok and "failed authentication" in full.message


def _swap(catalog: TaskCatalog, src: str, dest: str, task: str, index: int) -> None:
    from probebench.hashing import sha256_bytes

    data = (catalog.root / src).read_bytes()
    (catalog.root / dest).write_bytes(data)
    _edit_listing(catalog.root, task=task, index=index, sealed_sha256=sha256_bytes(data),
                  sealed_bytes=len(data))


def test_a_sealed_file_swapped_between_tasks_or_generations_is_refused(
        catalog: TaskCatalog, tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    first = seal(catalog, TASK, fixture_items("sa"), key)
    other = seal(catalog, OTHER, fixture_items("sb"), key)
    _, second = rotate(catalog, TASK, fixture_items("sc"), key)
    # another task's sealed file, listed (hash and all) as this task's
    _swap(catalog, other.sealed_file, first.sealed_file, TASK, 0)
    with pytest.raises(HoldoutAuthenticationError, match="sealed for another task"):
        unseal(catalog, TASK, key, generation=1)
    # generation 2's file in generation 1's place: same task, same key, still refused
    _swap(catalog, second.sealed_file, first.sealed_file, TASK, 0)
    with pytest.raises(HoldoutAuthenticationError, match="generation 2"):
        unseal(catalog, TASK, key, generation=1)
    assert unseal(catalog, TASK, key).generation == 2  # the untouched one opens
    bad = [c for c in verify_holdouts(catalog, key=key) if not c.ok]
    assert [(c.task, c.generation) for c in bad] == [(TASK, 1)]


def test_the_commitment_hides_the_plaintext(catalog: TaskCatalog) -> None:
    items = fixture_items("cm")
    key = os.urandom(32)
    plaintext = canonical_plaintext(items)
    one, two = seal_bytes(TASK, 1, items, key), seal_bytes(TASK, 1, items, key)
    assert one[1] != two[1]  # a new commitment nonce each time
    assert one[0] != two[0]  # and a new cipher nonce
    from probebench.hashing import sha256_bytes

    assert sha256_bytes(plaintext) not in (one[1], two[1])  # not matchable by guessing
    nonce = bytes(32)
    assert commitment_of(plaintext, nonce) == sha256_bytes(nonce + plaintext)
    assert commitment_of(plaintext, nonce) != commitment_of(plaintext, b"\x01" * 32)


def test_a_revealed_generation_verifies_and_one_changed_byte_fails(
        catalog: TaskCatalog, tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    items = fixture_items("rv")
    first = seal(catalog, TASK, items, key)
    with pytest.raises(HoldoutStateError, match="only a retired generation is revealed"):
        reveal(catalog, TASK, 1, key)  # the current one: never
    retired, _ = rotate(catalog, TASK, fixture_items("rw"), key)
    assert retired.status == "retired" and retired.retired_at is not None
    shown = reveal(catalog, TASK, 1, key)
    assert shown.status == "revealed" and shown.commitment == first.commitment
    assert shown.revealed_file == f"holdouts/{TASK}/gen-1.revealed.jsonl"
    revealed = catalog.root / shown.revealed_file
    assert revealed.read_bytes() == canonical_plaintext(items)
    with pytest.raises(HoldoutStateError, match="is revealed"):
        reveal(catalog, TASK, 1, key)
    # anyone, without the key
    checks = {c.generation: c for c in verify_holdouts(catalog)}
    assert checks[1].ok and checks[1].level == "revealed"
    assert checks[2].ok and checks[2].level == "form"
    assert [i.record() for i in read_revealed(catalog.root, TASK, shown).items] == \
        [i.record() for i in items]
    data = bytearray(revealed.read_bytes())
    data[data.index(b"zorblat")] = ord("Z")  # one byte
    revealed.write_bytes(bytes(data))
    checks = {c.generation: c for c in verify_holdouts(catalog)}
    assert not checks[1].ok and "does not match the commitment" in checks[1].message
    assert checks[2].ok
    with pytest.raises(HoldoutAuthenticationError):
        read_revealed(catalog.root, TASK, shown)
    assert cli(catalog, "verify") == 1


def test_the_lifecycle_refusals(catalog: TaskCatalog, tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    with pytest.raises(HoldoutStateError, match="no current sealed generation"):
        rotate(catalog, TASK, fixture_items("lr"), key)
    seal(catalog, TASK, fixture_items("la"), key)
    with pytest.raises(HoldoutStateError, match="holdout rotate"):
        seal(catalog, TASK, fixture_items("lb"), key)
    # an item repeating an earlier generation, or the task's own test set
    with pytest.raises(InputError, match="sealed generation 1"):
        rotate(catalog, TASK, fixture_items("la"), key)
    test_item = catalog.load(TASK).test[0]
    with pytest.raises(InputError, match="test split"):
        rotate(catalog, TASK, [*fixture_items("lc"), test_item], key)
    with pytest.raises(HoldoutStateError, match="no generation 7"):
        reveal(catalog, TASK, 7, key)
    with pytest.raises(InputError, match="unknown task"):
        seal(catalog, "no_such_task", fixture_items("ld"), key)
    assert [g.generation for g in read_listing(catalog.path).of(TASK).generations] == [1]


def test_a_failed_listing_write_leaves_no_sealed_file(
        catalog: TaskCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import probebench.tasks.sealed as sealed

    _, key = new_key(tmp_path)

    def fail(root: Path, listing: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(sealed, "write_listing", fail)
    with pytest.raises(OSError, match="disk full"):
        seal(catalog, TASK, fixture_items("fw"), key)
    assert not (catalog.root / LISTING_FILE).exists()
    assert list((catalog.root / "holdouts").rglob("*")) == [catalog.root / "holdouts" / TASK]


def test_without_a_key_unseal_is_refused_and_verify_checks_form_only(
        catalog: TaskCatalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key_file, _ = new_key(tmp_path)
    items_file = write_items(tmp_path / "items.jsonl", fixture_items("nk"))
    assert cli(catalog, "seal", TASK, "--from", str(items_file), "--key", str(key_file)) == 0
    capsys.readouterr()
    with pytest.raises(HoldoutKeyMissingError, match=KEY_ENV):
        read_key(None, environ={})
    assert cli(catalog, "unseal", TASK, "--out", str(tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert "needs the holdout key" in err and "--key FILE" in err and KEY_ENV in err
    assert not (tmp_path / "out").exists()
    assert cli(catalog, "verify") == 0
    out = capsys.readouterr().out
    assert "form only: authenticity needs the key" in out and "1 of 1 checks pass" in out
    assert cli(catalog, "verify", "--key", str(key_file)) == 0
    out = capsys.readouterr().out
    assert "opened with the key" in out and "form only" not in out


def test_the_key_from_the_environment_works(catalog: TaskCatalog, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    key_file, key = new_key(tmp_path)
    items = fixture_items("ev")
    monkeypatch.setenv(KEY_ENV, key_file.read_text())
    assert cli(catalog, "seal", TASK, "--from", str(write_items(tmp_path / "i.jsonl",
                                                                items))) == 0
    assert cli(catalog, "unseal", TASK, "--out", str(tmp_path / "plain")) == 0
    written = tmp_path / "plain" / TASK / "gen-1.jsonl"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert [i.record() for i in read_items(written)] == [i.record() for i in items]
    out = capsys.readouterr().out
    assert not any(t in out for t in texts(items))  # never printed
    # base64 text is read too; a malformed key is named without being shown
    monkeypatch.setenv(KEY_ENV, base64.b64encode(key).decode())
    assert read_key(None) == key
    monkeypatch.setenv(KEY_ENV, "not-a-key-0123")
    with pytest.raises(HoldoutKeyInvalidError) as caught:
        read_key(None)
    assert "not-a-key" not in str(caught.value)


def test_no_default_key_path_is_read(catalog: TaskCatalog, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    key_file, key = new_key(tmp_path)
    items_file = write_items(tmp_path / "items.jsonl", fixture_items("dp"))
    assert cli(catalog, "seal", TASK, "--from", str(items_file), "--key", str(key_file)) == 0
    home, work = tmp_path / "home", tmp_path / "work"
    text = key_file.read_text()
    for rel in (".probebench/holdout.key", ".config/probebench/holdout.key",
                ".cache/probebench/holdout.key", ".holdout.key", "holdout.key",
                ".config/probebench/key", "secrets/holdout.key"):
        for base in (home, work, catalog.root):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text)
    (work / "shared" / "secrets").mkdir(parents=True)
    (work / "shared" / "secrets" / "holdout.key").write_text(text)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PROBEBENCH_HOME", str(home / ".cache" / "probebench"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.chdir(work)
    with pytest.raises(HoldoutKeyMissingError):
        read_key(None)
    capsys.readouterr()
    assert cli(catalog, "unseal", TASK, "--out", str(tmp_path / "out")) == 2
    assert "needs the holdout key" in capsys.readouterr().err
    assert cli(catalog, "verify") == 0
    assert "form only" in capsys.readouterr().out
    assert read_key(key_file) == key  # the same key works when given


def test_keygen_writes_a_private_key_and_never_overwrites(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "k" / "holdout.key"
    assert main(["holdout", "keygen", "--out", str(path)]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    key = read_key(path)
    assert key is not None and len(key) == 32 and text.strip() == key.hex()
    out = capsys.readouterr().out
    assert key_id(key) in out and key.hex() not in out
    assert main(["holdout", "keygen", "--out", str(path)]) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert path.read_text() == text
    assert [p.name for p in path.parent.iterdir()] == ["holdout.key"]  # no stray tmp


def test_unseal_refuses_the_catalog_folder(catalog: TaskCatalog, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    key_file, key = new_key(tmp_path)
    seal(catalog, TASK, fixture_items("uc"), key)
    assert cli(catalog, "unseal", "--all", "--key", str(key_file), "--out",
               str(catalog.root / "plain")) == 2
    assert "inside the task catalog" in capsys.readouterr().err
    assert not (catalog.root / "plain").exists()
    assert cli(catalog, "unseal", "--all", "--key", str(key_file), "--out",
               str(tmp_path / "plain")) == 0
    assert (tmp_path / "plain" / TASK / "gen-1.jsonl").is_file()


def test_verify_names_files_no_generation_lists(catalog: TaskCatalog, tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    seal(catalog, TASK, fixture_items("st"), key)
    stray = catalog.root / "holdouts" / TASK / "gen-9.sealed"
    stray.write_text("{}")
    bad = [c for c in verify_holdouts(catalog) if not c.ok]
    assert len(bad) == 1 and "gen-9.sealed: no generation" in bad[0].message


def test_every_holdout_action_teaches_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    expected = {"keygen": "0600", "seal": "rotate", "verify": "form only",
                "unseal": "--out", "rotate": "Retire", "reveal": "retired"}
    for action, phrase in expected.items():
        with pytest.raises(SystemExit) as done:
            parser.parse_args(["holdout", action, "--help"])
        assert done.value.code == 0
        text = capsys.readouterr().out
        assert phrase in text, action
        if action != "keygen":
            assert "--key FILE" in text and KEY_ENV in text and "no default path" in text
    with pytest.raises(SystemExit):
        parser.parse_args(["holdout", "--help"])
    assert "lifecycle" in capsys.readouterr().out


def test_no_plaintext_leaks_into_the_catalog_or_the_sealed_file(
        catalog: TaskCatalog, tmp_path: Path) -> None:
    key_file, key = new_key(tmp_path)
    items = fixture_items("lk", n=12)
    items_file = write_items(tmp_path / "items.jsonl", items)
    assert cli(catalog, "seal", TASK, "--from", str(items_file), "--key", str(key_file)) == 0
    gen = read_listing(catalog.path).of(TASK).generations[0]
    sealed = (catalog.root / gen.sealed_file).read_bytes()
    hidden = [*texts(items), *(i.id for i in items), "zorblat", "glimfed", key.hex()]
    files = [p for p in catalog.root.rglob("*") if p.is_file()]
    assert catalog.root / gen.sealed_file in files and catalog.path in files
    assert catalog.root / LISTING_FILE in files
    for path in files:
        data = path.read_bytes()
        found = [s for s in hidden if s.encode() in data]
        assert found == [], f"{path}: {found[:3]}"
    assert b"zorblat" not in base64.b64decode(json.loads(sealed)["ciphertext"])
    # what is public: the commitment, not the plaintext's plain hash
    from probebench.hashing import sha256_bytes

    listing_text = (catalog.root / LISTING_FILE).read_text()
    assert gen.commitment in listing_text
    assert sha256_bytes(canonical_plaintext(items)) not in listing_text


def test_seal_rotate_and_reveal_never_write_the_tasks_file(
        catalog: TaskCatalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The commands write holdouts.yaml beside tasks.yaml, the whole file under its
    machine-written header; tasks.yaml keeps every byte."""
    key_file, _ = new_key(tmp_path)
    catalog.path.write_text("# a maintainer's comment, kept as it is\n"
                            + catalog.path.read_text("utf-8"), "utf-8")
    before = catalog.path.read_bytes()
    listing = catalog.root / LISTING_FILE
    key = ["--key", str(key_file)]
    first = write_items(tmp_path / "first.jsonl", fixture_items("nw1"))
    second = write_items(tmp_path / "second.jsonl", fixture_items("nw2"))
    assert cli(catalog, "seal", TASK, "--from", str(first), *key) == 0
    assert catalog.path.read_bytes() == before
    assert f"commit the sealed file and {LISTING_FILE}" in capsys.readouterr().out
    assert cli(catalog, "rotate", TASK, "--from", str(second), *key) == 0
    assert catalog.path.read_bytes() == before
    assert cli(catalog, "reveal", TASK, "--generation", "1", *key) == 0
    assert catalog.path.read_bytes() == before
    text = listing.read_text("utf-8")
    assert text.startswith(HEADER) and "never by\n# hand" in text
    assert text == listing_text(read_listing(catalog.path))  # a whole-file dump
    listed = yaml.safe_load(text)
    assert listed["version"] == 1
    assert [g["status"] for g in listed["sealed_holdouts"][TASK]["generations"]] == \
        ["revealed", "current"]
    assert "sealed_holdouts" not in catalog.path.read_text("utf-8")
    assert [p.name for p in catalog.root.iterdir() if p.name.startswith(".")] == []


def test_a_sealed_holdouts_section_in_tasks_yaml_is_refused_with_where_it_went(
        catalog: TaskCatalog) -> None:
    data = yaml.safe_load(catalog.path.read_text("utf-8"))
    data["sealed_holdouts"] = {TASK: {"generations": []}}
    catalog.path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    with pytest.raises(InputError, match="sealed_holdouts") as caught:
        TaskCatalog.from_file(catalog.path)
    assert "holdouts.yaml beside the tasks file" in str(caught.value)


def test_a_listing_of_an_unregistered_task_fails_verify(catalog: TaskCatalog,
                                                        tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    seal(catalog, TASK, fixture_items("ur"), key)
    listing = catalog.root / LISTING_FILE
    data = yaml.safe_load(listing.read_text("utf-8"))
    data["sealed_holdouts"]["no_such_task"] = json.loads(json.dumps(
        data["sealed_holdouts"][TASK]))  # a copy: the same object would dump as an alias
    listing.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    bad = [c for c in verify_holdouts(catalog) if not c.ok]
    assert [(c.task, c.level) for c in bad] == [("no_such_task", "listing")]
    assert "which no tasks file of this folder registers" in bad[0].message
    listing.write_text("sealed_holdouts: {no_such_task: {generations: [{generation: x}]}}\n")
    with pytest.raises(HoldoutFormError, match="written by `probebench holdout`"):
        read_listing(catalog.path)
    (check,) = verify_holdouts(catalog)
    assert not check.ok and check.level == "listing"


def test_the_listing_is_reread_when_its_bytes_change(catalog: TaskCatalog,
                                                     tmp_path: Path) -> None:
    _, key = new_key(tmp_path)
    gen = seal(catalog, TASK, fixture_items("rr"), key)
    listed = read_listing(catalog.path)
    listed.sealed_holdouts.clear()  # a caller's edit stays its own
    assert read_listing(catalog.path).of(TASK).generations == [gen]
    listing = catalog.root / LISTING_FILE
    # an edit in place, of the same size, within the clock's tick: still seen
    text = listing.read_text("utf-8")
    listing.write_text(text.replace(gen.commitment, "ab" * 32), "utf-8")
    assert read_listing(catalog.path).of(TASK).generations[0].commitment == "ab" * 32
    listing.unlink()
    assert read_listing(catalog.path).sealed_holdouts == {}


def test_an_included_tasks_file_has_its_own_listing(catalog: TaskCatalog,
                                                    tmp_path: Path) -> None:
    """A task of a tasks file given with --include (catalog.including) is listed in
    holdouts.yaml beside that file; the catalog's own listing is not written."""
    _, key = new_key(tmp_path)
    mine = tmp_path / "mine"
    data = yaml.safe_load(catalog.path.read_text("utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] == OTHER]
    for rel in data["tasks"][0]["files_sha256"]:
        (mine / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(catalog.root / rel, mine / rel)
    (mine / "own.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    data = yaml.safe_load(catalog.path.read_text("utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] == TASK]
    catalog.path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    both = TaskCatalog.from_file(catalog.path).including([mine / "own.yaml"])
    gen = seal(both, OTHER, fixture_items("in"), key)
    assert (mine / LISTING_FILE).is_file() and (mine / gen.sealed_file).is_file()
    assert not (catalog.root / LISTING_FILE).exists()
    assert read_listing(mine / "own.yaml").of(OTHER).generations == [gen]
    seal(both, TASK, fixture_items("own"), key)
    checks = verify_holdouts(both, key=key)
    assert sorted((c.task, c.ok, c.level) for c in checks) == [
        (TASK, True, "authentic"), (OTHER, True, "authentic")]


def test_the_items_and_the_key_are_named_by_what_the_commands_take(
        catalog: TaskCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``seal`` takes Items or a JSONL file, and the key's bytes, a key file or the
    variable: what `holdout seal --from ITEMS --key FILE` passes it."""
    key_file, key = new_key(tmp_path)
    items = fixture_items("ik")
    by_file = seal(catalog, TASK, write_items(tmp_path / "items.jsonl", items), key_file)
    assert [i.record() for i in unseal(catalog, TASK, key).items] == \
        [i.record() for i in items]
    assert by_file.key_id == key_id(key)
    monkeypatch.setenv(KEY_ENV, key.hex())
    assert unseal(catalog, TASK).generation == 1
    with pytest.raises(InputError, match="only fresh items"):
        seal(catalog, OTHER, fixture_items("n"), key, n_items=3)
    with pytest.raises(InputError, match="'fresh' for the task's fresh-item generator"):
        seal(catalog, OTHER, "items.jsonl", key)  # type: ignore[arg-type]
    with pytest.raises(HoldoutKeyInvalidError, match="32 bytes"):
        seal(catalog, OTHER, fixture_items("s"), key[:16])
    assert current_generation(catalog, OTHER) is None


def test_keygen_inside_a_git_checkout_warns(tmp_path: Path,
                                            caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    with caplog.at_level("WARNING"):
        write_key_file(tmp_path / "repo" / "keys" / "holdout.key")
    assert "inside the git checkout" in caplog.text and "never commit it" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        write_key_file(tmp_path / "elsewhere" / "holdout.key")
    assert caplog.text == ""


def test_the_task_page_lists_every_generation_and_a_revealed_ones_scores(
        catalog: TaskCatalog, tmp_path: Path) -> None:
    """Generation 0 (public), a revealed generation with the scores stored on it and its
    verify command, and the current one, with commitments, dates and detectable drops."""
    import numpy as np

    from probebench.evaluation.results import HoldoutOut, IntervalOut
    from probebench.leaderboard.holdouts import task_holdouts
    from probebench.registry.store import ResultHistory, result_path
    from tests.registry_fixture import synthetic_record, synthetic_result

    _, key = new_key(tmp_path)
    first = seal(catalog, TASK, fixture_items("p1", n=60), key)
    rotate(catalog, TASK, fixture_items("p2", n=60), key)
    reveal(catalog, TASK, 1, key)
    registry = tmp_path / "registry"
    auroc = IntervalOut(value=0.81, ci_low=0.74, ci_high=0.88, resamples=100, dropped=0)
    held = HoldoutOut(generation=1, commitment=first.commitment, n_items=60,
                      n_labelled_prompts=120, auroc=auroc, test_auroc=0.85, retention=0.886,
                      minimum_detectable_drop=12.4)
    record = synthetic_record(synthetic_result(TASK, 0.3, np.random.default_rng(0)))
    path = result_path(registry, "org/p-m-l1-v1", TASK)
    path.parent.mkdir(parents=True)
    path.write_text(ResultHistory(entry="org/p-m-l1-v1", task=TASK, history=[
        record.model_copy(update={"holdout": held})]).to_json())
    view = task_holdouts(catalog, TASK, registry, ["org/p-m-l1-v1"])
    rows = {g.number: g for g in view.generations}
    assert sorted(rows) == [0, 1, 2]
    assert rows[0].status == "revealed (public)" and rows[0].commitment is None
    assert rows[1].status == "revealed" and rows[1].commitment == first.commitment
    assert rows[1].verify == f"probebench holdout verify {TASK}"
    assert rows[1].scores == [("org/p-m-l1-v1", 0.81, 0.74, 0.88)]
    assert rows[2].status == "current" and rows[2].verify is None and rows[2].scores == []
    assert rows[2].drop is not None and rows[2].drop > 10  # 60 pairs: over the target
    assert "sealed generation 2" in view.note
    # a task with no sealed generation says it keeps the public one
    other = task_holdouts(catalog, OTHER, registry, [])
    assert [g.number for g in other.generations] == [0]
    assert "No sealed generation yet" in other.note
