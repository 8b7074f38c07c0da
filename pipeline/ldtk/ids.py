"""LDtk's identifiers, uids and iids, derived from names so that every map's level file agrees
with the project without the workers that write them talking to each other."""

from __future__ import annotations

import hashlib
import re
import uuid

# Fixed uids of what every project has; levels count up from LEVEL_UID_BASE by map index; the
# definitions named by the maps' content (entities, fields) hash into [HASHED_BASE, 2**30), far
# above both, and below 2**31 (LDtk's uids are 32-bit ints, and its nextUid counts on from ours).
TILESET_UID = 1
ENTITIES_LAYER_UID = 2
SYMBOLS_LAYER_UID = 3
TILE_LAYER_UID_BASE = 10  # + the layer's position in the exporter's `layers`
# Hand-drawn art (pipeline.drawn_art): a tileset and a Tiles layer per tileset it may use, + its
# position among the exporter's art tilesets.
ART_TILESET_UID_BASE = 500
ART_LAYER_UID_BASE = 700
LEVEL_UID_BASE = 1000
HASHED_BASE = 1 << 24
HASHED_END = 1 << 30

# Every iid is a name-based UUID (RFC 4122 version 5) in this namespace: the same pack, seed and
# map give the same iids on every build, where LDtk itself would draw random ones.
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://ldtk.io/#pcg-pipeline")

_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")


def hashed_uid(*parts: str) -> int:
    """A uid for the definition named by `parts` (an entity's identifier, or it and a field's)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return HASHED_BASE + int.from_bytes(digest, "big") % (HASHED_END - HASHED_BASE)


def iid(*parts: str | int) -> str:
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(str(p) for p in parts)))


def level_iid(pack: str, project: str, stem: str) -> str:
    """A map's level, which another map's entity reference names (stairs to the next floor): so
    of its name alone, which every map of the pack knows, not of its seed."""
    return iid(pack, project, "level", stem)


def entity_iids(level: str, names: list[str]) -> list[str]:
    """The iids of a level's entities, by their objects' names: of the name alone where no other
    object of the map has it (another map's reference finds it so), else of its position too."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [iid(level, "entity", name) if counts[name] == 1 else iid(level, "entity", name, k) for k, name in enumerate(names)]


def world_iid(pack: str, project: str) -> str:
    """The project's one world (`dummyWorldIid`), which an entity reference names. Not of the
    pack's seed: a map pinned to its own seed keeps its files when the pack's changes."""
    return iid(pack, project, "world")


def identifier(name: str) -> str:
    """`name` as an LDtk identifier (letters, digits and `_`, not starting with a digit), which
    LDtk's importers turn into class and field names."""
    ident = _NOT_IDENTIFIER.sub("_", name) or "_"
    return "_" + ident if ident[0].isdigit() else ident
