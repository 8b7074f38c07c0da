"""A pack's Tiled project (`NAME.tiled-project`): a class for every object type its maps hold, with
a typed member for every property those objects carry, and the enums some members hold
(`pipeline.tiled.custom_types`). Tiled shows an object's class members as typed fields, YATI
(Godot) reads the classes into metadata, and the project opens the pack's maps folder.

Tiled 1.8 takes object types only from an object types file that a project names, and ignores a
class's `useAs`; 1.9 made classes the object types, and imports such a file into them. So the
project names one (`NAME.objecttypes.json`) holding the same classes, and both Tiled lines agree.

Made once the maps are, from the objects their files hold, as the LDtk project is: a plugin
stage's objects get classes as ours do, and nothing here knows which stage makes what. The
project records what it was made of (`pcg_sources`, a project property) to be left alone when
no map changed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Iterable

from pipeline.errors import PipelineError
from pipeline.level import ObjectRef, PropertyValue
from pipeline.tiled.custom_types import ENUMS, enum_members
from pipeline.tiled.markers import colour
from pipeline.tiled.properties import enum_of, property_type
from pipeline.tiled.read.model import TiledObject

PROJECT_SUFFIX = ".tiled-project"
OBJECT_TYPES_SUFFIX = ".objecttypes.json"
SESSION_SUFFIX = ".tiled-session"  # Tiled's, beside a project it opened
# Bump when the project made from the same maps changes in a way the sources below do not show.
PROJECT_FORMAT = 1
SOURCES = "pcg_sources"  # project properties: what it was made of,
OBJECT_TYPES = "pcg_object_types"  # and the sha256 of the object types file written with it

# A member's value when an object leaves the property out: Tiled's own empty values.
_EMPTY: dict[str, Any] = {"bool": False, "color": "", "file": "", "float": 0, "int": 0, "object": 0, "string": ""}


def sources_key(name: str, maps: list[tuple[str, str]]) -> str:
    """What a project depends on: its name, the (path, sha256) of the maps it is made of, and the
    code that makes it from them (a release with another role word or colour makes it again,
    though no map changed)."""
    text = json.dumps([PROJECT_FORMAT, _maker(), name, maps], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.cache
def _maker() -> str:
    """The sha256 of the code that makes a project from maps: this module, the enums and their
    words, and the classes' colours (the previews' marker colours)."""
    from pipeline.tiled import custom_types, markers

    digest = hashlib.sha256()
    for module in (sys.modules[__name__], custom_types, markers):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


def is_current(project: Path, object_types: Path, key: str) -> bool:
    """Whether the project was made from exactly these maps, and the object types file beside it
    is the one written with it (the project says both)."""
    try:
        doc = json.loads(project.read_bytes())
        said = {p.get("name"): p.get("value") for p in doc.get("properties", []) if isinstance(p, dict)}
        written = hashlib.sha256(object_types.read_bytes()).hexdigest()
    except (OSError, ValueError, AttributeError):
        return False
    return said.get(SOURCES) == key and said.get(OBJECT_TYPES) == written


def property_kind(value: PropertyValue) -> str:
    """The Tiled type of a property as read back from a map file."""
    if isinstance(value, ObjectRef):  # what the reader makes of an object property
        return "object"
    return property_type(value) or "string"


def _merged(kinds: set[str]) -> str:
    """One type for a member the maps give several: numbers as float, anything else as string
    (a map's own property keeps its own type in Tiled either way)."""
    if len(kinds) == 1:
        return next(iter(kinds))
    return "float" if kinds <= {"int", "float"} else "string"


def project_files(name: str, objects: Iterable[TiledObject], key: str) -> dict[str, bytes]:
    """The project file and its object types file (by suffix: PROJECT_SUFFIX, OBJECT_TYPES_SUFFIX)
    for `objects` (every object of the pack's maps), recording `key`."""
    classes: dict[str, dict[str, set[str]]] = {}  # class -> member -> the types the maps give it
    words: dict[str, set[str]] = {enum.name: set() for enum in ENUMS}
    for obj in objects:
        if not obj.cls:
            continue  # no class to declare (Tiled: an object of no type)
        members = classes.setdefault(obj.cls, {})
        enums = enum_members(obj.cls)
        for prop, value in obj.properties.items():
            members.setdefault(prop, set()).add(property_kind(value))
            if enum := enum_of(prop, value, enums):
                words[enum].add(str(value))
    typed = {cls: _members(cls, kinds) for cls, kinds in classes.items()}
    # Every enum a map names (the maps write `propertytype` on each word), so none is unknown
    # to Tiled, whether or not a member of only words holds it.
    enum_types = [enum for enum in ENUMS if words[enum.name]]
    clash = sorted({e.name for e in enum_types} & set(classes))
    if clash:
        raise PipelineError([
            f"Tiled project {name}: objects of type {clash[0]!r} would have the name of the project's enum {clash[0]}:"
            ' rename their type, or write no project (project = "")'
        ])
    types: list[dict[str, Any]] = []
    for enum in enum_types:
        extra = sorted(words[enum.name] - set(enum.values) - {""})
        types.append({
            "id": len(types) + 1, "name": enum.name, "storageType": "string", "type": "enum",
            "values": ["", *enum.values, *extra], "valuesAsFlags": False,
        })
    object_types = []
    for cls in sorted(classes):
        argb = "#{3:02x}{0:02x}{1:02x}{2:02x}".format(*colour(cls))
        types.append({
            "color": argb, "drawFill": True, "id": len(types) + 1, "name": cls, "type": "class", "useAs": ["object"],
            "members": [{"name": m, "type": kind, "value": _EMPTY[kind], **({"propertyType": e} if e else {})} for m, kind, e in typed[cls]],
        })
        object_types.append({
            "color": argb, "name": cls,
            "properties": [{"name": m, "type": kind, "value": _EMPTY[kind], **({"propertytype": e} if e else {})} for m, kind, e in typed[cls]],
        })
    object_types_file = _json(object_types)
    project = {
        "automappingRulesFile": "",
        "commands": [],
        "extensionsPath": "extensions",
        "folders": ["."],
        "objectTypesFile": f"{name}{OBJECT_TYPES_SUFFIX}",
        "properties": [
            {"name": OBJECT_TYPES, "type": "string", "value": hashlib.sha256(object_types_file).hexdigest()},
            {"name": SOURCES, "type": "string", "value": key},
        ],
        "propertyTypes": types,
    }
    # The object types file first: a build stopped between the two leaves a project that does
    # not say it is current.
    return {OBJECT_TYPES_SUFFIX: object_types_file, PROJECT_SUFFIX: _json(project)}


def _members(cls: str, kinds_of: dict[str, set[str]]) -> list[tuple[str, str, str | None]]:
    """(name, type, enum or None) of each member of a class, by name as Tiled keeps them."""
    enums = enum_members(cls)
    out = []
    for prop in sorted(kinds_of):
        kinds = kinds_of[prop]
        # An enum member only when every map holds words there: one that holds a number too
        # (a plugin's own `role`) is a plain member.
        out.append((prop, _merged(kinds), enums.get(prop) if kinds == {"string"} else None))
    return out


def _json(doc: Any) -> bytes:
    # As Tiled writes its JSON (Qt's): keys sorted, four-space indents.
    return (json.dumps(doc, indent=4, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
