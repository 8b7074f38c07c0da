"""Tiled's files read back: a map (TMX, or Tiled JSON TMJ) and its tilesets (TSX, TSJ) into one
form, `model.TiledMap`, whatever format they were written in.

The formats differ only in `tmx` and `tmj`; `files` picks the format and reads external
tilesets; what a map becomes (a Level, a picture) is its reader's business. Every file is read
through the caller's function, which decides where files may come from and records what it read.
"""
