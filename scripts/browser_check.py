"""Load a running inspector's first page in the real browser and check it rendered.

    python scripts/browser_check.py URL [--screenshot PATH]

Used by ``scripts/check_install.sh`` against an installed
``flowdrop-buffer inspect``: Debian's Chromium driven by Playwright (see
``shared/notes/browser-test.md``). The first page (the Playground) must
finish its run without an exception and show the inspector's own navigation
bar, not Streamlit's sidebar list (so the app's settings travelled with it);
then the Replay page, reached through that bar, must render its sample list
(so ``pages/`` and the sample data resolve from the installed package).
Exit 0 when all holds, 1 with the reason otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("FLOWDROP_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
NAV_LINK = ".st-key-nav a[data-testid='stPageLink-NavLink']"


def _settle(page: Any) -> None:
    page.wait_for_timeout(400)
    page.wait_for_selector(IDLE, timeout=60_000)


def _no_exception(page: Any, where: str) -> None:
    errors = page.locator("[data-testid='stException']")
    if errors.count():
        raise AssertionError(f"{where}: the page shows an exception: {errors.first.inner_text()}")


def check(url: str, screenshot: Path | None) -> None:
    """Raise AssertionError saying what is wrong with the inspector at ``url``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            page.goto(url)
            # The page is idle before its first run starts too: wait for what the run draws.
            page.wait_for_selector(NAV_LINK, timeout=60_000)
            _settle(page)
            _no_exception(page, "first page")
            if screenshot:
                page.wait_for_timeout(1500)  # let the widgets draw over their placeholders
                page.screenshot(path=str(screenshot), full_page=True)
            links = page.locator(NAV_LINK)
            # A link's text is its icon's ligature name, then its title.
            texts = [t.strip() for t in links.all_inner_texts()]
            if not any(t.endswith("Replay") for t in texts):
                raise AssertionError(f"first page: no navigation bar with Replay (links: {texts})")
            if page.locator("[data-testid='stSidebarNav']").count():
                raise AssertionError("first page: Streamlit's own page list shows (settings lost)")
            print("first page: rendered, with the inspector's navigation bar")
            links.filter(has_text="Replay").first.click()
            page.wait_for_url("**/replay")
            page.get_by_text("pick a sample from sample_data/").first.wait_for(timeout=60_000)
            _settle(page)
            _no_exception(page, "Replay")
            if not page.get_by_text("pick a sample from sample_data/").count():
                raise AssertionError("Replay: the sample picker is missing")
            print("Replay: rendered with its samples")
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("url")
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args()
    try:
        check(args.url, args.screenshot)
    except Exception as exc:  # a failed check, or Playwright's timeout naming what it waited for
        print(f"browser check failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
