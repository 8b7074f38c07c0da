"""`pcg schema`: the JSON Schema of recipes (pipeline.recipe.schema), for editors that
validate and complete TOML."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from pipeline.commands.messages import user_errors


@user_errors
def schema(
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write here instead of standard output."),
    recipes: list[Path] = typer.Option([], "--recipe", "-r", help="Also the stages of these recipes' plugins (a file or a folder)."),
) -> None:
    """Write the JSON Schema of recipes, for editors that validate and complete TOML (see docs/recipes.md)."""
    import json

    from pipeline.fsio import atomic_write
    from pipeline.recipe.load import plugin_kinds_of
    from pipeline.recipe.schema import recipe_schema

    text = json.dumps(recipe_schema(plugin_kinds_of(recipes)), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        atomic_write(output, text.encode("utf-8"))
