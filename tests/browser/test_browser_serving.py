"""Real-browser test: the inspector served as ``make run`` serves it, attacked as a visitor.

The server is started with the command the Makefile's ``run`` target runs (read
with ``make -n run``: ``flowdrop-buffer inspect``, run with this venv's Python;
only the port and headless mode are added), with an
operator's configuration: one read-only SQLite store and a Redis URL holding a
password. The test shows it is not reachable on a non-loopback address, the
Store page offers only those two stores and never shows the password, a typed
path is refused, browsing the read-only store leaves its folder byte-identical,
and an upload survives a page switch and a reload. Screenshots at 1280 px go
to ``FLOWDROP_SCREENSHOT_DIR`` (or a temporary folder).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving import (
    ROOT,
    SHOTS,
    chromium,
    free_port,
    new_page,
    require_browser,
    run_streamlit,
    settle,
)

SECRET = "s3cretPW"
#: The folder this server keeps uploads in (for links).
KEPT = Path(tempfile.mkdtemp(prefix="flowdrop-kept-serving-"))
NAV = ".st-key-nav a[data-testid='stPageLink-NavLink']"

playwright_sync = require_browser()
if shutil.which("make") is None:
    pytest.skip("make is not installed", allow_module_level=True)


def make_run_command() -> list[str]:
    """The ``flowdrop-buffer inspect`` line of ``make run``, with this venv's Python."""
    out = subprocess.run(
        ["make", "--no-print-directory", "-n", "-W", "pyproject.toml", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(ln for ln in out.splitlines() if "flowdrop-buffer inspect" in ln)
    return [sys.executable, "-m", "flowdrop_core", *shlex.split(line)[1:]]


def non_loopback_addresses() -> list[str]:
    """This machine's addresses other than loopback (IPv4 and IPv6)."""
    found = set()
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None):
            found.add(str(info[4][0]))
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        found.update(
            subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
        )
    return sorted(a for a in found if not a.startswith("127.") and a not in ("::1", ""))


def folder_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from store_fixture import make_store_file

    path = make_store_file(tmp_path_factory.mktemp("team") / "buffers.sqlite3")
    for extra in path.parent.iterdir():  # as a runtime leaves it after closing
        if extra != path:
            shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
    return path


@pytest.fixture(scope="module")
def served(store_file: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    command = make_run_command()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FLOWDROP_", "STREAMLIT_SERVER_ADDRESS"))
    }
    env.update(
        FLOWDROP_STORES=f"team={store_file}",
        FLOWDROP_REDIS_URL=f"redis://:{SECRET}@127.0.0.1:9/0",
        FLOWDROP_UPLOAD_KEEP_DIR=str(KEPT),
    )
    argv = [*command, "--headless", "--port", str(port)]
    with run_streamlit(argv, port, env) as url:
        yield url, port


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser):
    with new_page(browser, 1280, 900) as page:
        yield page


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def test_not_reachable_on_a_non_loopback_address(served: tuple[str, int]) -> None:
    _, port = served
    addresses = non_loopback_addresses()
    if not addresses:
        pytest.skip("this machine has no non-loopback address to try")
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family) as sock:
            sock.settimeout(2)
            assert sock.connect_ex((address, port)) != 0, f"reachable on {address}:{port}"
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        pass  # and it is there on loopback


def test_the_store_page_offers_only_configured_stores_and_no_password(served, page) -> None:
    url, _ = served
    page.goto(f"{url}/store")
    settle(page)
    picker = page.get_by_test_id("stSelectbox").first
    picker.click()
    options = [o.inner_text().strip() for o in page.get_by_role("option").all()]
    assert options == ["FLOWDROP_REDIS_URL · Redis · read-only", "team · file · read-only"]
    assert SECRET not in page.content() and "127.0.0.1:9" not in page.content()
    assert "buffers.sqlite3" not in page.content()  # a visitor sees names, not paths
    shot(page, "serving-store-picker.png")
    page.keyboard.press("Escape")
    assert page.locator("input[aria-label^='Store: a SQLite file']").count() == 0
    # Connecting to the Redis entry fails (nothing listens there): the error shows no password.
    picker.click()
    page.get_by_role("option").first.click()
    settle(page)
    assert page.get_by_test_id("stAlert").count() >= 1
    assert SECRET not in page.content()


def test_a_typed_path_is_refused(served, page, tmp_path: Path) -> None:
    url, _ = served
    sys.path.insert(0, str(ROOT / "tests"))
    from store_fixture import make_store_file

    other = make_store_file(tmp_path / "private.sqlite3")
    page.goto(f"{url}/store?store={other}")
    settle(page)
    assert "Typing a path or URL is off" in page.get_by_test_id("stAlert").first.inner_text()
    assert page.get_by_test_id("stDataFrame").count() == 0
    shot(page, "serving-store-refused.png")


def test_browsing_the_read_only_store_leaves_it_untouched(served, page, store_file) -> None:
    url, _ = served
    before = folder_state(store_file.parent)
    page.goto(f"{url}/store?store=team")
    settle(page)
    expect = playwright_sync.expect
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    assert "3 slot(s), sqlite store, read-only." in page.inner_text("body")
    page.get_by_role("tab", name="Journal").click()
    settle(page)
    shot(page, "serving-store-team.png")
    assert folder_state(store_file.parent) == before  # byte-identical, no -shm, no .locks/


def test_an_upload_survives_a_page_switch_and_a_reload(served, page) -> None:
    url, _ = served
    page.goto(f"{url}/replay")
    settle(page)
    data = ROOT / "sample_data" / "imports" / "openai_chat.json"
    copy = Path(tempfile.mkdtemp()) / "my_recording.json"
    copy.write_bytes(data.read_bytes())
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(copy))
    expect = playwright_sync.expect
    shown = page.get_by_text("my_recording.json: 13 step(s)")
    expect(shown).to_be_visible(timeout=60_000)
    # A page switch through the navigation bar (the same Streamlit session) ...
    page.locator(
        ".st-key-nav a[data-testid='stPageLink-NavLink']", has_text="Spec examples"
    ).first.click()
    settle(page)
    page.locator(".st-key-nav a[data-testid='stPageLink-NavLink']", has_text="Replay").first.click()
    expect(shown).to_be_visible(timeout=60_000)
    expect(page.get_by_text("kept on this server: a copied link reopens it")).to_be_visible()
    shot(page, "serving-replay-kept-upload.png")
    # ... and a reload (a new Streamlit session from the same browser).
    page.reload()
    expect(shown).to_be_visible(timeout=60_000)


def step_in_url(page) -> int:
    found = re.search(r"[?&]rstep=(\d+)", page.url)
    assert found, page.url
    return int(found.group(1))


def test_a_link_reopens_an_upload_at_a_findings_step_and_a_page_switch_keeps_it(
    served, browser
) -> None:
    from inspector_ui.kept_uploads import UploadKeeper

    url, _ = served
    expect = playwright_sync.expect
    copy = Path(tempfile.mkdtemp()) / "long_recording.jsonl"
    copy.write_bytes((ROOT / "sample_data" / "long_conversation.jsonl").read_bytes())
    with new_page(browser, 1280, 900) as page:
        page.goto(f"{url}/replay")
        settle(page)
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(copy))
        shown = page.get_by_text("Showing your upload long_recording.jsonl:")
        expect(shown).to_be_visible(timeout=60_000)
        settle(page)
        newest = step_in_url(page)
        combo = page.get_by_role("combobox", name="Go to a finding")
        combo.click()
        page.get_by_role("option").nth(1).click()
        settle(page)
        step = step_in_url(page)
        assert 0 < step < newest, page.url  # a finding's step, not where the upload opened
        link = page.url
        assert re.search(r"[?&]upload=[0-9a-f]{64}", link), link
        page.locator(NAV, has_text="Spec examples").first.click()
        settle(page)
        page.locator(NAV, has_text="Replay").first.click()
        expect(shown).to_be_visible(timeout=60_000)
        settle(page)
        assert step_in_url(page) == step  # the place survives a page switch
        shot(page, "serving-replay-link.png")
    with new_page(browser, 1280, 900) as fresh:  # a colleague's browser
        fresh.goto(link)
        expect(fresh.get_by_text("Showing your upload long_recording.jsonl:")).to_be_visible(
            timeout=60_000
        )
        settle(fresh)
        assert step_in_url(fresh) == step
        slider = fresh.get_by_role("slider", name="Step (travel through the timeline)")
        assert slider.get_attribute("aria-valuetext") == str(step)  # the page is at that step
    digest = re.search(r"upload=([0-9a-f]{64})", link).group(1)  # type: ignore[union-attr]
    UploadKeeper(KEPT, max_bytes=2**30, max_age=3600).drop(digest)  # evicted
    with new_page(browser, 1280, 900) as gone:
        gone.goto(link)
        settle(gone)
        expect(gone.get_by_text("This recording is no longer kept on this server")).to_be_visible()
        assert "step(s)" not in gone.inner_text("body")  # no other recording in its place
        assert gone.get_by_test_id("stSlider").count() == 0


def test_no_request_leaves_the_server_and_an_oversized_upload_is_named(served, page) -> None:
    from inspector_ui.registry import PAGES

    url, _ = served
    outside: list[str] = []
    page.on(
        "request",
        lambda r: None if r.url.startswith((url, "data:", "blob:")) else outside.append(r.url),
    )
    for spec in PAGES:
        page.goto(f"{url}/{spec.url_path}" if spec.url_path else url)
        settle(page)
        page.wait_for_timeout(500)
    assert outside == []
    page.goto(f"{url}/replay")
    settle(page)
    big = Path(tempfile.mkdtemp()) / "too_big.json"
    big.write_bytes(b"[" + b" " * 21_000_000 + b"]")  # over server.maxUploadSize (20 MB)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(big))
    playwright_sync.expect(page.get_by_test_id("stAlert").first).to_have_text(
        "errortoo_big.json was not uploaded: it is 21.0 MB (21,000,002 bytes), over the 20 MB "
        "limit (20,971,520 bytes). The page shows the sample openai_chat.json, not this file.",
        timeout=30_000,
    )
    settle(page)
    assert "Showing the sample openai_chat.json:" in page.inner_text("body")  # not the big file
    assert outside == []


def test_store_and_learn_links_reopen_their_place(served, browser) -> None:
    url, _ = served
    expect = playwright_sync.expect
    with new_page(browser, 1280, 900) as page:
        page.goto(f"{url}/store")
        settle(page)
        page.get_by_test_id("stSelectbox").first.click()
        page.get_by_role("option", name="team · file · read-only").click()
        settle(page)
        page.get_by_role("tab", name="Journal").click()
        settle(page)
        store_link = page.url
        page.goto(f"{url}/learn_mem14")
        settle(page)
        page.get_by_role("button", name="Next").click()
        settle(page)
        title = page.get_by_role("heading", level=3).first.inner_text()
        learn_link = page.url
    assert "store=team" in store_link and "s_tab=Journal" in store_link, store_link
    assert "slot=" in store_link and "s_step=" in store_link, store_link
    with new_page(browser, 1280, 900) as fresh:
        fresh.goto(store_link)
        settle(fresh)
        expect(fresh.get_by_role("tab", name="Journal", selected=True)).to_be_visible()
        assert fresh.url == store_link
        fresh.goto(learn_link)
        settle(fresh)
        assert fresh.get_by_role("heading", level=3).first.inner_text() == title
