"""Recordings of every node kind: a rewrite stage with `record = true` keeps frames that show the
run (more than one picture, the last one the map it made) and they make an animated GIF."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from PIL import Image

from pipeline.stages.export.gif import FRAME_COLORS, FRAMES, render_gif
from pipeline.stages.rewrite import Rewrite
from test_rewrite_fields import SUITE

# (kind, stage parameters): inline programs where a few rules show the kind, suite models where
# it needs a sample, a tileset or a goal.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("one", {"values": "BRGW", "origin": True, "size": [15, 15], "program": {"markov": [{"one": "RBB=GGR"}, {"one": "RGG=WWR"}]}}),
    ("all", {"values": "BW", "size": [12, 12], "program": {"sequence": [{"one": "B=W", "steps": 3}, {"all": "WB=WW"}]}}),
    ("prl", {"values": "BW", "size": [12, 12], "program": {"prl": "B=W", "p": 0.2, "steps": 4}}),
    ("path", {"values": "BRGW", "size": [12, 12], "program": {"sequence": [
        {"one": "B=R", "steps": 1}, {"one": "B=G", "steps": 1}, {"path": {"from": "R", "to": "G", "on": "B", "color": "W"}}]}}),
    ("field", {"values": "BRW", "size": [12, 12], "program": {"sequence": [
        {"one": "B=R", "steps": 1}, {"one": "B=W", "steps": 1},
        {"markov": [{"one": "RW=BR"}, {"one": "RB=BR", "fields": [{"for": "R", "to": "W", "on": "B", "recompute": True}]}]}]}}),
    ("convolution", {"values": "DA", "size": [20, 20], "program": {"sequence": [
        {"prl": "D=A", "p": 0.55, "steps": 1},
        {"convolution": [{"rule": "A=D", "values": "D", "sum": "5..8"}, {"rule": "D=A", "values": "A", "sum": "6..8"}],
         "neighborhood": "Moore", "steps": 6}]}}),
    ("map", {"values": "BOEIN", "size": [8, 8], "symmetry": "()", "program": {"sequence": [
        {"one": ["B=O", "B=E", "B=I", "B=N"]},
        {"map": ["O=DD/DA", "E=DD/AA", "I=DA/DA", "N=DA/AA"], "scale": [2, 2], "values": "DA", "then": [{"one": "ADA=AAA", "steps": 4}]}]}}),
    ("convchain", {"program": "ChainMaze.xml", "size": [24, 24]}),
    ("wfc overlapping", {"program": "WaveFlowers.xml", "size": [24, 24]}),
    ("wfc tiled", {"program": "Knots2D.xml", "size": [8, 8]}),
    ("observe", {"program": "BishopParity.xml", "size": [16, 16]}),
]


@pytest.mark.parametrize("params", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_a_recording_shows_the_run_and_ends_on_the_map(params: dict[str, Any]) -> None:
    stage = Rewrite.model_validate({**params, "record": True, "record_frames": 40}, context={"recipe_dir": SUITE / "models"})
    level = stage.run([], np.random.default_rng(4))
    frames = level.attachments[FRAMES]
    assert 3 <= len(frames) <= 40 and frames.shape[1:] == level.tiles.shape
    assert len({f.tobytes() for f in frames}) >= 3, "the frames do not show the run"
    # The last frame is the map, in the frames' own numbering when a grid was replaced.
    colors = level.attachments.get(FRAME_COLORS)
    if colors is None:
        assert np.array_equal(frames[-1], level.tiles)
    else:
        own = np.array([s.rgb() for s in level.alphabet], dtype=np.uint8)
        assert np.array_equal(colors[frames[-1]], own[level.tiles])
    gif = Image.open(io.BytesIO(render_gif(level, 2, 40)))
    assert gif.n_frames >= 3 and gif.size == (level.width * 2, level.height * 2)


def test_every_node_kind_has_a_recording_case() -> None:
    from pipeline.rewrite.kind_table import NODE_KINDS

    named = {c[0].split()[0] for c in CASES}
    # Branches are in every case; search replays its plan as `one` steps.
    assert set(NODE_KINDS) - {"markov", "sequence"} <= named


def test_recording_options_without_record_are_a_warning() -> None:
    params = {"size": [5, 5], "values": "BW", "program": {"one": "B=W"}}
    quiet = Rewrite.model_validate({**params, "record_frames": 50, "record_dir": "gifs"})
    assert quiet.warnings() == [f"{key}: has no effect without record = true (no GIF is written)" for key in ("record_frames", "record_dir")]
    assert Rewrite.model_validate({**params, "record": True, "record_frames": 50}).warnings() == []
    assert Rewrite.model_validate(params).warnings() == []
