"""`pcg serve`'s HTTP API, through Starlette's TestClient: what it serves, what it refuses (paths
out of a pack, other hosts), and that only the pin/re-roll actions write the recipe."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (pip install -e '.[test]')")
from starlette.testclient import TestClient  # noqa: E402

from pipeline import api  # noqa: E402
from pipeline.building.manifest import Manifest, MapEntry, RecipeRecord  # noqa: E402
from pipeline.recipe.pins import reroll_seed  # noqa: E402
from pipeline.serve.app import Site, _listed, _preview_path, allowed_hosts, create_app  # noqa: E402
from pipeline.serve.hub import Hub  # noqa: E402

from conftest import GALLERY_RECIPE, child_pids  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("serve")
    (root / "recipes").mkdir()
    (root / "recipes" / "tiny.toml").write_text(GALLERY_RECIPE)
    result = api.build(root / "recipes", out=root / "exports", cache=root / ".pcg-cache", jobs=1)
    assert result.ok
    return root


@pytest.fixture
def served(built: Path, tmp_path: Path) -> tuple[TestClient, Path, list[Path]]:
    """A fresh copy of the project (tests change the recipe and the pack) and a client of it."""
    root = tmp_path / "p"
    shutil.copytree(built, root, symlinks=True)
    recipe = root / "recipes" / "tiny.toml"
    rebuilt: list[Path] = []
    site = Site(out=root / "exports", hub=Hub(), packs={"tiny": recipe}, rebuild=rebuilt.append)
    client = TestClient(create_app(site, allowed_hosts("127.0.0.1")), base_url="http://127.0.0.1:8000")
    return client, root, rebuilt


def test_pages_and_pack_json(served: tuple[TestClient, Path, list[Path]]) -> None:
    client, root, _ = served
    for page in ("/", "/pack/tiny", "/pack/tiny/map/2", "/static/app.js", "/static/style.css"):
        assert client.get(page).status_code == 200, page
    packs = client.get("/api/packs").json()
    assert [p["name"] for p in packs["packs"]] == ["tiny"] and packs["packs"][0]["maps"] == 3
    pack = client.get("/api/packs/tiny").json()
    assert [m["index"] for m in pack["maps"]] == [0, 1, 2]
    assert "path_length" in pack["stats"] and all("path_length" in m["stats"] for m in pack["maps"])
    assert pack["recipe_text"] == GALLERY_RECIPE
    for m in pack["maps"]:
        assert client.get(m["preview"]).status_code == 200
    assert client.get(pack["sheet"]).headers["content-type"] == "image/png"


def test_map_json_has_overlays_and_provenance(served: tuple[TestClient, Path, list[Path]]) -> None:
    client, root, _ = served
    m = client.get("/api/packs/tiny/maps/1").json()
    assert m["seed"] == "5" and m["pinned"] is None and m["maps"] == 3
    assert [s["kind"] for s in m["stages"]] == ["maze.backtracker", "place.spawn_exit", "regions.distance", "export.tmx"]
    assert {"numpy", "bit_generator", "tool_version"} <= set(m["versions"])
    # The distance layer's exact values, as the TMX's data layer holds them.
    distance = m["layers"]["distance"]
    w, h = m["info"]["tiles"]
    values = np.array(distance["values"]).reshape(h, w)
    assert distance["heat"] and distance["max"] == values.max() > 0
    assert {k[1] for k in m["info"]["markers"]} >= {"spawn", "exit"}
    assert m["info"]["inks"]["spawn"] == "#00e436" and set(m["info"]["inks"]) == {k[1] for k in m["info"]["markers"]}  # as previews draw them
    # The map drawn from its tileset, at the preview's size, with no marker baked in.
    picture = client.get(m["picture"])
    assert picture.status_code == 200
    preview = Image.open(root / "exports" / "tiny" / "previews" / "map_001.png")
    import io

    drawn = Image.open(io.BytesIO(picture.content))
    assert drawn.size == preview.size
    assert client.get("/api/packs/tiny/maps/9").status_code == 404
    assert client.get("/api/packs/other").status_code == 404


def test_a_damaged_data_layer_is_a_map_without_overlays_not_a_server_error(served: tuple[TestClient, Path, list[Path]]) -> None:
    client, root, _ = served
    tmx = root / "exports" / "tiny" / "map_001.tmx"
    text = tmx.read_text()
    assert text.count('name="values" value="') == 1
    start = text.index('name="values" value="') + len('name="values" value="')
    tmx.write_text(text[:start] + "AAAAAAAA" + text[text.index('"', start) :])  # two numbers, not a map's worth
    m = client.get("/api/packs/tiny/maps/1")
    assert m.status_code == 200 and m.json()["layers"] == {} and m.json()["picture"] is None


@pytest.mark.parametrize(
    "path",
    [
        "/files/tiny/../../etc/passwd",
        "/files/tiny/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/files/tiny/..%2f..%2f..%2fetc%2fpasswd",
        "/files/tiny/previews/..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/files/tiny/%2Fetc%2Fpasswd",
        "/files/..%2f..%2fetc/passwd",
        "/files/tiny/../../recipes/tiny.toml",
        "/files/tiny/..%2f..%2frecipes%2ftiny.toml",
        "/files/tiny/.pcg-cache",
        "/static/..%2f..%2fserve%2fapp.py",
        "/static/%2e%2e/app.py",
    ],
)
def test_paths_out_of_a_pack_are_refused(served: tuple[TestClient, Path, list[Path]], path: str) -> None:
    client, _, _ = served
    r = client.get(path)
    assert r.status_code in (400, 404), (path, r.status_code)
    assert b"root:" not in r.content and b"[pack]" not in r.content and b"starlette" not in r.content


def test_links_out_of_a_pack_are_refused(served: tuple[TestClient, Path, list[Path]]) -> None:
    client, root, _ = served
    secret = root / "secret.txt"
    secret.write_text("secret")
    listed = root / "exports" / "tiny" / "previews" / "map_002.png"
    listed.unlink()
    listed.symlink_to(secret)  # a file the manifest lists, now a link out of the pack
    r = client.get("/files/tiny/previews/map_002.png")
    assert r.status_code == 404 and b"secret" not in r.content
    # A pack folder that is itself a link is not served at all.
    os.rename(root / "exports" / "tiny", root / "elsewhere")
    (root / "exports" / "tiny").symlink_to(root / "elsewhere")
    assert client.get("/files/tiny/map_000.tmx").status_code == 404
    assert client.get("/api/packs/tiny").status_code == 404


def test_only_pin_and_reroll_write_the_recipe(served: tuple[TestClient, Path, list[Path]]) -> None:
    client, root, rebuilt = served
    recipe = root / "recipes" / "tiny.toml"
    for url in ("/", "/api/packs", "/api/packs/tiny", "/api/packs/tiny/maps/0", "/api/packs/tiny/maps/0/picture.png", "/files/tiny/manifest.json"):
        client.get(url)
        client.post(url, json={})
        client.put(url, json={})
    assert recipe.read_text() == GALLERY_RECIPE
    # Another site's page can send a form or text POST without asking: refused, nothing written.
    assert client.post("/api/packs/tiny/maps/1/reroll", content=b"x", headers={"Content-Type": "text/plain"}).status_code == 415
    assert client.post("/api/packs/tiny/maps/1/reroll").status_code == 415
    assert client.get("/api/packs/tiny/maps/1/reroll").status_code == 405
    assert client.post("/api/packs/tiny/maps/1/delete", json={}).status_code in (400, 404, 405)
    assert client.post("/api/packs/tiny/maps/7/pin", json={}).json()["ok"] is False
    assert client.post("/api/packs/../maps/1/pin", json={}).status_code == 404
    assert recipe.read_text() == GALLERY_RECIPE and rebuilt == []

    change = client.post("/api/packs/tiny/maps/1/reroll", json={}).json()
    seed = reroll_seed(1, 5, 1)
    assert change["ok"] and change["seed"] == str(seed) and change["rerolls"] == 1 and change["written"]
    assert f"1 = {{ seed = {seed}, rerolls = 1 }}" in recipe.read_text()
    assert client.post("/api/packs/tiny/maps/2/pin", json={}).json()["pinned"]
    assert "2 = 5" in recipe.read_text()
    assert client.post("/api/packs/tiny/maps/2/unpin", json={}).json()["pinned"] is False
    assert "2 = 5" not in recipe.read_text()
    assert rebuilt == [recipe] * 3

    # A seed of one's own, as `pcg pin --seed 42`; any other body is refused, not ignored.
    assert client.post("/api/packs/tiny/maps/2/pin", json={"seed": 42}).json()["seed"] == "42"
    assert "2 = 42" in recipe.read_text()
    for body in (b"not json", b'{"seed": "42"}', b'{"seed": true}', b'{"seeds": 1}', b"[1]", b'{"seed": -1}'):
        r = client.post("/api/packs/tiny/maps/3/pin", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["ok"] is False, body
    assert client.post("/api/packs/tiny/maps/3/reroll", json={"seed": 1}).json()["errors"] == ["reroll takes {} (unknown: seed)"]
    assert "3 =" not in recipe.read_text() and rebuilt == [recipe] * 4


FILTERED_RECIPE = """\
[pack]
name = "long"
seed = 5
maps = 3

[pack.seeds]
1 = 1625297241

[stage.maze]
use = "maze.backtracker"
cells = [5, 5]

[stage.long]
use = "filter"
input = "maze"
where = "diameter >= 20"

[stage.tmx]
use = "export.tmx"
input = "long"
"""


def test_a_filtered_map_shows_its_seed_not_the_filters_attempt(tmp_path: Path) -> None:
    """A map a filter made again has seed tuples (map, stage, seed, attempt): the page, the API
    and the sort by seed show the seed the recipe gives it, and the attempt apart."""
    recipe = tmp_path / "recipes" / "long.toml"
    recipe.parent.mkdir()
    recipe.write_text(FILTERED_RECIPE)
    assert api.build(recipe, out=tmp_path / "exports", cache=tmp_path / ".pcg-cache", jobs=1).ok
    manifest = json.loads((tmp_path / "exports" / "long" / "manifest.json").read_text())
    attempts = {e["index"]: e.get("attempt", 0) for e in manifest["maps"]}
    assert attempts[1] > 0, attempts  # the case at hand: a pinned map the filter made again
    site = Site(out=tmp_path / "exports", hub=Hub(), packs={"long": recipe}, rebuild=lambda _: None)
    client = TestClient(create_app(site, allowed_hosts("127.0.0.1")), base_url="http://127.0.0.1:8000")
    expected = {0: "5", 1: "1625297241", 2: "5"}
    cards = client.get("/api/packs/long").json()["maps"]
    assert {c["index"]: c["seed"] for c in cards} == expected
    assert {c["index"]: c["attempt"] for c in cards} == attempts
    for index, seed in expected.items():
        m = client.get(f"/api/packs/long/maps/{index}").json()
        assert (m["seed"], m["attempt"]) == (seed, attempts[index])


def test_other_hosts_are_refused(served: tuple[TestClient, Path, list[Path]]) -> None:
    client, _, _ = served
    # DNS rebinding: a name that resolves to 127.0.0.1 but is not ours.
    assert client.get("/api/packs", headers={"Host": "evil.example:8000"}).status_code == 400
    assert client.get("/api/packs", headers={"Host": "localhost:8000"}).status_code == 200


def test_hub_keeps_the_build_news() -> None:
    hub = Hub()
    hub.started("recipes/a.toml")
    hub.advanced("a", 1, 2)
    hub.line("error: recipes/a.toml: stage.x.keep: must be <= 1 (got 1.5)")
    hub.finished("recipes/a.toml", "a")
    state = hub.state()
    assert state["generation"] == 1 and state["building"] is None
    assert state["errors"] == {"recipes/a.toml": ["recipes/a.toml: stage.x.keep: must be <= 1 (got 1.5)"]}
    hub.started("recipes/a.toml")
    hub.finished("recipes/a.toml", "a")
    assert hub.state()["errors"] == {} and json.dumps(hub.state())


def test_a_port_in_use_is_one_clear_line(tmp_path: Path) -> None:
    import socket

    from pipeline.errors import PipelineError
    from pipeline.serve.server import serve
    from pipeline.building.workspace import Workspace

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        with pytest.raises(PipelineError) as err:
            serve([tmp_path], Workspace(tmp_path / "exports", tmp_path / "cache"), None, print, "127.0.0.1", port)  # type: ignore[arg-type]
    assert err.value.problems == [f"--port {port}: cannot listen on 127.0.0.1:{port} (Address already in use); is another server using it? Pick another with --port"]


def a_map(stem: str, files: dict[str, str]) -> MapEntry:
    """A manifest entry with these files, and nothing else of note."""
    return MapEntry(index=0, stem=stem, recipe="", environment="", stages={}, stats={}, files=files)


def test_the_files_served_are_the_maps_and_the_pack_files_the_manifest_lists() -> None:
    maps = (a_map("map_000", {"map_000.tmx": "a", "ldtk/world/map_000.ldtkl": "b"}),)
    manifest = Manifest(RecipeRecord("recipes/tiny.toml", "", "", {}, {}), maps, {}, pack_files={"ldtk/world.ldtk": "c"})
    assert _listed(manifest) == {"map_000.tmx", "ldtk/world/map_000.ldtkl", "ldtk/world.ldtk", "contact_sheet.png", "manifest.json", "levels.json"}


@pytest.mark.parametrize(
    ("files", "preview"),
    [
        (["map_000.tmx", "previews/map_000.png", "tilesets/stone.png"], "previews/map_000.png"),
        # An exporter's `dir` (LDtk's ldtk/previews/) or its own `preview_dir`.
        (["ldtk/world/map_000.ldtkl", "ldtk/previews/map_000.png", "tilesets/stone.png"], "ldtk/previews/map_000.png"),
        (["caves/map_000.ldtkl", "pv/map_000.png", "tilesets/map_001.png"], "pv/map_000.png"),
        (["lua/map_000.lua", "tilesets/stone.png"], None),
    ],
)
def test_a_maps_preview_is_found_wherever_its_exporter_put_it(files: list[str], preview: str | None) -> None:
    assert _preview_path(a_map("map_000", dict.fromkeys(files, "0" * 64))) == preview


def test_sigterm_stops_the_server_and_its_worker_processes(tmp_path: Path) -> None:
    """A service manager stops `pcg serve` with SIGTERM: no worker may outlive it."""
    import contextlib
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "tiny.toml").write_text(GALLERY_RECIPE)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "serve", "recipes", "--port", str(port), "-j", "2"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: list[int] = []
    try:
        end = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/packs", timeout=5) as r:
                    if json.load(r)["building"] is None:
                        break
            except OSError:
                pass
            assert time.monotonic() < end and proc.poll() is None, "the server did not come up"
            time.sleep(0.1)
        children += child_pids(proc.pid)
        assert len(children) >= 2, children  # the two build workers
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        end = time.monotonic() + 10
        while any(Path(f"/proc/{c}").exists() for c in children) and time.monotonic() < end:
            time.sleep(0.1)
        assert not [c for c in children if Path(f"/proc/{c}").exists()], "a worker process outlived the server"
    finally:
        proc.kill()
        for child in children:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)


def test_workers_keep_the_default_sigterm_whatever_the_server_installed() -> None:
    """The pool ends its workers with SIGTERM when one dies: a worker that inherited serve's
    Ctrl+C handler would not exit, and the pool's recovery would wait for it forever."""
    import signal

    from pipeline.building.executor import ProcessExecutor

    before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        executor = ProcessExecutor(2)
        try:
            handlers = {executor._pool.submit(signal.getsignal, signal.SIGTERM).result(timeout=30) for _ in range(4)}
        finally:
            executor.close()
    finally:
        signal.signal(signal.SIGTERM, before)
    assert handlers == {signal.SIG_DFL}


def test_ctrl_c_stops_the_server_mid_build_at_once(tmp_path: Path) -> None:
    """Ctrl+C while `pcg serve` builds two maps that would run for hours: its workers ignore the
    terminal's Ctrl+C (the build stops them), so the server must stop them itself rather than
    wait for the maps."""
    import signal
    import socket
    import subprocess
    import sys
    import time

    from test_faults import SPIN_RECIPE, wait_until_both_workers_run

    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "spin.toml").write_text(SPIN_RECIPE.format(steps=2**40))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "serve", "recipes", "--port", str(port), "-j", "2"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        workers = wait_until_both_workers_run(proc)
        start = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert time.monotonic() - start < 10, f"took {time.monotonic() - start:.1f} s\n{out}\n{err}"
        assert "Traceback" not in out + err, err
        assert not [w for w in workers if Path(f"/proc/{w}").exists()], "a worker process outlived the server"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
