"""How numbers are made: metric definitions, one task's evaluation, baselines,
selectivity, eval-awareness and multi-class scoring; ``submit`` orchestrates them."""
