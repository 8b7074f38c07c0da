"""Flood fill on tile grids: region labels, connectivity, distance fields."""
