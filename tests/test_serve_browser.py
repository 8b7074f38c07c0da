"""`pcg serve` end to end: the real CLI on a free local port, its pages in a real headless
Chromium (Debian's chromium + chromium-driver, which .ci/run installs), the recipe saved and
the page following, and the seed buttons writing the recipe as `pcg reroll`/`pcg pin` do."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from pipeline.recipe.pins import reroll_seed

from conftest import GALLERY_RECIPE

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None, reason="Chromium is not installed (apt-get install chromium chromium-driver; .ci/run does)"
)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")


# A level graph with a loop and a locked door: its maps carry door links, open and locked.
FLOORS_RECIPE = """\
[pack]
name = "floors"
seed = 3
maps = 1

[stage.floor]
use = "layout.graph"
nodes = [{ name = "in", role = "start" }, "a", "b", "c", { name = "vault", role = "treasure" }, { name = "out", role = "boss" }]
edges = [
  { from = "in", to = "a" }, { from = "a", to = "b" }, { from = "b", to = "c" }, { from = "c", to = "a" },
  { from = "b", to = "vault", lock = "gold" }, { from = "c", to = "out" },
]

[stage.tmx]
use = "export.tmx"
input = "floor"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=5) as r:
        return json.load(r)


def _settled(base: str, after: int = 0, timeout: float = 240) -> dict[str, Any]:
    """The server's state once a build past `after` has finished and none is running."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            state = _get(base, "/api/packs")
            if state["generation"] > after and state["building"] is None:
                return state
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError("the server did not finish a build in time")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("served")
    (root / "recipes").mkdir()
    (root / "recipes" / "tiny.toml").write_text(GALLERY_RECIPE)
    # A pack with no Tiled map or preview to show: a Lua export alone, without its preview.
    (root / "recipes" / "bare.toml").write_text(
        GALLERY_RECIPE.replace('name = "tiny"', 'name = "bare"').replace('use = "export.tmx"', 'use = "export.lua"\npreview = false')
    )
    (root / "recipes" / "floors.toml").write_text(FLOORS_RECIPE)
    port = _free_port()
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "serve", "recipes", "--port", str(port), "-j", "1"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _settled(base)
        yield base, root
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield driver
    driver.quit()


def _wait(driver: Any, test: Any, timeout: float = 10) -> Any:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # The page redraws itself after each build: an element looked at may be replaced meanwhile.
    ignored = (StaleElementReferenceException, NoSuchElementException)
    return WebDriverWait(driver, timeout, poll_frequency=0.02, ignored_exceptions=ignored).until(lambda d: test(d))


def _open_map(driver: Any, url: str) -> Any:
    """A map page, once its picture has loaded: its overlay canvas."""
    driver.get(url)
    _wait(driver, lambda d: d.find_element("id", "viewer").get_attribute("data-loaded") == "true")
    return driver.find_element("id", "overlay")


def _drawn(overlay: Any) -> set[str]:
    """The overlays the canvas has drawn."""
    return set(filter(None, overlay.get_attribute("data-drawn").split(",")))


def _lit(driver: Any) -> int:
    """How many pixels of the overlay canvas are painted."""
    return int(driver.execute_script(
        "const c = document.getElementById('overlay'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        "let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n;"
    ))


def _cards(driver: Any) -> list[Any]:
    return driver.find_elements("css selector", "#maps .card")


def test_pack_page_lists_every_map_with_stats(server: tuple[str, Path], browser: Any) -> None:
    base, root = server
    browser.get(f"{base}/pack/tiny")
    _wait(browser, lambda d: len(_cards(d)) == 3)
    manifest = json.loads((root / "exports" / "tiny" / "manifest.json").read_text())
    lengths = [m["stats"]["path_length"] for m in manifest["maps"]]
    shown = [int(c.find_element("css selector", 'dd[data-stat="path_length"]').text) for c in _cards(browser)]
    assert shown == lengths
    assert {h.get_attribute("data-stat") for h in browser.find_elements("css selector", ".hist")} >= {"path_length", "dead_ends", "nearest_tiles", "nearest_path"}
    # The pack's diversity (each map's nearest neighbour, on its card too) and playability.
    measures = browser.find_element("id", "measures").text
    assert "dist, tiles: nearest map" in measures and "% distinct" in measures and "dist: 3 of 3 maps can be finished" in measures
    assert all(0 < float(c.find_element("css selector", 'dd[data-stat="nearest_tiles"]').text) < 1 for c in _cards(browser))
    assert "[stage.maze]" in browser.find_element("id", "recipe").text
    # Sorted by a stat, descending; then filtered to a band of it.
    from selenium.webdriver.support.select import Select

    Select(browser.find_element("id", "sort")).select_by_value("path_length")
    Select(browser.find_element("id", "order")).select_by_value("desc")
    order = [int(c.find_element("css selector", 'dd[data-stat="path_length"]').text) for c in _cards(browser)]
    assert order == sorted(lengths, reverse=True)
    Select(browser.find_element("id", "filter-stat")).select_by_value("path_length")
    browser.find_element("id", "filter-min").send_keys(str(max(lengths)))
    _wait(browser, lambda d: len(_cards(d)) == lengths.count(max(lengths)))
    browser.find_element("id", "filter-min").clear()
    Select(browser.find_element("id", "filter-stat")).select_by_value("")
    Select(browser.find_element("id", "sort")).select_by_value("index")
    Select(browser.find_element("id", "order")).select_by_value("asc")


def test_map_page_overlays_toggle_and_zoom(server: tuple[str, Path], browser: Any) -> None:
    base, _ = server
    overlay = _open_map(browser, f"{base}/pack/tiny/map/1")
    drawn = lambda: _drawn(overlay)  # noqa: E731
    assert drawn() == {"objects", "paths"}
    browser.find_element("css selector", 'input[data-overlay="distance"]').click()
    assert drawn() == {"objects", "paths", "distance"}
    browser.find_element("css selector", 'input[data-overlay="objects"]').click()
    assert drawn() == {"paths", "distance"}
    # The distance overlay is really painted: its canvas has coloured pixels.
    assert _lit(browser) > 1000
    before = float(overlay.get_attribute("data-scale"))
    browser.find_element("id", "zoom-in").click()
    assert float(overlay.get_attribute("data-scale")) == pytest.approx(before * 1.25, rel=1e-2)
    props = {r.get_attribute("data-stat") for r in browser.find_elements("css selector", "#props tr")}
    assert {"path_length", "distance_max"} <= props
    assert browser.find_element("id", "seed").text == "5"
    assert "maze.backtracker v" in browser.find_element("id", "provenance").text


def test_a_level_graphs_door_links_are_an_overlay(server: tuple[str, Path], browser: Any) -> None:
    base, _ = server
    overlay = _open_map(browser, f"{base}/pack/floors/map/0")
    drawn = lambda: _drawn(overlay)  # noqa: E731
    assert {"objects", "links"} <= drawn()
    legend = browser.find_element("id", "legend").text
    assert "link" in legend and "locked link" in legend
    # With the objects off, what is left on the overlay is the links, and then nothing.
    browser.find_element("css selector", 'input[data-overlay="objects"]').click()
    assert "objects" not in drawn() and _lit(browser) > 100
    browser.find_element("css selector", 'input[data-overlay="links"]').click()
    assert "links" not in drawn() and _lit(browser) == 0
    # The maze pack has no doors: no links toggle.
    _open_map(browser, f"{base}/pack/tiny/map/0")
    assert not browser.find_elements("css selector", 'input[data-overlay="links"]')


def test_saving_the_recipe_updates_the_page(server: tuple[str, Path], browser: Any) -> None:
    base, root = server
    recipe = root / "recipes" / "tiny.toml"
    browser.get(f"{base}/pack/tiny")
    _wait(browser, lambda d: len(_cards(d)) == 3)
    generation = _get(base, "/api/packs")["generation"]
    # A broken recipe: the error on the page, naming file, stage and key; the last good maps stay.
    recipe.write_text(GALLERY_RECIPE.replace("cells = [6, 5]", "cells = [6, 0]"))
    _wait(browser, lambda d: d.find_element("id", "errors").is_displayed(), timeout=30)
    text = browser.find_element("id", "errors").text
    assert "tiny.toml" in text and "stage.maze.cells" in text
    assert len(_cards(browser)) == 3
    assert "failed" in browser.find_element("id", "status").get_attribute("class")
    generation = _settled(base, generation)["generation"]
    # Fixed, with one map more: the page shows four maps without a reload.
    saved = time.monotonic()
    recipe.write_text(GALLERY_RECIPE.replace("maps = 3", "maps = 4"))
    done = _settled(base, generation, timeout=60)
    built = time.monotonic()
    _wait(browser, lambda d: len(_cards(d)) == 4 and not d.find_element("id", "errors").is_displayed(), timeout=1.0)
    shown = time.monotonic()
    assert done["errors"] == {}
    print(f"saved -> built {built - saved:.2f} s, built -> on the page {shown - built:.2f} s")
    assert browser.find_element("css selector", 'body').get_attribute("data-rendered") == str(done["generation"])


def test_reroll_and_pin_from_the_page(server: tuple[str, Path], browser: Any) -> None:
    base, root = server
    recipe = root / "recipes" / "tiny.toml"
    generation = _settled(base, 0)["generation"]
    browser.get(f"{base}/pack/tiny/map/1")
    _wait(browser, lambda d: d.find_element("id", "seed").text == "5")
    browser.find_element("id", "reroll").click()
    seed = reroll_seed(1, 5, 1)
    _wait(browser, lambda d: d.find_element("id", "seed").text == str(seed), timeout=30)
    assert f"1 = {{ seed = {seed}, rerolls = 1 }}" in recipe.read_text()
    assert "re-rolled 1x" in browser.find_element("id", "pin-state").text
    _settled(base, generation)
    manifest = json.loads((root / "exports" / "tiny" / "manifest.json").read_text())
    assert manifest["maps"][1]["stages"]["maze"]["seed"][-1] == seed
    assert all(m["stages"]["maze"]["seed"][-1] == 5 for m in manifest["maps"] if m["index"] != 1)
    browser.get(f"{base}/pack/tiny/map/2")
    _wait(browser, lambda d: d.find_element("id", "pin-state").text == "follows the pack seed")
    browser.find_element("id", "pin").click()
    _wait(browser, lambda d: d.find_element("id", "pin-state").text == "pinned", timeout=30)
    assert "\n2 = 5\n" in recipe.read_text()


def test_the_page_renders_however_many_pages_were_left_before(server: tuple[str, Path], browser: Any) -> None:
    """Each page opens an event stream. A page left for another stays in the browser's
    back/forward cache: with its stream open, six such pages hold all six connections the
    browser allows to the server, and the next page's requests wait for ever."""
    base, _ = server
    for path in ["/", "/pack/tiny", "/pack/tiny/map/0", "/pack/tiny/map/1", "/pack/tiny/map/2", "/pack/bare", "/pack/bare/map/0", "/pack/bare/map/1", "/pack/tiny"]:
        browser.get(base + path)
        _wait(browser, lambda d: d.find_element("tag name", "body").get_attribute("data-rendered") not in (None, "", "-1"))
    browser.back()  # shown again from the cache: it reconnects, and a build still reaches it
    _wait(browser, lambda d: d.find_element("id", "status-text").text.startswith("up to date"))


def test_a_map_with_nothing_to_draw_says_so(server: tuple[str, Path], browser: Any) -> None:
    base, _ = server
    browser.get(f"{base}/pack/bare/map/0")
    _wait(browser, lambda d: d.find_element("css selector", "#viewer .empty").is_displayed())
    assert "No picture" in browser.find_element("css selector", "#viewer .empty").text
    # No request for a picture that is not there (the page once asked for /pack/bare/map/null).
    assert not [e for e in browser.get_log("browser") if "/null" in e["message"] or "picture" in e["message"]]


def test_the_live_server_refuses_paths_out_of_the_pack(server: tuple[str, Path]) -> None:
    base, root = server
    host, port = base.removeprefix("http://").split(":")
    for path in ("/files/tiny/../../etc/passwd", "/files/tiny/..%2f..%2f..%2fetc%2fpasswd", "/files/tiny/../../recipes/tiny.toml", "/static/../app.py"):
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        conn.request("GET", path)  # sent as written: no client-side clean-up of the dots
        r = conn.getresponse()
        body = r.read()
        conn.close()
        assert r.status in (400, 404), (path, r.status)
        assert b"root:" not in body and b"[pack]" not in body
