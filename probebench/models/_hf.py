"""Quiet calls into transformers: no progress bars or warnings of its own in our output."""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_transformers(*, progress: bool = False) -> Iterator[None]:
    import transformers

    hf_logging = transformers.utils.logging
    if not progress:
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    logger = logging.getLogger("transformers")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)
        hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
