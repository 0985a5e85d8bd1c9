"""``probebench models prepare``: transformers' own progress bars and warnings stay out
of probebench's output unless ``--verbose`` asks for them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from probebench.cli import main

#: run in a fresh interpreter: stderr, transformers' log handler and the warnings filters
#: are process-wide, and other tests in a worker process leave them in other states
SCRIPT = r"""
import logging, sys, warnings
from tqdm.auto import tqdm
from transformers.utils import logging as hf_logging
from probebench.models._hf import quiet_transformers

def noise():
    # what transformers prints while it converts and loads a model: a raw tqdm bar (the
    # GGUF converter's), a bar through its own switch, a log line and a warning
    for _ in tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."):
        pass
    for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
        pass
    logging.getLogger("transformers.modeling_utils").warning("Some weights were not used")
    warnings.warn("a deprecated argument", FutureWarning, stacklevel=1)

logger = logging.getLogger("transformers")
level = logger.level
assert hf_logging.is_progress_bar_enabled()
sys.stderr.write("<<quiet>>\n")
with quiet_transformers():
    noise()
sys.stderr.write("<<verbose>>\n")
assert hf_logging.is_progress_bar_enabled() and logger.level == level
with quiet_transformers(verbose=True):
    noise()
sys.stderr.write("<<end>>\n")
# the bars' switch is left as it was found, off included
hf_logging.disable_progress_bar()
with quiet_transformers():
    pass
assert not hf_logging.is_progress_bar_enabled()
print("ok")
"""


def test_quiet_transformers_silences_them_and_restores_everything() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONWARNINGS": "default"})
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
    quiet = done.stderr.split("<<quiet>>\n")[1].split("<<verbose>>\n")[0]
    assert quiet == ""
    loud = done.stderr.split("<<verbose>>\n")[1].split("<<end>>\n")[0]
    assert "Converting and de-quantizing GGUF tensors..." in loud
    assert "Loading weights" in loud and "Some weights were not used" in loud
    assert "FutureWarning: a deprecated argument" in loud


@pytest.mark.slow  # converts the embedded GGUF model from scratch (~25 s on two cores)
def test_models_prepare_shows_its_own_line_only(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROBEBENCH_HOME", str(tmp_path))  # nothing converted yet
    assert main(["models", "prepare", "smollm2-135m"]) == 0
    captured = capfd.readouterr()
    assert "probebench: converting smollm2-135m" in captured.err
    assert "Converting and de-quantizing" not in captured.err
    assert "Loading weights" not in captured.err and "%|" not in captured.err
    assert "smollm2-135m: ready in" in captured.out
    assert str(tmp_path / "models") in captured.out
    # converted once: the second run says nothing about converting
    assert main(["models", "prepare", "smollm2-135m"]) == 0
    assert "converting" not in capfd.readouterr().err
