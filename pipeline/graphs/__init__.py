"""Level graphs and their layouts: the graph model and its readers (Edgar's YAML, our TOML),
room templates and their configuration spaces, the layout search, keys and locks with their
proof, random graphs, and the check a laid-out map must pass. `stages/layout/graph.py` is the
stage that puts them together."""
