"""MarkovJunior's `wfc` node: wave function collapse, overlapping (from a sample image) or tiled
(from a tileset of `.vox` tiles), on a new grid of its own values."""
