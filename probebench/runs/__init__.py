"""What writes results: ``evaluate`` (one entry -> re-evaluate -> store), ``publish``
(pending entries on main) and ``reeval`` (every live entry, plan | run | merge)."""
