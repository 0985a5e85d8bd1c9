"""BLiMP minimal pairs (Warstadt et al., TACL 2020): the format, and fresh pairs of three
paradigms."""

from probebench.tasks.families.blimp.format import BlimpFormat

__all__ = ["BlimpFormat"]
