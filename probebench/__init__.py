"""probebench: a registry and leaderboard for activation probes on language models.

The package is imported by the CLI before any command runs, so it must stay light:
heavy libraries (torch, transformers) are imported inside the functions that use them.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("probebench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
