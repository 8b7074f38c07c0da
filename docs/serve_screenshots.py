"""Take the README's screenshots of `pcg serve` (docs/img/serve_pack.png, serve_map.png).

Runs the real `pcg serve` on an example recipe in a temporary project and photographs its
pages in headless Chromium (Debian's chromium + chromium-driver, and selenium from the test
extra). Not part of docs/make_images.py's byte-compare: browser rendering is not byte-stable.

    python docs/serve_screenshots.py [RECIPE]      # default: recipes/torchlit.toml
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"


def main() -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    recipe = sys.argv[1] if len(sys.argv) > 1 else "recipes/torchlit.toml"
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copytree(ROOT / "recipes", project / "recipes")
        shutil.copytree(ROOT / "tilesets", project / "tilesets")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([sys.executable, "-m", "pipeline", "serve", recipe, "--port", str(port)], cwd=project)
        base = f"http://127.0.0.1:{port}"
        options = webdriver.ChromeOptions()
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,860"):
            options.add_argument(arg)
        options.binary_location = shutil.which("chromium") or "chromium"
        driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
        try:
            pack = _wait_built(base)
            driver.get(f"{base}/pack/{pack}")
            time.sleep(1.5)
            driver.save_screenshot(str(IMG / "serve_pack.png"))
            driver.get(f"{base}/pack/{pack}/map/0")
            time.sleep(1.0)
            for box in driver.find_elements("css selector", "input[data-overlay]"):
                if box.get_attribute("data-overlay") not in ("objects", "paths") and not box.is_selected():
                    box.click()
                    break
            time.sleep(0.5)
            driver.save_screenshot(str(IMG / "serve_map.png"))
        finally:
            driver.quit()
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)
    print(f"wrote {IMG / 'serve_pack.png'} and {IMG / 'serve_map.png'}")


def _wait_built(base: str) -> str:
    for _ in range(2400):
        try:
            with urllib.request.urlopen(f"{base}/api/packs", timeout=5) as r:
                state = json.load(r)
            if state["generation"] and state["building"] is None and state["packs"] and state["packs"][0]["built"]:
                return str(state["packs"][0]["name"])
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("pcg serve did not build the pack in time")


if __name__ == "__main__":
    main()
