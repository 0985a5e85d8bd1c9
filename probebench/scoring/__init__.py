"""ProbeScore: versioned scoring specs, axis values, the 30% cap and rank intervals."""
