"""Data layers: a Level's per-tile numbers (region labels, distances) as Tiled tile layers.

Each becomes a hidden, locked tile layer that carries the exact values in a custom property
`values` (base64 of little-endian int32, row by row, compressed like the map's own layer data),
which every importer hands to the game as a layer property, and draws a picture of them with a
small fixed "values" tileset, so a designer can switch the layer on in Tiled and see them.

A tile layer cannot carry the numbers as gids: values pass 65535 on big maps, a tileset whose
size followed one map's largest value could not be the one file a pack's maps share, and Tiled
refuses gids that no tileset holds. So the gids are only a picture: labels by value mod 16 in
a palette, distances in 16 bands from 0 to the map's largest.
"""

from __future__ import annotations

import functools

import numpy as np
from PIL import Image

from pipeline.errors import PipelineError
from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.layer_data import base64_data
from pipeline.tiled.render import png_bytes
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.tmx import Compression, TileLayer, base64_bytes

# Sasha Trubetskoy's distinct colours: neighbouring labels must not look alike.
PALETTE = (
    "#e6194b", "#3cb44b", "#ffe119", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6",
    "#bfef45", "#fabed4", "#469990", "#dcbeff", "#9a6324", "#fffac8", "#800000", "#aaffc3",
)
# Viridis in 16 steps, near (dark) to far (bright): ordered, and readable by the colour-blind.
HEAT = (
    "#440154", "#481a6c", "#472f7d", "#414487", "#39568c", "#31688e", "#2a788e", "#23888e",
    "#1f988b", "#22a884", "#35b779", "#54c568", "#7ad151", "#a5db36", "#d2e21b", "#fde725",
)
BANDS = len(HEAT)
NAME = "values"
# Half see-through when shown, so the map stays visible under the numbers' picture.
OPACITY = 0.7
_INT32 = np.iinfo(np.int32)


def values_paths(tileset_name: str, fmt: str) -> tuple[str, str]:
    """(tileset file, tilesheet) of the values tileset drawn at the tile size of the tileset
    `tileset_name`, beside it: a pack's maps drawn with one tileset share its bytes, and two
    tile sizes in one pack already need two tileset names."""
    stem = f"tilesets/{tileset_name}_{NAME}"
    return f"{stem}.{'tsx' if fmt == 'tmx' else 'tsj'}", f"{stem}.png"


@functools.cache
def values_tileset(tile_width: int, tile_height: int, image: str) -> tuple[Tileset, bytes]:
    """The values tileset (palette tiles 0-15, heat tiles 16-31) and its tilesheet PNG; made
    once per process, as every map of a pack writes the same one."""
    colors = [_rgb(c) for c in PALETTE + HEAT]
    sheet = np.zeros((2, tile_height, len(PALETTE), tile_width, 4), dtype=np.uint8)
    for k, rgb in enumerate(colors):
        sheet[k // 16, :, k % 16, :, :3] = rgb
    sheet[..., 3] = 255
    pixels = sheet.reshape(2 * tile_height, 16 * tile_width, 4)
    tileset = Tileset(
        name=NAME,
        tile_width=tile_width,
        tile_height=tile_height,
        margin=0,
        spacing=0,
        columns=16,
        rows=2,
        image=image,
        image_size=(16 * tile_width, 2 * tile_height),
    )
    return tileset, png_bytes(Image.fromarray(pixels, "RGBA"))


def data_layer(name: str, layer: np.ndarray, heat: bool, firstgid: int, compression: Compression) -> TileLayer:
    """The hidden tile layer of one Level layer: its picture as gids, its values as a property."""
    values = int32_values(name, layer)
    if heat:
        # Negative means unreached (a distance of -1): left empty.
        gids = np.zeros(values.shape, dtype=np.uint32)
        reached = values >= 0
        top = int(values.max(initial=0))
        bands = (values[reached].astype(np.int64) * BANDS) // (top + 1)
        gids[reached] = firstgid + BANDS + bands.astype(np.uint32)
    else:
        # 0 and below mean "no label" (walls): left empty. Worked in place on one array: a big
        # map's labels would otherwise pass through several 8-byte copies.
        gids = values.astype(np.uint32)
        gids -= 1  # a label of 0 or less wraps around here, and is cleared below
        gids %= len(PALETTE)
        gids += firstgid
        gids[values <= 0] = 0
    return TileLayer(name, gids, visible=False, locked=True, opacity=OPACITY, properties={"values": encode_values(values, compression)})


def int32_values(name: str, layer: np.ndarray) -> np.ndarray:
    """The layer as int32, or a PipelineError when its values do not fit one."""
    if layer.dtype == np.bool_:
        return np.asarray(layer, dtype=np.int32)  # no copy of a layer that is int32 already: it is only read
    if not np.issubdtype(layer.dtype, np.integer):
        raise PipelineError([f"layer {name!r} holds {layer.dtype} values: data layers are written as int32 (leave it out with data_layers)"])
    if layer.size and (int(layer.min()) < _INT32.min or int(layer.max()) > _INT32.max):
        raise PipelineError([f"layer {name!r} holds values outside int32 ({int(layer.min())}..{int(layer.max())})"])
    return np.asarray(layer, dtype=np.int32)  # no copy of a layer that is int32 already: it is only read


def encode_values(values: np.ndarray, compression: Compression = "none") -> str:
    """Base64 of the values as little-endian int32, row by row; compressed as asked."""
    return base64_bytes(memoryview(np.ascontiguousarray(values, dtype="<i4")).cast("B"), compression)


def decode_values(text: str, width: int, height: int, compression: str = "") -> np.ndarray:
    """What `encode_values` wrote, as an int32 H x W array (for tests and Python readers); a
    MapFileError for data that is not that."""
    raw = base64_data(text, compression, "values")
    if len(raw) != 4 * width * height:
        raise MapFileError(f"values: {len(raw)} bytes, not the map's {width} x {height} 4-byte numbers")
    return np.frombuffer(raw, dtype="<i4").astype(np.int32).reshape(height, width)


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
