"""The README and docs/ are run, not just read: every TOML block builds (or, marked
`<!-- fragment -->`, parses and its stage tables validate), the README's walkthrough builds step by
step, every `pcg ...` command in a shell block parses, every Python sample runs (or, a fragment,
compiles), every output sample (`<!-- output -->`) is
what the command prints today, every relative link resolves, and the README stays a short guide
that links every page under docs/."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, needs_tiled, tiled_env

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FRAGMENT = "<!-- fragment -->"
OUTPUT = "<!-- output -->"
WALKTHROUGH = "<!-- walkthrough -->"
README_MAX_WORDS = 1500
# MarkovJunior's resources, which the ConvChain and WFC examples read from the project's resources/.
MJ_SUITE = Path(os.environ.get("MJ_SUITE", "/work/shared/markovjunior"))
MJ_SAMPLES = ("Maze.png", "Flowers.png")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    marker: str  # the HTML comment on the line before the fence, if any
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page (indented ones inside lists too, dedented)."""
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.groups()
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        marker = before if before.startswith("<!--") else ""
        text = "\n".join(line[len(indent) :] for line in lines[i + 1 : end]) + "\n"
        found.append(Block(page, i + 1, lang, marker, text))
        i = end + 1
    return found


ALL = [b for page in PAGES for b in blocks(page)]
TOML = [b for b in ALL if b.lang == "toml" and b.marker != WALKTHROUGH]
RECIPES = [b for b in TOML if b.marker != FRAGMENT]
FRAGMENTS = [b for b in TOML if b.marker == FRAGMENT]
SHELL = [b for b in ALL if b.lang in ("sh", "console")]
PYTHON = [b for b in ALL if b.lang == "python"]
JSON = [b for b in ALL if b.lang == "json"]
OUTPUTS = [b for b in ALL if b.marker == OUTPUT]


def _make_images() -> Any:
    spec = importlib.util.spec_from_file_location("make_images", ROOT / "docs" / "make_images.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pack_name(block: Block) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"doc_{block.page.stem}_{block.line}")


def _needs_mj(block: Block) -> bool:
    return 'resources = "../resources"' in block.text


def as_recipe(block: Block) -> str:
    """A TOML block as a whole recipe: blocks of bare stages get a [pack] and, when they have no
    exporter, an export.tmx of each stage nothing else reads."""
    data = tomllib.loads(block.text)
    if "pack" in data:
        return block.text
    stages = data["stage"]
    read = {i for body in stages.values() for i in ([body["input"]] if "input" in body else body.get("inputs", []))}
    extra = ""
    if not any(str(body.get("use", "")).startswith("export.") for body in stages.values()):
        for name in (n for n in stages if n not in read):
            extra += f'\n[stage.{name}_tmx]\nuse = "export.tmx"\ninput = "{name}"\ndir = "{name}"\n'
    return f'[pack]\nname = "{_pack_name(block)}"\nseed = 1\nmaps = 1\n\n' + block.text + extra


def _pcg(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=project, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with this repository's recipes/ and tilesets/ (and MarkovJunior's samples when
    the suite is here), shared by every test of this file."""
    root = tmp_path_factory.mktemp("docs-project")
    shutil.copytree(ROOT / "recipes", root / "recipes")
    shutil.copytree(ROOT / "tilesets", root / "tilesets")
    if MJ_SUITE.is_dir():
        (root / "resources" / "samples").mkdir(parents=True)
        for name in MJ_SAMPLES:
            shutil.copy(MJ_SUITE / "resources" / "samples" / name, root / "resources" / "samples")
    return root


@pytest.fixture(scope="session")
def built(project: Path) -> dict[str, Any]:
    """Every whole-recipe TOML block, built together in one `pipeline.build` (the MarkovJunior
    samples' blocks only when the suite is here)."""
    import pipeline

    paths = {}
    for block in RECIPES:
        if _needs_mj(block) and not MJ_SUITE.is_dir():
            continue
        path = project / "recipes" / f"{_pack_name(block)}.toml"
        path.write_text(as_recipe(block))
        paths[block.where] = path
    result = pipeline.build(list(paths.values()), out=project / "exports", cache=project / ".pcg-cache", jobs=2)
    return {"result": result, "paths": paths}


@pytest.mark.parametrize("block", RECIPES, ids=lambda b: b.where)
def test_recipe_block_builds(block: Block, built: dict[str, Any]) -> None:
    if block.where not in built["paths"]:
        pytest.skip(f"needs MarkovJunior's resources/samples ({MJ_SUITE} not found; set MJ_SUITE)")
    path = built["paths"][block.where]
    result = built["result"]
    problems = [p for p in result.problems if path.name in p]
    assert not problems, f"{block.where}: {problems}"
    pack = next((p for p in result.packs if Path(p.recipe).name == path.name), None)
    assert pack is not None, f"{block.where}: not built ({result.problems})"
    assert not pack.failures and pack.maps > 0, f"{block.where}: {pack.failures}"


@pytest.mark.parametrize("block", FRAGMENTS, ids=lambda b: b.where)
def test_fragment_parses_and_its_stages_validate(block: Block, project: Path) -> None:
    from pipeline import registry
    from pipeline.recipe.load import _load_pack, _load_stages, _plugin_kinds

    data = tomllib.loads(block.text)
    problems: list[str] = []
    recipes = project / "recipes"
    plugins = tuple(data.get("pack", {}).get("plugins", ()))
    if "pack" in data:
        _load_pack({"name": "fragment", "seed": 1, **data["pack"]}, problems)
        # order_by names a stat of stages this fragment leaves out: that check needs a whole recipe.
        problems = [p for p in problems if "order_by" not in p]
    stages = {name: body for name, body in data.get("stage", {}).items() if isinstance(body, dict) and "use" in body}
    if stages:
        kinds = registry.KindTable(_plugin_kinds(plugins, recipes, problems))
        _load_stages(stages, problems, recipes, kinds)
    assert not problems, f"{block.where}: {problems}"


@pytest.fixture(scope="session")
def levels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project the walkthrough starts from: `pcg init levels`, as the README says."""
    root = tmp_path_factory.mktemp("walkthrough")
    run = _pcg(root, "init", "levels")
    assert run.returncode == 0, run.stderr
    return root / "levels"


def test_walkthrough_builds_step_by_step(levels: Path) -> None:
    """Each step of the README's walkthrough, merged onto the ones before, is a recipe that builds
    in a project `pcg init` made; the last one writes what the README says it writes."""
    import pipeline

    project = levels

    images = _make_images()
    steps = images.walkthrough_recipes((ROOT / "README.md").read_text())
    assert len(steps) >= 5
    recipe = project / "recipes" / f"{images.WALKTHROUGH_RECIPE}.toml"
    for i, text in enumerate(steps, 1):
        recipe.write_text(text)
        result = pipeline.build([recipe], out=project / "exports", cache=project / ".pcg-cache", jobs=2)
        assert result.ok, f"walkthrough step {i}: {result.problems} {[p.failures for p in result.packs]}"
    pack = project / "exports" / images.WALKTHROUGH_RECIPE
    readme = (ROOT / "README.md").read_text()
    for name in re.findall(r"`exports/crawl/([^`]+)`", readme):
        assert (pack / name).is_file(), name
    for name in ("map_000.tmx", "tilesets/stone.tsx", "tilesets/stone.png", "contact_sheet.png", "manifest.json", "phaser/map_000.tmj"):
        assert (pack / name).is_file(), name


@needs_tiled
def test_walkthrough_map_opens_in_tiled(levels: Path, tmp_path: Path) -> None:
    """The walkthrough ends with opening map_000.tmx in Tiled: the real Tiled reads it, with its
    three tile layers and the object layer (spawn, exit, chests)."""
    test_walkthrough_builds_step_by_step(levels)
    project = levels
    out = tmp_path / "map.json"
    run = subprocess.run(["tiled", "--export-map", "json", str(project / "exports" / "crawl" / "map_000.tmx"), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    exported = json.loads(out.read_text())
    layers = {layer["name"]: layer for layer in exported["layers"]}
    assert {"floor", "walls", "doors", "objects"} <= set(layers)
    kinds = {o.get("type") or o.get("class") for o in layers["objects"]["objects"]}
    assert {"spawn", "exit", "chest"} <= kinds


def _commands(block: Block) -> list[list[str]]:
    """The simple commands of a shell block (split at `&&`, `||`, `|` and `;`), comments removed."""
    commands = []
    for line in block.text.splitlines():
        lexer = shlex.shlex(line.removeprefix("$ "), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        current: list[str] = []
        for token in lexer:
            if token in ("&&", "||", "|", ";"):
                commands.append(current)
                current = []
            else:
                current.append(token)
        commands.append(current)
    return [c for c in commands if c]


def _check_pcg(args: list[str]) -> None:
    """Parse a `pcg` command line as the CLI would, without running it (click raises UsageError)."""
    import typer

    from pipeline.commands.app import app

    group = typer.main.get_command(app)
    ctx = group.context_class(group, info_name="pcg")
    name, rest = args[0], args[1:]
    command = group.get_command(ctx, name)
    assert command is not None, f"unknown command {name!r}"
    command.make_context(name, list(rest), parent=ctx)


@pytest.mark.parametrize("block", SHELL, ids=lambda b: b.where)
def test_shell_commands_parse(block: Block) -> None:
    targets = set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(), flags=re.M))
    for command in _commands(block):
        if command[0] == "pcg":
            try:
                _check_pcg(command[1:])
            except Exception as exc:  # click's UsageError and friends: say which line
                pytest.fail(f"{block.where}: `{shlex.join(command)}`: {exc}")
        elif command[0] == "make":
            assert all(t in targets for t in command[1:] if "=" not in t), f"{block.where}: {command}"


def _matches(expected: list[str], actual: list[str]) -> bool:
    """`...` in the sample stands for any lines (none included); other lines are the output's."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(_matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and actual[0] == expected[0] and _matches(expected[1:], actual[1:])


@pytest.mark.parametrize("block", OUTPUTS, ids=lambda b: b.where)
def test_output_sample_is_current(block: Block, project: Path) -> None:
    """Run each `$ pcg ...` line of the sample in the project and compare what it prints (a
    command whose sample shows no lines must just succeed)."""
    sections: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            sections.append((line[2:], []))
        else:
            assert sections, f"{block.where}: an output sample starts with its `$ pcg ...` line"
            sections[-1][1].append(line.rstrip())
    for command, expected in sections:
        args = shlex.split(command)
        assert args[0] == "pcg", f"{block.where}: {command}"
        run = _pcg(project, *args[1:])
        actual = [line.rstrip() for line in (run.stdout + run.stderr).splitlines()]
        if not [e for e in expected if e != "..."]:
            assert run.returncode == 0, f"{block.where}: `{command}` failed: {run.stderr}"
            continue
        assert _matches(expected, actual), f"{block.where}: `{command}` now prints:\n" + "\n".join(actual)


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.where)
def test_python_block_runs(block: Block, project: Path) -> None:
    """Python samples run in the project folder (as the API's relative paths assume); a fragment
    (a plugin or stage excerpt with `...` for its body) must at least compile."""
    if block.marker == FRAGMENT:
        compile(block.text, block.where, "exec")
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", block.text], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{block.where}: {run.stderr}"


@pytest.mark.parametrize("block", JSON, ids=lambda b: b.where)
def test_json_block_parses(block: Block) -> None:
    json.loads(block.text)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        assert target.exists(), f"{page.relative_to(ROOT)}: broken link {link}"
        if anchor and target.suffix == ".md":
            assert anchor in _anchors(target), f"{page.relative_to(ROOT)}: no heading for {link}"


def test_readme_is_a_short_guide_linking_every_page() -> None:
    readme = (ROOT / "README.md").read_text()
    words = len(readme.split())
    assert words < README_MAX_WORDS, f"README.md has {words} words (at most {README_MAX_WORDS}: move reference text to docs/)"
    linked = {link for link in _links(ROOT / "README.md") if link.startswith("docs/")}
    missing = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if f"docs/{p.name}" not in linked]
    assert not missing, f"pages not linked from README.md: {missing}"
    # The first screen: one picture, then the quick start.
    head = readme[: readme.index("## Quick start")]
    assert len(re.findall(r"!\[", head)) == 1


def test_no_page_or_message_installs_from_an_index_that_lacks_it() -> None:
    """pcg-pipeline is on no package index: `pip install pcg-pipeline` (or `'pcg-pipeline[dask]'`)
    fails for everyone who tries it, so no page or message may say it."""
    sources = [*PAGES, *sorted((ROOT / "pipeline").rglob("*.py"))]
    said = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sources
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"pip install\s+(-\S+\s+)*['\"]?pcg-pipeline\b", line)
    ]
    assert not said, f"`pip install pcg-pipeline` names a package no index has: {said}"


def test_readme_says_which_parts_of_a_preview_are_tiled_s() -> None:
    """Previews add our markers (points, rooms, paths) over what Tiled draws: the README's account
    of a preview says which part is which."""
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "as Tiled draws the map" not in readme
    assert "markers" in readme and "tmxrasterizer" in readme
