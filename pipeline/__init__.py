"""pcg-pipeline: TOML recipes in, Tiled level packs out."""

__version__ = "0.1.0"
