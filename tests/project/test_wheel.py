"""The built wheel carries the task catalog: installed into a fresh virtual environment,
``probebench tasks list`` and ``tasks verify`` work from an empty folder. The sdist holds
the package and its data and nothing else (no ``registry/``, tests or keys), and the
release workflow's check of both files accepts them and refuses tampered copies.

Offline: the wheel is built without build isolation and installed without its
dependencies; the fresh environment borrows the already-installed dependencies through
a ``.pth`` line (whose folder's own ``.pth`` files, such as the editable install of the
source tree, are not processed), so the probebench it imports is the wheel's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from tests.project.test_workflows import run_step

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist and the wheel, built as the release workflow builds them (``python -I -m
    build``: the wheel from the unpacked sdist), without build isolation (offline)."""
    tmp_path = tmp_path_factory.mktemp("dists")
    build = _run(sys.executable, "-I", "-m", "build", "--no-isolation", "--outdir",
                 tmp_path / "dist", REPO, cwd=tmp_path)
    assert build.returncode == 0, build.stdout + build.stderr
    (sdist,) = (tmp_path / "dist").glob("probebench-*.tar.gz")
    (wheel,) = (tmp_path / "dist").glob("probebench-*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, dists: tuple[Path, Path]) -> Path:
    """The python of a fresh venv holding the built wheel (its dependencies borrowed)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    wheel = dists[1]

    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=tmp_path).stdout.strip())
    install = _run(sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                   "--target", site, wheel, cwd=tmp_path)
    assert install.returncode == 0, install.stderr
    (site / "zz-borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_wheel_in_a_fresh_venv_lists_and_verifies_the_packaged_tasks(
        fresh: Path, tmp_path: Path) -> None:
    python = fresh
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROBEBENCH_")}
    env["PROBEBENCH_HOME"] = str(tmp_path / "home")
    where = _run(python, "-c", "import probebench; print(probebench.__file__)", cwd=empty,
                 env=env)
    assert where.returncode == 0, where.stderr
    assert not Path(where.stdout.strip()).is_relative_to(REPO), where.stdout  # the wheel's

    listed = _run(python, "-m", "probebench", "tasks", "list", cwd=empty, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "verb_grammar" in listed.stdout and "44 tasks" in listed.stdout
    assert "tasks: the packaged tasks (44)" in listed.stderr

    verified = _run(python, "-m", "probebench", "tasks", "verify", cwd=empty, env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "44 of 44 tasks match their registered hashes" in verified.stdout
    # the trust anchor of the published registry ships in the wheel
    keys = _run(python, "-c", "from probebench.registry.signing import trusted_keys; "
                "print(len(trusted_keys()))", cwd=empty, env=env)
    assert keys.returncode == 0 and keys.stdout.strip() == "1", keys.stderr
    assert list(empty.iterdir()) == []  # nothing written where it ran


def _sdist_files(sdist: Path) -> dict[str, bytes]:
    """The sdist's files, by their path below its top folder."""
    with tarfile.open(sdist) as tar:
        return {m.name.split("/", 1)[1]: tar.extractfile(m).read()  # type: ignore[union-attr]
                for m in tar.getmembers() if m.isfile()}


def test_the_sdist_holds_the_package_and_its_data_and_nothing_else(
        dists: tuple[Path, Path]) -> None:
    sdist, wheel = dists
    files = _sdist_files(sdist)
    # what pyproject.toml declares, found on disk here: every module and every data file
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = REPO / "probebench"
    declared = {p for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    for pattern in config["package-data"]["probebench"]:
        declared |= {p for p in package.glob(pattern) if p.is_file()}
    expected = {p.relative_to(REPO).as_posix() for p in declared}
    assert {"probebench/catalog/tasks.yaml", "probebench/registry/trusted_keys.json",
            "probebench/py.typed"} <= expected
    assert expected <= set(files), sorted(expected - set(files))[:10]
    assert files["probebench/registry/trusted_keys.json"] == (
        package / "registry" / "trusted_keys.json").read_bytes()
    # the wheel (built from this sdist) holds the same package files
    with zipfile.ZipFile(wheel) as whl:
        in_wheel = {n for n in whl.namelist() if n.startswith("probebench/")}
    assert in_wheel == {n for n in files if n.startswith("probebench/")}
    # nothing from outside the package: no registry/, tests, leaderboard, keys or secrets
    assert {n.split("/")[0] for n in files} <= {
        "probebench", "probebench.egg-info", "PKG-INFO", "README.md", "pyproject.toml",
        "setup.cfg", "LICENSE"}
    # the license text travels with both (PyPI and a redistributor read it there)
    assert files["LICENSE"] == (REPO / "LICENSE").read_bytes()
    text = files["LICENSE"].decode()
    assert "Apache License" in text and "Version 2.0" in text
    with zipfile.ZipFile(wheel) as whl:
        licenses = [n for n in whl.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert licenses and whl.read(licenses[0]) == files["LICENSE"]
    assert "License-Expression: Apache-2.0" in files["PKG-INFO"].decode()
    assert not [n for n in files if n.endswith((".key", ".pem")) or "secret" in n]
    metadata = files["PKG-INFO"].decode()
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert f"\nVersion: {version}\n" in metadata and sdist.name == f"probebench-{version}.tar.gz"


def _copy_zip(src: Path, dest: Path, drop: str, add: dict[str, str]) -> None:
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dest, "w") as new:
        for info in old.infolist():
            if info.filename != drop:
                new.writestr(info, old.read(info))
        for name, text in add.items():
            new.writestr(name, text)


def _copy_tar(src: Path, dest: Path, drop: str) -> None:
    with tarfile.open(src) as old, tarfile.open(dest, "w:gz") as new:
        for member in old.getmembers():
            if member.name.split("/", 1)[-1] != drop:
                new.addfile(member, old.extractfile(member) if member.isfile() else None)


def test_the_release_workflows_check_passes_these_files_and_refuses_tampered_ones(
        dists: tuple[Path, Path], tmp_path: Path) -> None:
    """The release workflow's "Check the distributions" step, run verbatim: twine check
    --strict and the contents check accept what was built, and name each fault of a wheel
    and an sdist that lost package data or gained tests and registry files."""
    sdist, wheel = dists
    step = "Check the distributions"
    good = tmp_path / "good"
    (good / "dist").mkdir(parents=True)
    shutil.copy(REPO / "pyproject.toml", good)
    for path in dists:
        shutil.copy(path, good / "dist")
    passed = run_step("release.yml", "build", step, good)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.count("PASSED") == 2 and f"{wheel.name}: " in passed.stdout

    bad = tmp_path / "bad"
    (bad / "dist").mkdir(parents=True)
    shutil.copy(REPO / "pyproject.toml", bad)
    _copy_zip(wheel, bad / "dist" / wheel.name, drop="probebench/registry/trusted_keys.json",
              add={"tests/test_x.py": "", "registry/probes/x.yaml": "id: x\n"})
    _copy_tar(sdist, bad / "dist" / sdist.name, drop="probebench/catalog/tasks.yaml")
    refused = run_step("release.yml", "build", step, bad)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.splitlines()[-5:] == [
        "wheel: probebench/registry/trusted_keys.json is missing",
        "wheel: tests/test_x.py must not be shipped",
        "wheel: registry/probes/x.yaml must not be shipped",
        "sdist: probebench/catalog/tasks.yaml is missing",
        "sdist: probebench/catalog/tasks.yaml is in the wheel but not in the sdist"]


@pytest.mark.slow
def test_a_pip_user_loads_and_submits_a_reference_probe_from_a_served_mirror(
        fresh: Path, tmp_path: Path) -> None:
    """From an empty folder, the wheel's probebench reads the registry from a leaderboard
    served on localhost: ``registry list``, ``load_probe(id, registry=URL)`` scoring
    texts, and ``submit`` of the downloaded artifact with the mirror's guard."""
    import functools
    import http.server
    import json
    import threading

    from probebench.leaderboard.build import build_leaderboard
    from probebench.tasks.catalog import TaskCatalog
    from tests.registry.conftest import PROBE, _small_registry
    from tests.registry_keys import KEYS_ENV, make_key

    board = tmp_path / "leaderboard"
    build_leaderboard(_small_registry(tmp_path / "src"), board, catalog=TaskCatalog.default(),
                      n_resamples=20)
    signer = make_key(tmp_path / "keys")  # the wheel trusts it through KEYS_ENV alone
    signer.sign(board)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(board))
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/registry.json"
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PROBEBENCH_") and k != "HF_HUB_OFFLINE"}
    env.update(PROBEBENCH_MIRROR_CACHE=str(tmp_path / "mirrors"),
               PROBEBENCH_ACTIVATION_CACHE=str(tmp_path / "acts"),
               **{KEYS_ENV: str(signer.public_pem)})
    try:
        listed = _run(fresh, "-m", "probebench", "registry", "list", "--registry", url,
                      cwd=empty, env=env)
        assert listed.returncode == 0, listed.stderr
        assert PROBE in listed.stdout and "2 live entries" in listed.stdout
        code = (f"import json, probebench; p = probebench.load_probe({PROBE!r}, "
                f"registry={url!r}); print(json.dumps({{'file': probebench.__file__, "
                "'folder': str(p.folder), 'scores': p.score_texts(['My sister bought those "
                "books.', 'My sister bought that books.']).tolist()}))")
        loaded = _run(fresh, "-c", code, cwd=empty, env=env)
        assert loaded.returncode == 0, loaded.stderr
        out = json.loads(loaded.stdout.strip().splitlines()[-1])
        assert not Path(out["file"]).is_relative_to(REPO)  # the wheel's, not the tree's
        assert out["scores"][0] > 0.5 > out["scores"][1]
        result = empty / "s.json"
        submitted = _run(fresh, "-m", "probebench", "submit", out["folder"], "--tasks",
                         "blimp_determiner_noun_agreement_1", "--limit", "10",
                         "--bootstrap", "50", "--registry", url, "--out", str(result),
                         "--report", str(empty / "r.md"), "--quiet", cwd=empty, env=env)
        assert submitted.returncode == 0, submitted.stderr
        corrected = json.loads(result.read_text())["tasks"][0]["evalaware_auroc"]
        assert not corrected["imputed"] and "eval-awareness-guard" in corrected["note"]
    finally:
        server.shutdown()
        server.server_close()
