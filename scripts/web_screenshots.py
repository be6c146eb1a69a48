"""Screenshots of the web page for docs/serving.md, taken by the headless Chromium the browser tests use.

    python scripts/web_screenshots.py          # -> docs/images/web-*.png

Serves the embedded default with a trial index of the two test records (indexed with the shipped trial matcher,
``medlink[trials]``), then opens each page at desktop and phone width.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from medlink import Linker
from medlink.serve.app import create_app
from medlink.serve.settings import ServiceSettings
from medlink.trials.matching.matcher_spec import MatcherSpec

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
PORT = 8777
NOTE = (
    "A 64-year-old woman with type 2 diabetes mellitus treated with metformin, HbA1c 8.1 %, hypertension. "
    "No history of pancreatitis."
)
PAGES = {  # file -> (path, width, height, element to wait for)
    "web-link.png": ("/?q=heart+attack%0ACrohn%27s+dz%0Amyocardial+infarctoin%0Aasdfgh+qwerty", 1100, 1500, ".result"),
    "web-concept.png": ("/concept/MESH:D009203", 1100, 1300, "h1"),
    "web-link-phone.png": ("/?q=breast+ca", 390, 900, ".result"),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        index = Path(scratch) / "trial-index"
        subprocess.run(
            [sys.executable, "-m", "medlink", "trials", "index", str(ROOT / "tests/fixtures/trials"), "-o", str(index)],
            check=True,
        )
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(Linker.load(), ServiceSettings(), MatcherSpec(index).build()),
                host="127.0.0.1",
                port=PORT,
                log_level="warning",
            )
        )
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        try:
            for name, (path, width, height, ready) in PAGES.items():
                shoot(name, f"http://127.0.0.1:{PORT}{path}", width, height, ready)
            shoot("web-trials.png", f"http://127.0.0.1:{PORT}/trials", 1100, 1500, ".trial", note=NOTE)
        finally:
            server.should_exit = True


def shoot(name: str, url: str, width: int, height: int, ready: str, note: str | None = None) -> None:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--window-size={width},{height}",
        "--hide-scrollbars",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"))
    try:
        driver.get(url)
        if note is not None:
            driver.find_element(By.ID, "note").send_keys(note)
            driver.find_element(By.CSS_SELECTOR, "#match-form button[type=submit]").click()
        WebDriverWait(driver, 120).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ready)))
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})
        (OUT / name).write_bytes(base64.b64decode(shot["data"]))
        print(f"{OUT / name}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
