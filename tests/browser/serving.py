"""The browser tests' shared setup: a real ``streamlit run`` on a free port, and Chromium.

One copy of what every file in ``tests/browser/`` needs (see
``shared/notes/browser-test.md`` for why it is set up this way): the Debian
Chromium's path and launch arguments, a server started on a free loopback
port and polled until ``/_stcore/health`` answers ``ok`` (stopped on exit,
failures included), and the wait for a script run to finish. Playwright is
imported only when a browser is launched, so a file can skip cleanly first
(:func:`require_browser`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("FLOWDROP_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(
    os.environ.get("FLOWDROP_SCREENSHOT_DIR")
    or Path(tempfile.gettempdir()) / "flowdrop-screenshots"
)
#: Chromium as root, headless, never dialling out.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Present once the page's script run has finished.
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def require_browser() -> ModuleType:
    """``playwright.sync_api``, or skip the calling test file saying what is missing."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright package is not installed"
    )
    if not Path(CHROMIUM).exists():
        pytest.skip(
            f"Chromium not found at {CHROMIUM} (install the Debian package 'chromium')",
            allow_module_level=True,
        )
    return sync_api


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def streamlit_executable() -> str:
    """This venv's ``streamlit`` (else whatever is on the PATH)."""
    return shutil.which("streamlit", path=str(Path(sys.executable).parent)) or "streamlit"


@contextlib.contextmanager
def run_streamlit(argv: list[str], port: int, env: dict[str, str]) -> Iterator[str]:
    """Run ``argv`` (a ``streamlit run`` on ``port``) in the repo root; its URL once healthy.

    Fails the test when the server exits or is not healthy within 60 s; the
    server is stopped on exit either way.
    """
    with run_streamlit_process(argv, port, env) as (url, _):
        yield url


@contextlib.contextmanager
def run_streamlit_process(
    argv: list[str], port: int, env: dict[str, str]
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """As :func:`run_streamlit`, also giving the server's process (to read its memory)."""
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("streamlit did not start")
            time.sleep(0.3)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def streamlit_argv(script: str, port: int, *options: str) -> list[str]:
    """``streamlit run SCRIPT`` headless on loopback at ``port``, no usage stats, plus ``options``."""
    return [
        streamlit_executable(),
        "run",
        script,
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        *options,
    ]


@contextlib.contextmanager
def serve(env: dict[str, str] | None = None) -> Iterator[str]:
    """A freshly started ``streamlit run app.py`` on a free port; its URL once healthy.

    ``env`` adds to the environment (the operator's configuration, e.g. its stores).
    """
    port = free_port()
    argv = streamlit_argv("app.py", port)
    with run_streamlit(argv, port, {**os.environ, **(env or {})}) as url:
        yield url


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """The system Chromium, headless, launched through Playwright and closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def new_page(browser: Any, width: int, height: int) -> Iterator[Any]:
    """A page in a fresh browser context of ``width`` x ``height`` (30 s default timeout)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        context.close()


def settle(page: Any) -> None:
    """Wait until the script run triggered by the last action has finished."""
    page.wait_for_timeout(400)
    page.wait_for_selector(IDLE, timeout=60_000)
