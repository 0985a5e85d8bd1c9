"""Screenshots of the built leaderboard for reviewers (``make leaderboard-shots``; not committed).

Builds the repository's ``registry/`` into ``SITE`` and saves, at a desktop size
(1400 x 1000) and a phone size (390 x 844), a full-page PNG of the index, one entry page
and one task page in headless Debian Chromium::

    python tools/leaderboard_shots.py [--board leaderboard-shots/board] [--out leaderboard-shots]

Needs ``chromium`` and ``chromedriver`` (Debian's ``chromium`` and ``chromium-driver``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

REPO = Path(__file__).resolve().parents[1]
SIZES = {"desktop": (1400, 1000), "phone": (390, 844)}
ENTRY = "probebench/verb-grammar-smollm2-135m-l15-v2"
TASK = "verb_grammar"


def _driver(width: int, height: int, profile: Path) -> WebDriver:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--hide-scrollbars", f"--window-size={width},{height}",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def shoot(board: Path, out: Path, pages: dict[str, str]) -> list[Path]:
    """One full-page PNG per page and size; returns the files written."""
    written = []
    out.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        with tempfile.TemporaryDirectory() as profile:
            driver = _driver(width, height, Path(profile))
            try:
                for name, rel in pages.items():
                    driver.set_window_size(width, height)
                    driver.get((board / rel).as_uri())
                    full = driver.execute_script("return document.documentElement.scrollHeight")
                    # the whole page, capped so a long page stays a readable image
                    driver.set_window_size(width, min(int(full) + 140, 6000))
                    path = out / f"{name}-{size}.png"
                    driver.save_screenshot(str(path))
                    written.append(path)
            finally:
                driver.quit()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "leaderboard-shots")
    parser.add_argument("--board", type=Path, default=None,
                        help="an already built leaderboard (default: build registry/ into "
                             "OUT/board)")
    args = parser.parse_args(argv)
    board = args.board.resolve() if args.board else None
    if board is None:
        from probebench.leaderboard.build import build_leaderboard
        from probebench.tasks.catalog import TaskCatalog

        board = (args.out / "board").resolve()
        build_leaderboard(REPO / "registry", board, catalog=TaskCatalog.for_repo(REPO))
    from probebench.leaderboard.build import page_name

    pages = {"index": "index.html", "entry": page_name(ENTRY), "task": f"tasks/{TASK}.html"}
    for path in shoot(board, args.out, pages):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
