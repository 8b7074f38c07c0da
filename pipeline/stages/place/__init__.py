"""Placement: spawn and exit points, rooms and items as map objects."""
