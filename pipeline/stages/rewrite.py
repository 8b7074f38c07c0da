"""The `rewrite` stage: a MarkovJunior-style rule program, as a generator or on another stage's map."""

from __future__ import annotations

import hashlib
import posixpath
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, PositiveInt, PrivateAttr, ValidationInfo, field_validator, model_validator

from pipeline.errors import KeyedError, PipelineError
from pipeline.fsio import read_regular
from pipeline.level import Level, PropertyValue, Symbol, check_colors
from pipeline.paths import check_relative_dir
from pipeline.ranges import SizeRange, draw_size, most, size_record, size_stats, size_type
from pipeline.registry import StageParams, stage
from pipeline.rewrite import palette, symmetry
from pipeline.rewrite.program import MAX_CELLS, Program, RunResult, every_value, program_warnings, run
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.rule import Alphabet, UnionError
from pipeline.rewrite.toml_form import parse_node
from pipeline.rewrite.xml_form import load_model
from pipeline.stages.export.gif import FRAME_COLORS, FRAMES


@stage("rewrite", version=2)
class Rewrite(StageParams):
    """Run a program of pattern rewrite rules with MarkovJunior's semantics. `one` applies one
    random match, `all` a random maximal set of non-overlapping matches, `prl` every match with
    probability `p`; `markov` runs its first child that applies, `sequence` each child until it
    fails; `path` draws shortest paths; `fields` and `observe` (with `search`) steer `one` and
    `all` towards a goal; `convolution` is a cellular automaton step, `convchain` resamples a
    texture after a sample; `map` and `wfc` (wave function collapse, from a sample or a tileset)
    make a new grid in other values, which the map then has. Without an input it starts from a
    `size` grid of the first value; with one, from that map, matching its symbols by char (its
    layers and objects pass through; its stats, which describe the old tiles, do not, and in a
    build a hand-made map's own properties are handed on).
    `origin = true` first puts the second value in the centre cell, of either grid.

    `program` is the node tree inline, e.g. `{ markov = [ { one = "RBB=GGR" }, { one = "RGG=WWR" } ] }`,
    or the path of a MarkovJunior model file (`rules/MazeBacktracker.xml`, relative to the
    recipe), which then sets values, origin, unions and symmetry itself. A model's rule images
    (`file`, `fin`, `fout`), convchain and wfc samples and wfc tilesets come from `resources`
    (default: `resources/` beside the model's folder, where MarkovJunior finds them), and are part
    of the cache key like the model; an inline program's samples and tilesets come from
    `resources` too.
    """

    arity: ClassVar[tuple[int, int]] = (0, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ("rewrite_steps",)
    passes_stats: ClassVar[bool] = False  # the input's statistics describe tiles it rewrote
    # The rule machine and the node kinds it compiles with it: about 7 s in one process.
    compile_weight: ClassVar[int] = 12

    values: str | None = Field(None, description='The grid\'s symbols, one character each; the first fills a new grid (e.g. "BRGW").')
    origin: bool = Field(False, description="Put the second value in the centre cell before the program runs (of a new grid, or of the input).")
    symmetry: str = Field(symmetry.DEFAULT, description="Default symmetry group of the rules: (), (x), (y), (x)(y), (xy+), (xy).")
    unions: dict[str, str] = Field(default_factory=dict, description='Input wildcards: { "?" = "BR" } matches B or R.')
    program: str | dict[str, Any] = Field(description="The node tree (a table), or a MarkovJunior .xml model file.")
    resources: str | None = Field(
        None,
        min_length=1,
        description="A model file's resources folder (its rule images are rules/*.png, convchain and wfc samples samples/*.png, "
        "wfc tilesets tilesets/*.xml), relative to the recipe; default: resources/ beside the model's folder, as MarkovJunior "
        "finds it. An inline program with convchain or wfc nodes reads their samples and tilesets from here.",
    )
    size: size_type(PositiveInt) | None = Field(
        None, description="Grid size [width, height] when there is no input; a side may be [min, max], drawn per map (recorded as size_w, size_h)."
    )
    legend: dict[str, str] = Field(default_factory=dict, description='Symbol names by value: { B = "wall", W = "floor" } (exporters map names to tiles).')
    colors: dict[str, str] = Field(default_factory=dict, description='Colours by value: { R = "#ff0000" } (default: the PICO-8 colours MarkovJunior uses).')
    max_steps: PositiveInt = Field(10_000_000, le=2**40, description="Safety limit on program steps.")
    on_max_steps: Literal["error", "stop"] = Field("error", description="At max_steps: fail the map, or keep the grid as it is.")
    record: bool = Field(False, description="Also write an animated GIF of the run next to the map (<map>.<stage>.gif).")
    record_frames: int = Field(120, ge=2, le=1000, description="Most frames in the GIF; steps per frame grow to fit the run.")
    record_dir: str = Field(".", description="Folder inside the pack for the GIF.")

    _program: Program | None = PrivateAttr(None)
    _files: dict[str, str] = PrivateAttr(default_factory=dict)

    _dir = field_validator("record_dir")(classmethod(lambda cls, v: check_relative_dir(v)))

    def added_stats(self) -> tuple[str, ...]:
        return (*(self.adds_stats or ()), *(size_stats("size", self.size) if self.size is not None else ()))

    @field_validator("program", mode="before")
    @classmethod
    def _program_table(cls, value: Any) -> Any:
        # A list of nodes is the likely mistake: say what wraps it, not the Python form of the list.
        if isinstance(value, list):
            raise KeyedError("", "a program is one node, a table: wrap a list of nodes as { sequence = [...] } (or markov)")
        return value

    @field_validator("size")
    @classmethod
    def _size(cls, value: SizeRange | None) -> SizeRange | None:
        if value is not None and most(value[0]) * most(value[1]) > MAX_CELLS:
            raise ValueError(f"{most(value[0])} x {most(value[1])} is more than 64 M cells")
        return value

    @field_validator("colors")
    @classmethod
    def _colors(cls, value: dict[str, str]) -> dict[str, str]:
        check_colors(value)
        return value

    @model_validator(mode="after")
    def _load_program(self, info: ValidationInfo) -> Rewrite:
        context = info.context or {}
        if isinstance(self.program, str):
            self._program = self._load_model_file(Path(context.get("recipe_dir", ".")))
        else:
            if self.values is None:
                raise KeyedError("values", 'is required with an inline program: the grid\'s symbols, e.g. "BRGW"')
            try:
                alphabet = Alphabet(self.values, tuple(sorted(self.unions.items())))
            except UnionError as exc:
                raise KeyedError(f"unions.{exc.symbol}", str(exc)) from None
            except ValueError as exc:
                raise KeyedError("values", str(exc)) from None
            try:
                symmetry.check(self.symmetry)
                # An inline program reads files only for convchain and wfc nodes.
                folder = ResourceFolder(Path(context.get("recipe_dir", ".")), self.resources) if self.resources is not None else None
                root = parse_node(self.program, alphabet, self.symmetry, "", folder.read if folder else None)
            except ProgramError as exc:
                raise KeyedError(f"program.{exc.where}" if exc.where else "program", exc.message) from None
            except ValueError as exc:
                raise KeyedError("symmetry", str(exc)) from None
            if self.origin and len(alphabet.values) < 2:
                raise KeyedError("origin", f"puts the second of the values in the centre, and values = {self.values!r} has one")
            if folder is not None and not folder.digests:
                raise KeyedError("resources", "is only for a MarkovJunior .xml program, or an inline one with convchain or wfc nodes (this one reads no file)")
            self._files = dict(folder.digests) if folder else {}
            self._program = Program(alphabet, root, "center" if self.origin else "none")
        values = every_value(self._program)
        for key, table in (("legend", self.legend), ("colors", self.colors)):
            for ch in table:
                if ch not in values:
                    raise KeyedError(f"{key}.{ch}", f"is not one of the values {values!r}")
        names = list(self.legend.values())
        for ch, name in self.legend.items():
            if not name or names.count(name) > 1:
                raise KeyedError(f"legend.{ch}", f"names must be unique and non-empty (got {name!r})")
        # A value without a legend name takes its default one (C is cyan): a legend giving that
        # name to another value would make every map's alphabet name two symbols alike.
        defaults = {palette.default_symbol(ch)[0]: ch for ch in values if ch not in self.legend}
        for ch, name in self.legend.items():
            if name in defaults and defaults[name] != ch:
                other = defaults[name]
                raise KeyedError(f"legend.{ch}", f"{name!r} is also the name value {other!r} has by default: give {other} a legend name too")
        return self

    def _load_model_file(self, recipe_dir: Path) -> Program:
        if not isinstance(self.program, str):
            raise KeyedError("program", "a model file is named by a string")
        # Whether it names a model file at all first: `program = "B=W"` is a rule meant as a program.
        if not self.program.endswith(".xml"):
            raise KeyedError("program", f"a string program is the path of a MarkovJunior .xml model (got {self.program!r}); a rule program is a table, e.g. {{ one = \"B=W\" }}")
        given = [k for k in ("values", "origin", "symmetry", "unions") if k in self.model_fields_set]
        if given:
            raise KeyedError(given[0], f"comes from the model file {self.program!r}; remove it here")
        path = recipe_dir / self.program
        try:
            data = read_regular(path)  # a FIFO here would hang the recipe's loading
        except OSError as exc:
            raise KeyedError("program", f"cannot read {path} ({exc.strerror or exc})") from None
        if self.resources is not None:
            folder = ResourceFolder(recipe_dir, self.resources)
        else:
            # MarkovJunior runs beside its models/ and resources/ folders.
            folder = ResourceFolder(recipe_dir, posixpath.join(posixpath.dirname(self.program), "..", "resources"))
        try:
            program = load_model(data.decode("utf-8-sig"), folder.read)
        except UnicodeDecodeError:
            raise KeyedError("program", f"{path} is not UTF-8 text") from None
        except ProgramError as exc:
            raise KeyedError("program", f"{path}: {exc}") from None
        self._files = {self.program: hashlib.sha256(data).hexdigest(), **folder.digests}
        return program

    def files_read(self) -> dict[str, str]:
        return dict(self._files)

    def input_problems(self, inputs: int) -> list[str]:
        return ["size: only for a rewrite stage without an input (the input sets the size)"] if inputs and self.size is not None else []

    def warnings(self) -> list[str]:
        # Recording options do nothing until `record` asks for the GIF.
        unused = [key for key in ("record_frames", "record_dir") if key in self.model_fields_set] if not self.record else []
        where = f"program: {self.program}: " if isinstance(self.program, str) else "program: "
        found = [where + line for line in program_warnings(self._program)] if self._program is not None else []
        return found + [f"{key}: has no effect without record = true (no GIF is written)" for key in unused]

    def companions(self, name: str) -> list[tuple[str, StageParams]]:
        if not self.record:
            return []
        from pipeline.stages.export.gif import ExportGif

        return [("gif", ExportGif(dir=self.record_dir, suffix=f".{name}"))]

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        program = self._program
        if program is None:  # only a validated stage has one
            raise PipelineError(["rewrite: the stage was not validated (make it with model_validate)"])
        values = program.alphabet.values
        source = inputs[0] if inputs else None
        if source is not None:  # `size` beside an input is refused before a run (input_problems)
            lut = np.zeros(256, dtype=np.uint8)
            missing = []
            for i, sym in enumerate(source.alphabet):
                j = values.find(sym.char)
                if j < 0:
                    missing.append(f"{sym.name} ({sym.char})")
                lut[i] = max(j, 0)
            if missing:
                raise PipelineError([f"values: the input has symbols {', '.join(missing)} that are not among the values {values!r}"])
            start = lut[source.tiles]
        else:
            if self.size is None:
                raise PipelineError(["size: is required without an input: the grid's [width, height]"])
            w, h = draw_size(self.size, rng)
            start = np.zeros((h, w), dtype=np.uint8)
        try:
            result = run(program, start, rng, self.max_steps, self.record_frames if self.record else 0)
        except ValueError as exc:  # a grid the program cannot draw (a map scaling it to nothing)
            raise PipelineError([f"program: {exc}"]) from None
        except MemoryError:  # not numba's words from deep inside the machine: what the user can change
            h, w = start.shape
            raise PipelineError([f"program: ran out of memory on a {w} x {h} grid (a smaller size, or fewer max_steps, or record_frames)"]) from None
        if not result.finished and self.on_max_steps == "error":
            raise PipelineError(
                [f"max_steps: the program was still running after {self.max_steps:,} steps (raise max_steps, "
                 'or set on_max_steps = "stop" to keep the grid as it is then)']
            )
        try:
            alphabet = self._alphabet(result.values, source)
            # The input's properties (maze statistics, say) described tiles this run has
            # rewritten, so they are not passed on; layers and objects are.
            props: dict[str, PropertyValue] = {"rewrite_steps": result.turns}
            if source is None and self.size is not None:
                props.update(size_record("size", self.size, (start.shape[1], start.shape[0])))
            return Level(
                tiles=result.state,
                alphabet=alphabet,
                layers=dict(source.layers) if source else {},
                objects=list(source.objects) if source else [],
                properties=props,
                attachments=self._film(result, source) if self.record else {},
            )
        except ValueError as exc:
            raise PipelineError([f"legend: {exc}"]) from None

    def _film(self, result: RunResult, source: Level | None) -> dict[str, np.ndarray]:
        film = {FRAMES: result.frames}
        if result.frame_values != result.values:
            # Earlier frames show a grid a `map` node replaced, with values of their own.
            film[FRAME_COLORS] = np.array([s.rgb() for s in self._alphabet(result.frame_values, source)], dtype=np.uint8)
        return film

    def _alphabet(self, values: str, source: Level | None) -> tuple[Symbol, ...]:
        known = {s.char: s for s in source.alphabet} if source else {}
        symbols = []
        for ch in values:
            name, color = palette.default_symbol(ch)
            if ch in known:
                name, color = known[ch].name, known[ch].color
            symbols.append(Symbol(ch, self.legend.get(ch, name), self.colors.get(ch, color).lower()))
        return tuple(symbols)
