"""Files an export stage makes once per pack from the maps the manifest lists
(`Exporter.pack_files`): an index of the maps' files, such as the LDtk project that lists every
level file. The manifest records their digests, so a recipe that stops making one removes it."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from pipeline.building.manifest import Manifest
from pipeline.fsio import sha256_bytes, sha256_file, write_if_changed
from pipeline.recipe.model import Recipe
from pipeline.registry import Exporter, PackContext


def update_pack_files(
    pack_dir: Path, recipe: Recipe, manifest: Manifest, recorded: dict[str, str], force: bool = False, temp_dir: Path | None = None
) -> tuple[dict[str, str], list[str]]:
    """Let every export stage write its pack files from the maps the manifest lists (in map
    order), skipping files whose bytes are already on disk. `recorded` is the sha256 of each
    pack file as the last build wrote it: one that differs on disk was edited since, and is made
    again, as a map's edited file is. Returns the sha256 of every pack file the recipe's stages
    have on disk now, for the manifest (a later build that no longer makes one removes it,
    unless it was edited since), and the edited files made again."""
    digests: dict[str, str] = {}
    restored: list[str] = []
    # What every pack file holds on disk before any is written, read once: whether it was
    # edited since (two exporters may share one, and the second must not take the first's new
    # bytes for an edit), and (when it stays as it is) its digest for the manifest.
    before = _on_disk(pack_dir, recipe)
    every = {path: digest for entry in manifest.maps for path, digest in entry.files.items()}
    for spec in recipe.exporters:
        exporter = cast(Exporter, spec.params)
        if type(exporter).pack_files is Exporter.pack_files:
            continue
        edited = _edited({rel: before[rel] for rel in exporter.pack_outputs()}, recorded)
        maps = []
        for entry in sorted(manifest.maps, key=lambda m: m.index):
            stage = entry.stages.get(spec.name)
            if stage is not None and stage.files:
                maps.append((entry.index, entry.stem, {f: entry.files[f] for f in stage.files if f in entry.files}))
        ctx = PackContext(pack_dir=pack_dir, pack=recipe.pack.name, seed=recipe.pack.seed, maps=maps, files=every, rewrite=force or bool(edited))
        made = exporter.pack_files(ctx)
        restored += [rel for rel in edited if rel in made and rel not in restored]  # a shared one, made again once
        for rel, data in made.items():
            digests[rel] = sha256_bytes(data)
            write_if_changed(pack_dir / rel, data, temp_dir)
        for rel in exporter.pack_outputs():
            digest = before[rel]
            if rel not in digests and digest is not None:  # current already (or no map to list)
                digests[rel] = digest
    return dict(sorted(digests.items())), restored


def edited_pack_files(pack_dir: Path, recipe: Recipe, recorded: dict[str, str]) -> list[str]:
    """The pack files on disk that differ from what the last build wrote (`recorded`)."""
    return _edited(_on_disk(pack_dir, recipe), recorded)


def _on_disk(pack_dir: Path, recipe: Recipe) -> dict[str, str | None]:
    """The sha256 of each pack file of the recipe's exporters on disk (None: not there), each
    once however many exporters make it."""
    paths = dict.fromkeys(rel for spec in recipe.exporters for rel in cast(Exporter, spec.params).pack_outputs())
    return {rel: sha256_file(pack_dir / rel) for rel in paths}


def _edited(on_disk: dict[str, str | None], recorded: dict[str, str]) -> list[str]:
    return [rel for rel, digest in on_disk.items() if rel in recorded and digest not in (None, recorded[rel])]
