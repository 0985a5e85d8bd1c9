"""``probebench models prepare``: transformers' own progress bars and warnings stay out
of probebench's output unless ``--verbose`` asks for them."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path

import pytest

from probebench.cli import main
from probebench.models._hf import quiet_transformers


def _noise() -> None:
    """What transformers prints while it converts and loads a model: a raw tqdm bar (the
    GGUF converter's), a bar through its own switch, a log line and a warning."""
    from tqdm.auto import tqdm
    from transformers.utils import logging as hf_logging

    for _ in tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."):
        pass
    for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
        pass
    logging.getLogger("transformers.modeling_utils").warning("Some weights were not used")
    warnings.warn("a deprecated argument", FutureWarning, stacklevel=1)


def test_quiet_transformers_silences_them_and_restores_everything(
        capfd: pytest.CaptureFixture[str]) -> None:
    from transformers.utils import logging as hf_logging

    logger = logging.getLogger("transformers")
    level = logger.level
    # transformers' handler writes to the stderr of whichever test first configured it
    # (perhaps closed since): this test reads its own (not setStream: it flushes the old)
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.stream = sys.stderr
    assert hf_logging.is_progress_bar_enabled()
    with quiet_transformers():
        _noise()
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
    assert hf_logging.is_progress_bar_enabled() and logger.level == level
    with pytest.warns(FutureWarning), quiet_transformers(verbose=True):
        _noise()
    err = capfd.readouterr().err
    assert "Converting and de-quantizing GGUF tensors..." in err
    assert "Loading weights" in err and "Some weights were not used" in err
    # the bars' switch is left as it was found, off included
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        with quiet_transformers():
            pass
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


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
