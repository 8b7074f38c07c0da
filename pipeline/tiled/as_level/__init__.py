"""A map drawn in Tiled made a Level: its tiles as symbols, its objects in tiles, its art kept.
What load.tmx, place.prefabs and the level graph's room templates read a map as."""
