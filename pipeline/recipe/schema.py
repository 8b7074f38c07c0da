"""The JSON Schema of recipes, generated from the params models, for editors (Taplo, VS Code)."""

from __future__ import annotations

from typing import Any

from pipeline import registry
from pipeline.recipe.model import PackConfig
from pipeline.stage_summary import summary

DRAFT = "http://json-schema.org/draft-07/schema#"


def _draft07(node: Any) -> Any:
    """pydantic emits 2020-12 `prefixItems` for tuples; draft-07 readers (Taplo) want `items: [...]`."""
    if isinstance(node, list):
        return [_draft07(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _draft07(v) for k, v in node.items() if k != "prefixItems"}
    if "prefixItems" in node:
        out["items"] = _draft07(node["prefixItems"])
        out["additionalItems"] = False
    return out


def _model_schema(model: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template="#/definitions/{model}")
    definitions.update(schema.pop("$defs", {}))
    return schema


def recipe_schema(extra: dict[str, type[registry.StageParams]] | None = None) -> dict[str, Any]:
    """The schema of recipes using the built-in stage kinds, those of installed plugin packages,
    and `extra` (the kinds of a project's plugin files)."""
    kinds = dict(sorted({**registry.kinds(), **(extra or {})}.items()))
    definitions: dict[str, Any] = {}
    wiring = {
        "input": {"type": "string", "description": "Name of the stage whose Level this stage takes."},
        "inputs": {"type": "array", "items": {"type": "string"}, "description": "Names of the stages this stage takes, in order."},
    }
    variants = []
    for kind, cls in kinds.items():
        params = _model_schema(cls, definitions)
        doc = (cls.__doc__ or "").strip()
        variants.append(
            {
                "if": {"properties": {"use": {"const": kind}}, "required": ["use"]},
                "then": {
                    "description": doc,
                    "properties": {"use": {"const": kind, "description": summary(doc)}, **wiring, **params.get("properties", {})},
                    "required": ["use", *params.get("required", [])],
                    "additionalProperties": False,
                },
            }
        )
    stage_table = {
        "type": "object",
        "description": "A stage: `use` names its kind (see `pcg stages`); the other keys are its parameters.",
        "properties": {"use": {"enum": list(kinds), "description": "Stage kind."}, **wiring},
        "required": ["use"],
        "allOf": variants,
    }
    pack = _model_schema(PackConfig, definitions)
    pack["description"] = "The pack: its name (folder under exports/), seed and number of maps."
    schema = {
        "$schema": DRAFT,
        "title": "pcg-pipeline recipe",
        "type": "object",
        "properties": {
            "pack": pack,
            "stage": {"type": "object", "description": "The stages, one [stage.NAME] table each.", "additionalProperties": stage_table},
        },
        "required": ["pack", "stage"],
        "additionalProperties": False,
    }
    if definitions:
        schema["definitions"] = definitions
    return _draft07(schema)
