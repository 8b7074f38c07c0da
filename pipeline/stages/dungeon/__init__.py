"""Dungeon, cave and blob-map generators (rooms, open areas), as tile grids."""
