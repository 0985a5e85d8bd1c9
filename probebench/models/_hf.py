"""Quiet calls into transformers: no progress bars or warnings of its own in our output.

transformers draws most of its bars through its own switch
(``transformers.utils.logging.disable_progress_bar``), but some code paths call tqdm
directly (the GGUF converter's "Converting and de-quantizing GGUF tensors..."), so the
quiet mode also sends whatever is written to ``sys.stderr`` inside it to a buffer.
probebench's own progress (its tqdm bars, its status lines) is drawn outside.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_transformers(*, verbose: bool = False) -> Iterator[None]:
    """Inside: transformers' progress bars, log lines below ERROR, Python warnings and
    anything else written to ``sys.stderr`` are silenced, unless ``verbose`` (then
    everything shows, as transformers would print it). Every setting is restored on
    the way out."""
    if verbose:
        yield
        return
    import transformers

    hf_logging = transformers.utils.logging
    # transformers binds its log handler to sys.stderr when it first configures its
    # logger: done here, outside the redirection below, or its warnings would go to the
    # discarded buffer for the rest of the process
    hf_logging.get_logger("transformers")
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    logger = logging.getLogger("transformers")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
