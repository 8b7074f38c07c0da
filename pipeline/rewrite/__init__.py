"""The rewrite-rule engine: MarkovJunior's language of pattern rules, run incrementally in numba."""
