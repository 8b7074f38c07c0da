"""The one error of reading Tiled's files."""


class MapFileError(Exception):
    """A problem with a map file (or a tileset or image it uses)."""
