"""Post-processing of mazes: braid, prune dead ends, cut walls."""
