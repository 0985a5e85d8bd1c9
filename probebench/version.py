"""The installed probebench version (``0+unknown`` in a source tree never installed)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("probebench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
