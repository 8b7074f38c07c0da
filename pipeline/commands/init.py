"""`pcg init`: a new project in a folder of a game's repository.

Everything it writes ships inside the package (`pipeline/examples/`): the starter recipe, the
tilesets and, with `examples`, every example recipe with the maps, prefabs, rule files and
plugin stages they read. So it works the same from a checkout and from an installed wheel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import typer

from pipeline.commands.messages import console, user_errors

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

MAKEFILE = """\
# Level packs for this game: `make maps` builds every recipe in recipes/ into exports/.
# PCG is the pcg command of the environment pcg-pipeline is installed in.
PCG ?= pcg

.PHONY: maps watch schema

maps:
\t$(PCG) build recipes/

# Rebuild a pack the moment its recipe is saved.
watch:
\t$(PCG) watch recipes/

# Refresh recipe.schema.json (editor completion) after adding stages of your own.
schema:
\t$(PCG) schema -r recipes/ -o recipe.schema.json
"""

TAPLO = """\
# Taplo (and VS Code's "Even Better TOML", which uses it) validates and completes recipes
# against recipe.schema.json (`make schema` refreshes it).
[[rule]]
include = ["recipes/**/*.toml"]

[rule.schema]
path = "./recipe.schema.json"
"""

GITIGNORE = """\
# pcg-pipeline's cache of intermediate levels: rebuilt on demand.
.pcg-cache/
"""


@dataclass(frozen=True)
class Scaffold:
    """The files of a new project, by path relative to its folder."""

    files: dict[str, bytes]


def scaffold(examples: bool) -> Scaffold:
    from pipeline.recipe.load import plugin_kinds_of
    from pipeline.recipe.schema import recipe_schema

    # With the examples comes their plugin: the schema knows its stage kinds, as `make schema` would.
    plugins = plugin_kinds_of([EXAMPLES / "recipes"]) if examples else {}

    files: dict[str, bytes] = {
        "recipes/starter.toml": (EXAMPLES / "starter.toml").read_bytes(),
        "Makefile": MAKEFILE.encode(),
        ".taplo.toml": TAPLO.encode(),
        ".gitignore": GITIGNORE.encode(),
        "recipe.schema.json": (json.dumps(recipe_schema(plugins), indent=2) + "\n").encode(),
    }
    files.update(_tree(EXAMPLES / "tilesets", "tilesets"))
    if examples:
        files.update(_tree(EXAMPLES / "recipes", "recipes"))
    return Scaffold(dict(sorted(files.items())))


def _tree(root: Path, prefix: str) -> dict[str, bytes]:
    from pipeline.errors import PipelineError

    if not root.is_dir():
        raise PipelineError([f"{root}: missing from the installed package (reinstall pcg-pipeline)"])
    return {
        f"{prefix}/{path.relative_to(root).as_posix()}": path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".nbi", ".nbc")
    }


def init_project(folder: Path, examples: bool = False) -> list[str]:
    """Write a new project into `folder` (made if missing); returns the files written. Refuses,
    writing nothing, when any of them exists already: init never overwrites a file."""
    from pipeline.errors import PipelineError
    from pipeline.fsio import atomic_write

    plan = scaffold(examples)
    if folder.exists() and not folder.is_dir():
        raise PipelineError([f"{folder}: not a folder"])
    clashes = [name for name in plan.files if (folder / name).exists() or (folder / name).is_symlink()]
    if clashes:
        shown = ", ".join(clashes[:5]) + (f" and {len(clashes) - 5} more" if len(clashes) > 5 else "")
        raise PipelineError([f"{folder}: already has {shown}; pcg init writes only into a folder without them (nothing written)"])
    for name, data in plan.files.items():
        atomic_write(folder / name, data)
    return list(plan.files)


@user_errors
def init(
    folder: Path = typer.Argument(Path("."), help="Where the project goes (made if missing); by default here."),
    examples: bool = typer.Option(False, "--examples", help="Also every example recipe (and the maps, prefabs, rules and plugins they read)."),
) -> None:
    """Start a project: a starter recipe, tilesets, the recipe schema and a Makefile; overwrites nothing."""
    written = init_project(folder, examples)
    shown = console()
    recipes = sum(1 for name in written if name.startswith("recipes/") and name.endswith(".toml"))
    shown.print(f"Made a project in {folder}/ ({len(written)} files, {recipes} recipe{'s' if recipes != 1 else ''}).", soft_wrap=True)
    where = "" if folder == Path(".") else f"cd {folder} && "
    shown.print(f"Next: {where}make maps    (or: pcg build recipes/), then open exports/starter/map_000.tmx in Tiled.", soft_wrap=True)
