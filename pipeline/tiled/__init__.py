"""Tiled's formats: writers for TMX/TSX (pytmx and pytiled-parser only read them), and
`read`, the one reader of the maps and tilesets Tiled (or we) wrote, in XML or JSON.

We write the 1.8 format that Tiled 1.8 and every later version read, attribute for attribute as
Tiled itself writes it, so the files diff cleanly against a map re-saved in Tiled.
"""

FORMAT_VERSION = "1.8"
TILED_VERSION = "1.8.2"
