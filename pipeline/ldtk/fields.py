"""Properties as LDtk fields: a map's properties become level fields, an object's its entity's
fields, each with the LDtk type of its value (Int, Float, Bool, String, Color)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.errors import PipelineError
from pipeline.ldtk.ids import identifier
from pipeline.level import Color, FilePath, PropertyValue
from pipeline.tiled.properties import INT32

POINTS = "Array<Point>"

# An instance's `__type` -> its definition's `type`, whether it is an array, how LDtk shows it.
DEF_TYPES: dict[str, tuple[str, bool, str]] = {
    "Int": ("F_Int", False, "NameAndValue"),
    "Float": ("F_Float", False, "NameAndValue"),
    "Bool": ("F_Bool", False, "NameAndValue"),
    "String": ("F_String", False, "NameAndValue"),
    "Color": ("F_Color", False, "NameAndValue"),
    "FilePath": ("F_Path", False, "NameAndValue"),
    "EntityRef": ("F_EntityRef", False, "RefLinkBetweenCenters"),
    POINTS: ("F_Point", True, "PointPath"),
}


@dataclass(frozen=True)
class EntityRef:
    """An object reference as LDtk writes one: where the entity it names is (None: no entity)."""

    entity_iid: str | None
    layer_iid: str
    level_iid: str
    world_iid: str


def ldtk_color(color: str) -> str:
    """"#RRGGBB" as LDtk writes colours; a colour with alpha ("#aarrggbb") loses it."""
    return "#" + color[-6:].upper()


def _typed(value: PropertyValue | EntityRef) -> tuple[str, Any, dict[str, Any] | None]:
    """(`__type`, `__value`, the realEditorValues entry or None) of a property value."""
    if isinstance(value, EntityRef):
        if value.entity_iid is None:
            return "EntityRef", None, None
        place = {"entityIid": value.entity_iid, "layerIid": value.layer_iid, "levelIid": value.level_iid, "worldIid": value.world_iid}
        return "EntityRef", place, {"id": "V_String", "params": [value.entity_iid]}
    if isinstance(value, FilePath):
        return "FilePath", str(value), {"id": "V_String", "params": [str(value)]}
    if isinstance(value, bool):
        return "Bool", value, {"id": "V_Bool", "params": [value]}
    if isinstance(value, int):
        if value not in INT32:  # LDtk's Int is 32-bit (typed importers read it so): as Tiled, a string
            return "String", str(value), {"id": "V_String", "params": [str(value)]}
        return "Int", value, {"id": "V_Int", "params": [value]}
    if isinstance(value, float):
        return "Float", value, {"id": "V_Float", "params": [value]}
    if isinstance(value, Color):
        color = ldtk_color(value)
        return "Color", color, {"id": "V_Int", "params": [int(color[1:], 16)]}
    return "String", value, {"id": "V_String", "params": [value]}


def property_fields(properties: dict[str, PropertyValue | EntityRef], uid_of: Any, where: str) -> list[dict[str, Any]]:
    """Field instances of `properties` in key order; `uid_of(identifier)` gives a field's defUid.
    Two names that make the same identifier are an error naming both (`where`: whose they are)."""
    out: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for name in sorted(properties):
        ident = identifier(name)
        if ident in seen:
            raise PipelineError([f"{where}: properties {seen[ident]!r} and {name!r} are both the LDtk field {ident!r}; rename one"])
        seen[ident] = name
        ftype, value, editor = _typed(properties[name])
        out.append(
            {"__identifier": ident, "__type": ftype, "__value": value, "__tile": None, "defUid": uid_of(ident), "realEditorValues": [editor] if editor else []}
        )
    return out


def points_field(ident: str, uid: int, cells: list[tuple[int, int]]) -> dict[str, Any]:
    """An Array<Point> field instance of grid cells (a polyline's vertices)."""
    return {
        "__identifier": ident,
        "__type": POINTS,
        "__value": [{"cx": cx, "cy": cy} for cx, cy in cells],
        "__tile": None,
        "defUid": uid,
        "realEditorValues": [{"id": "V_String", "params": [f"{cx},{cy}"]} for cx, cy in cells],
    }


def field_def(ident: str, uid: int, ftype: str) -> dict[str, Any]:
    """The definition of a field whose instances have `__type` `ftype`, as LDtk writes one."""
    def_type, is_array, display = DEF_TYPES[ftype]
    return {
        "identifier": ident,
        "doc": None,
        "__type": ftype,
        "uid": uid,
        "type": def_type,
        "isArray": is_array,
        "canBeNull": True,  # a map or object without the property leaves it null
        "arrayMinLength": None,
        "arrayMaxLength": None,
        "editorDisplayMode": display,
        "editorDisplayScale": 1,
        "editorDisplayPos": "Above",
        "editorLinkStyle": "StraightArrow",
        "editorDisplayColor": None,
        "editorAlwaysShow": False,
        "editorShowInWorld": True,
        "editorCutLongValues": True,
        "editorTextSuffix": None,
        "editorTextPrefix": None,
        "useForSmartColor": False,
        "exportToToc": False,
        "searchable": False,
        "min": None,
        "max": None,
        "regex": None,
        "acceptFileTypes": None,
        "defaultOverride": None,
        "textLanguageMode": None,
        "symmetricalRef": False,
        "autoChainRef": False,
        "allowOutOfLevelRef": True,
        "allowedRefs": "OnlySame",
        "allowedRefsEntityUid": None,
        "allowedRefTags": [],
        "tilesetUid": None,
    }


def merged_type(types: list[str]) -> str:
    """The one type for instances of these `__type`s: Int and Float together are Float (a stat
    whole in one map, fractional in another); any other mix is String (a number past 32 bits in
    one map, a colour in one and a name in another)."""
    kinds = set(types)
    if len(kinds) == 1:
        return types[0]
    return "Float" if kinds == {"Int", "Float"} else "String"


def retyped(field: dict[str, Any], ftype: str) -> dict[str, Any]:
    """A field instance as the type `merged_type` chose for it: LDtk's readers take a value by
    its field's type and throw on another (an Int where the field is a Float)."""
    if field["__type"] == ftype:
        return field
    value = field["__value"]
    if ftype == "Float":
        value, editor = float(value), {"id": "V_Float", "params": [float(value)]}
    elif isinstance(value, dict):  # an EntityRef among other types: the entity's iid
        value = value["entityIid"]
        editor = {"id": "V_String", "params": [value]}
    elif value is None:
        editor = None
    else:  # String: the text a TOML recipe or Tiled would show
        value = ("true" if value else "false") if isinstance(value, bool) else str(value)
        editor = {"id": "V_String", "params": [value]}
    return {**field, "__type": ftype, "__value": value, "realEditorValues": [editor] if editor else []}


def unify_types(entities: list[dict[str, Any]]) -> None:
    """Give each field of one entity type one type across these instances (one level's), as its
    definition in the project has (`merged_type`): two chests, `gold = 1` and `gold = 1.5`."""
    types: dict[tuple[str, str], list[str]] = {}
    for entity in entities:
        for field in entity["fieldInstances"]:
            types.setdefault((entity["__identifier"], field["__identifier"]), []).append(field["__type"])
    merged = {key: merged_type(found) for key, found in types.items()}
    for entity in entities:
        entity["fieldInstances"] = [retyped(f, merged[entity["__identifier"], f["__identifier"]]) for f in entity["fieldInstances"]]
