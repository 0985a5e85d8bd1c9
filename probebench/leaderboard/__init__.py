"""The leaderboard: ProbeScore specs and axes, rank intervals and the static website."""
