"""The gallery's web application (Starlette): pages, the JSON they draw from, the pack files,
the live event stream, and the pin/re-roll actions.

Safety, since a browser on the same machine can reach it:
- files: only those a pack's manifest lists (its maps' and pack files, its contact sheet, index
  and manifest), and only when the real path stays inside the pack folder (no `../`, no link out);
- writes: the pin, re-roll and unpin actions alone, through `pipeline.recipe.pins`, to the recipe that
  builds the pack (never a path from the request); they take JSON only, so another site's page
  cannot send them (a cross-origin JSON POST needs a CORS permission this server never gives);
- hosts: only requests addressed to the bound host or localhost (no DNS rebinding).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import tomli
from PIL import Image
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from pipeline.building.builder import PACK_FILES
from pipeline.building.contact_sheet import CONTACT_SHEET
from pipeline.errors import PipelineError
from pipeline.building.manifest import MANIFEST, Manifest, MapEntry, read_manifest
from pipeline.seeds import map_seed
from pipeline.serve.hub import Hub
from pipeline.serve.mapfile import data_layers, inside, picture, read_map
from pipeline.tiled.markers import PreviewInfo, colour
from pipeline.tiled.read.error import MapFileError

STATIC = Path(__file__).parent / "static"
# Seconds between keep-alive comments on the event stream: a closed page is noticed by then.
PING_S = 15.0


@dataclass
class Site:
    """What the application serves: the exports folder, the packs of the recipes served (pack
    name -> recipe file, kept while a recipe is broken so its last good maps stay on show), the
    build's news, and a way to ask for a rebuild."""

    out: Path
    hub: Hub
    packs: dict[str, Path] = field(default_factory=dict)
    rebuild: Callable[[Path], None] = lambda recipe: None
    cache: Path | None = None  # the build cache, where the maps' Levels are measured (diversity)
    _pictures: dict[tuple[str, str], bytes] = field(default_factory=dict)
    _measured: dict[str, tuple[str, Any]] = field(default_factory=dict)  # pack -> (its maps' keys, measures)

    def measures(self, pack: str, m: Manifest) -> Any:
        """The pack's diversity and playability (pipeline.building.measures) for the maps the
        manifest lists: as the manifest records them, else measured once per build of them."""
        from pipeline.building.cache import LevelCache
        from pipeline.building.measures import from_record, made_of, pack_measures, recorded_at, threshold_of

        if self.cache is None:
            return from_record(recorded_at(m, threshold_of(m)) or {})
        built = json.dumps(made_of(m))
        if self._measured.get(pack, ("", None))[0] != built:
            self._measured[pack] = (built, pack_measures(m, LevelCache(self.cache), threshold_of(m))[0])
        return self._measured[pack][1]

    def folder(self, pack: str) -> Path:
        if pack not in self.packs:
            raise HTTPException(404, f"no pack {pack!r} is served")
        folder = self.out / pack
        if folder.is_symlink() or not (folder / MANIFEST).is_file():
            raise HTTPException(404, f"pack {pack!r} is not built yet")
        return folder

    def manifest(self, pack: str) -> Manifest:
        m = read_manifest(self.folder(pack) / MANIFEST)
        if m is None:
            raise HTTPException(503, f"pack {pack!r}: its manifest does not read now (missing, damaged, or of another format)")
        return m


def create_app(site: Site, hosts: list[str] | None = None) -> Starlette:
    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def packs(request: Request) -> Response:
        out = []
        for name, recipe in sorted(site.packs.items()):
            built = (site.out / name / MANIFEST).is_file()
            maps = len(site.manifest(name).maps) if built else 0
            out.append({"name": name, "recipe": _shown(recipe), "built": built, "maps": maps, "sheet": _url(name, CONTACT_SHEET, site) if built else None})
        return JSONResponse({"packs": out, **site.hub.state()})

    async def pack(request: Request) -> Response:
        name = request.path_params["pack"]
        m = site.manifest(name)
        seeds = _seeds(m)
        maps = [_card(name, entry, seeds) for entry in m.maps]
        # Off the event loop: the first page after a build reads every map's Level.
        measured = await run_in_threadpool(site.measures, name, m)
        # Each map's distance to its nearest neighbour, as a stat of its card: the page sorts,
        # filters and draws a histogram of it as of any stat. Of the first stage measured.
        first = next(iter(measured.values()), None)
        by_index = sorted(range(len(m.maps)), key=lambda k: m.maps[k].index)
        for spread in first.spreads if first is not None else ():
            for k, nearest in zip(by_index, spread.nearest):
                maps[k]["stats"] = {**maps[k]["stats"], f"nearest_{spread.measure}": round(nearest, 4)}
        stats = sorted({k for e in maps for k, v in e["stats"].items() if isinstance(v, (int, float)) and not isinstance(v, bool)})
        return JSONResponse({
            "name": name,
            "description": m.pack.get("description", ""),
            "recipe": _shown(site.packs[name]),
            "recipe_text": m.recipe.text,
            "seed": str(m.pack["seed"]),
            "maps": maps,
            "stats": stats,
            "sheet": _url(name, CONTACT_SHEET, site, m),
            "versions": _versions(m),
            "errors": site.hub.state()["errors"].get(str(site.packs[name]), []),
            "diversity": {stage: {sp.measure: sp.summary() for sp in found.spreads} for stage, found in measured.items() if found.spreads},
            "playability": {stage: {"solvable": found.solvable, "maps": found.judged} for stage, found in measured.items() if found.judged},
        })

    async def one_map(request: Request) -> Response:
        name = request.path_params["pack"]
        m = site.manifest(name)
        entry = _entry(m, request.path_params["index"])
        folder = site.folder(name)
        files = entry.files
        main = _map_file(entry)
        preview = _preview_path(entry)
        info = _preview_info(folder, preview) if preview else None
        layers: dict[str, Any] = {}
        if main:
            try:
                parsed = await asyncio.to_thread(read_map, folder, main)
                heat = {h for s in m.stages.values() for h in s["params"].get("heat_layers", []) if isinstance(h, str)}
                for key, values in data_layers(parsed).items():
                    layers[key] = {"heat": key in heat, "max": int(values.max(initial=0)), "values": values.ravel().tolist()}
            except MapFileError:
                main = None
        return JSONResponse({
            "pack": name,
            **_card(name, entry, _seeds(m)),
            "maps": len(m.maps),
            "stages": [{"name": s, "kind": m.stages[s]["kind"], "version": m.stages[s]["version"], "key": v.key} for s, v in entry.stages.items()],
            "versions": _versions(m),
            "files": [{"path": f, "url": _url(name, f, site, m)} for f in files],
            "picture": f"/api/packs/{name}/maps/{entry.index}/picture.png?v={files.get(main, '')[:16]}" if main else None,
            "gifs": [_url(name, f, site, m) for f in files if f.endswith(".gif")],
            "info": info,
            "layers": layers,
        })

    async def map_picture(request: Request) -> Response:
        name = request.path_params["pack"]
        m = site.manifest(name)
        entry = _entry(m, request.path_params["index"])
        main = _map_file(entry)
        if main is None:
            raise HTTPException(404, "this map has no Tiled file to draw")
        key = (name, entry.files[main])
        if key not in site._pictures:
            folder = site.folder(name)
            try:
                site._pictures[key] = await asyncio.to_thread(lambda: picture(folder, read_map(folder, main)))
            except MapFileError as exc:
                raise HTTPException(404, str(exc)) from None
        return Response(site._pictures[key], media_type="image/png", headers={"Cache-Control": "no-cache"})

    async def pack_file(request: Request) -> Response:
        name = request.path_params["pack"]
        relative = request.path_params["path"]
        m = site.manifest(name)
        if relative not in _listed(m):
            raise HTTPException(404, f"{relative!r} is not a file of pack {name!r}")
        try:
            path = inside(site.folder(name), relative)
        except MapFileError as exc:
            raise HTTPException(404, str(exc)) from None
        if not path.is_file():
            raise HTTPException(404, f"{relative!r} is not there now")
        return FileResponse(path, headers={"Cache-Control": "no-cache"})

    async def seed_action(request: Request) -> Response:
        from pipeline.recipe import pins

        name = request.path_params["pack"]
        action = request.path_params["action"]
        acts = {"pin": pins.pin, "reroll": pins.reroll, "unpin": pins.unpin}
        if action not in acts:
            raise HTTPException(404, f"no action {action!r} (pin, reroll, unpin)")
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise HTTPException(415, "send JSON (Content-Type: application/json)")
        if name not in site.packs:
            raise HTTPException(404, f"no pack {name!r} is served")
        recipe = site.packs[name]
        index = request.path_params["index"]
        # The body is the action's arguments: `{}`, or for pin `{"seed": N}` (as `pcg pin --seed`).
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return JSONResponse({"ok": False, "errors": ['the body is not JSON: send {} or, to pin a seed, {"seed": 42}']}, status_code=400)
        allowed = {"seed"} if action == "pin" else set()
        if not isinstance(body, dict) or set(body) - allowed:
            takes = '{} or {"seed": N}' if allowed else "{}"
            unknown = ", ".join(sorted(set(body) - allowed)) if isinstance(body, dict) else ""
            return JSONResponse({"ok": False, "errors": [f"{action} takes {takes}" + (f" (unknown: {unknown})" if unknown else "")]}, status_code=400)
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            return JSONResponse({"ok": False, "errors": [f"seed: must be a whole number (got {json.dumps(seed)})"]}, status_code=400)
        act = functools.partial(acts[action], seed=seed) if action == "pin" else acts[action]
        try:
            change = await asyncio.to_thread(act, recipe, index)
        except PipelineError as exc:
            return JSONResponse({"ok": False, "errors": exc.problems}, status_code=400)
        if change.written:
            site.rebuild(recipe)
        return JSONResponse({"ok": True, **change.__dict__, "before": str(change.before), "seed": str(change.seed)})

    async def events(request: Request) -> Response:
        queue = site.hub.listen()

        async def stream() -> AsyncIterator[str]:
            try:
                yield _sse(site.hub.state())
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), PING_S)
                    except TimeoutError:
                        yield ": ping\n\n"
                        continue
                    if event is None:
                        return
                    yield _sse(event)
            finally:
                site.hub.leave(queue)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def not_found(request: Request, exc: HTTPException) -> Response:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    routes = [
        Route("/", page),
        Route("/pack/{pack}", page),
        Route("/pack/{pack}/map/{index:int}", page),
        Route("/api/packs", packs),
        Route("/api/packs/{pack}", pack),
        Route("/api/packs/{pack}/maps/{index:int}", one_map),
        Route("/api/packs/{pack}/maps/{index:int}/picture.png", map_picture),
        Route("/api/packs/{pack}/maps/{index:int}/{action:str}", seed_action, methods=["POST"]),
        Route("/api/events", events),
        Route("/files/{pack}/{path:path}", pack_file),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=hosts)] if hosts else []
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={HTTPException: not_found})
    return app


def allowed_hosts(host: str) -> list[str]:
    """The Host headers the server answers: its own address, and localhost when bound there."""
    local = {"127.0.0.1", "localhost", "::1", "[::1]"}
    if host in local:
        return sorted(local)
    if host in ("0.0.0.0", "::"):  # bound everywhere on purpose: any name that reaches it
        return ["*"]
    return sorted({host, *local})


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _sse(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"


def _entry(m: Manifest, index: int) -> MapEntry:
    for entry in m.maps:
        if entry.index == index:
            return entry
    raise HTTPException(404, f"the pack has no map {index}")


def _card(pack: str, entry: MapEntry, seeds: dict[str, Any]) -> dict[str, Any]:
    """What the pack page shows of a map, and the map page too."""
    return {
        "index": entry.index,
        "stem": entry.stem,
        "stats": entry.stats,
        "seed": _seed(entry),
        "attempt": entry.attempt,
        "pinned": seeds.get(str(entry.index)),
        "preview": _preview_url(pack, entry),
    }


def _seed(entry: MapEntry) -> str | None:
    """The map's seed, from any stage's seed tuple (map, stage, seed[, attempt]): a map a filter
    made again has its attempt last, which is no seed. Seeds go to the page as text: they pass
    2**53, past which a JavaScript number is not exact."""
    for stage in entry.stages.values():
        if (seed := map_seed(stage.seed)) is not None:
            return str(seed)
    return None


def _seeds(m: Manifest) -> dict[str, Any]:
    """[pack.seeds] of the recipe the pack was built from: which maps are pinned or re-rolled."""
    try:
        seeds = tomli.loads(m.recipe.text).get("pack", {}).get("seeds", {})
    except (tomli.TOMLDecodeError, AttributeError):
        return {}
    if not isinstance(seeds, dict):
        return {}
    return {k: ({**v, "seed": str(v.get("seed"))} if isinstance(v, dict) else str(v)) for k, v in seeds.items()}


def _versions(m: Manifest) -> dict[str, Any]:
    return dict(m.environment)


def _listed(m: Manifest) -> set[str]:
    files = {f for entry in m.maps for f in entry.files}
    return files | set(m.pack_files) | PACK_FILES


def _map_file(entry: MapEntry) -> str | None:
    stem = entry.stem
    for f in entry.files:
        if f.endswith((".tmx", ".tmj")) and Path(f).stem == stem:
            return f
    return next((f for f in entry.files if f.endswith((".tmx", ".tmj"))), None)


def _preview_path(entry: MapEntry) -> str | None:
    """The map's picture among its files: a preview (`previews/`, or an exporter's `dir` or
    `preview_dir`: `ldtk/previews/`), else any PNG named after the map (`export.png`'s)."""
    pngs = sorted(f for f in entry.files if f.endswith(".png") and Path(f).stem == entry.stem)
    ranked = sorted(pngs, key=lambda f: (f.split("/")[0] != "previews", "previews" not in f.split("/")[:-1]))
    return ranked[0] if ranked else None


def _preview_url(pack: str, entry: MapEntry) -> str | None:
    preview = _preview_path(entry)
    return f"/files/{pack}/{preview}?v={entry.files[preview][:16]}" if preview else None


def _preview_info(folder: Path, preview: str) -> dict[str, Any] | None:
    try:
        with Image.open(inside(folder, preview)) as im:
            info = PreviewInfo.from_text(im.info.get(PreviewInfo.KEY))
    except (OSError, ValueError, MapFileError):
        return None
    if info is None:
        return None
    # Each type's colour as the preview draws it: the page's overlay then agrees with the picture.
    inks = {m.type: "#{:02x}{:02x}{:02x}".format(*colour(m.type)[:3]) for m in info.markers}
    return {"tiles": info.tiles, "tile": info.tile, "step": info.step, "markers": [m.to_json() for m in info.markers], "inks": inks}


def _url(pack: str, relative: str, site: Site, m: Manifest | None = None) -> str:
    version = ""
    if m is not None:
        for entry in m.maps:
            if relative in entry.files:
                version = f"?v={entry.files[relative][:16]}"
                break
        if relative == CONTACT_SHEET:
            shown = json.dumps([e.files for e in m.maps], sort_keys=True).encode()
            version = f"?v={hashlib.sha256(shown).hexdigest()[:16]}"
    return f"/files/{pack}/{relative}{version}"
