"""Real-browser test: the served inspector holds nothing for a visitor without the token.

The server runs as ``make run`` serves it behind a token (``streamlit run
serve.py``: the app behind its upload guard) with path entry on. A visitor
who never gives the token takes the session id from the page's websocket and
drives the upload endpoint from the page itself: every 19 MB upload is
refused, Streamlit's upload manager reports no bytes, and the server's RSS
stays flat. After the token, uploads are stored until the session's cap, and they
go once the closed tab's session has ended.
A request that came through a proxy (a forwarding header) is never offered
path entry, while the same server offers it to a direct loopback request.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import (
    ROOT,
    SHOTS,
    chromium,
    free_port,
    new_page,
    require_browser,
    run_streamlit_process,
    settle,
    streamlit_argv,
)

TOKEN = "team-secret-42"
#: What the server is started with (``make run``'s script).
SCRIPT = os.environ.get("FLOWDROP_SERVE_SCRIPT", "serve.py")
UPLOADS, UPLOAD_MB = 30, 19
#: The server's memory may grow this much while 30 x 19 MB are refused (MB).
FLAT_MB = 40
TOKEN_INPUT = "input[aria-label='Access token']"
#: The server's server.disconnectedSessionTTL (s): short, to see a session end.
TTL = 4
#: The folder the token server keeps uploads in (for links).
KEPT = Path(tempfile.mkdtemp(prefix="flowdrop-kept-token-"))
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

require_browser()

PUT_JS = """
async ([sids, n, size]) => {
  const m = document.cookie.match(/(?:^|; )_streamlit_xsrf=([^;]+)/);
  const headers = m ? {"X-Xsrftoken": decodeURIComponent(m[1])} : {};
  const blob = new Blob([new Uint8Array(size)]);
  const out = [];
  for (let i = 0; i < n; i++) {
    const sid = sids[i % sids.length];
    const body = new FormData();
    body.append("file", blob, "big.json");
    try {
      const r = await fetch(`/_stcore/upload_file/${sid}/${crypto.randomUUID()}`,
                            {method: "PUT", body, headers});
      out.push(r.status);
    } catch (e) {
      out.push(String(e));
    }
  }
  return out;
}
"""


def rss_mb(pid: int) -> float:
    """The process's resident memory (MB), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def upload_bytes_held(url: str) -> int:
    """The bytes Streamlit's upload manager holds, from its own metrics endpoint (which
    caches this figure for 5 s: wait that long first)."""
    time.sleep(5.5)
    with urllib.request.urlopen(f"{url}/_stcore/metrics?families=cache_memory_bytes") as resp:
        text = resp.read().decode()
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if "UploadedFileManager" in line and not line.startswith("#")
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from store_fixture import make_store_file

    store = make_store_file(tmp_path_factory.mktemp("team") / "buffers.sqlite3")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWDROP_")}
    env.update(
        FLOWDROP_TOKEN=TOKEN,
        FLOWDROP_STORE_PATHS="1",
        FLOWDROP_STORES=f"team={store}",
        FLOWDROP_UPLOAD_KEEP_DIR=str(KEPT),
    )
    argv = streamlit_argv(SCRIPT, port, "--server.disconnectedSessionTTL", str(TTL))
    with run_streamlit_process(argv, port, env) as (url, proc):
        yield url, proc.pid


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def open_with_session_ids(page: Any, url: str) -> list[str]:
    """Open the app and take the ids off its websocket's first message, as an attacker
    would (the session id is one of them; which one is found out after the token)."""
    frames: list[bytes] = []

    def on_socket(ws: Any) -> None:
        ws.on(
            "framereceived",
            lambda payload: frames.append(payload if isinstance(payload, bytes) else b""),
        )

    page.on("websocket", on_socket)
    page.goto(url)
    page.wait_for_selector(TOKEN_INPUT, timeout=60_000)  # the page asks; nothing else ran
    settle(page)
    found = [m.decode() for f in frames for m in UUID.findall(f) if m[14:15] == b"4"]
    assert found, "no ids on the websocket"
    return list(dict.fromkeys(found))


def give_token(page: Any) -> None:
    page.locator(TOKEN_INPUT).fill(TOKEN)
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)
    settle(page)


def test_uploads_without_the_token_store_nothing_and_memory_stays_flat(
    served: tuple[str, int], browser: Any
) -> None:
    url, pid = served
    with new_page(browser, 1280, 900) as page:
        ids = open_with_session_ids(page, url)
        assert page.locator(TOKEN_INPUT).count() == 1  # nothing ran
        before = rss_mb(pid)
        statuses = page.evaluate(PUT_JS, [ids, UPLOADS, UPLOAD_MB * 2**20])
        page.wait_for_timeout(2000)
        after = rss_mb(pid)
        held = upload_bytes_held(url)
        print(
            f"\nRSS {before:.0f} -> {after:.0f} MB over {UPLOADS} x {UPLOAD_MB} MB: {statuses[:3]}"
        )
        assert all(s == 403 or isinstance(s, str) for s in statuses), statuses
        assert held == 0
        assert after - before < FLAT_MB

        # The same session, once it has given the token: one of the ids taken is its id
        # (it was attacked above), and its uploads are stored up to the session's cap.
        give_token(page)
        assert page.locator(TOKEN_INPUT).count() == 0
        probes = {sid: page.evaluate(PUT_JS, [[sid], 1, 10])[0] for sid in ids}
        real = [sid for sid, status in probes.items() if status == 204]
        assert len(real) == 1, probes
        statuses = page.evaluate(PUT_JS, [real, 3, UPLOAD_MB * 2**20])
        assert statuses[:2] == [204, 204], statuses
        assert statuses[2] == 413, statuses  # two uploads of the largest size per session
        assert upload_bytes_held(url) >= 2 * UPLOAD_MB * 2**20
    # The tab is closed: once the session is past its TTL, its uploads are gone.
    time.sleep(TTL + 6)
    assert upload_bytes_held(url) == 0


def test_path_entry_is_offered_only_to_a_direct_loopback_request(
    served: tuple[str, int], browser: Any
) -> None:
    url, _ = served
    seen: dict[str, list[str]] = {}
    for how, headers in (("direct", {}), ("proxied", {"X-Forwarded-For": "203.0.113.9"})):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_extra_http_headers(headers)
        page = context.new_page()
        page.set_default_timeout(30_000)
        try:
            page.goto(f"{url}/store")
            page.wait_for_selector(TOKEN_INPUT, timeout=60_000)
            give_token(page)
            page.get_by_test_id("stSelectbox").first.click()
            seen[how] = [o.inner_text().strip() for o in page.get_by_role("option").all()]
            page.keyboard.press("Escape")
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"serving-store-{how}.png"), full_page=True)
        finally:
            context.close()
    assert any("type a SQLite path" in o for o in seen["direct"]), seen
    assert not any("type a SQLite path" in o for o in seen["proxied"]), seen


def test_a_token_without_the_guard_runs_no_page(browser: Any) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWDROP_")}
    env["FLOWDROP_TOKEN"] = TOKEN
    argv = streamlit_argv("app.py", port)  # the app without serve.py's upload guard
    with run_streamlit_process(argv, port, env) as (url, _), new_page(browser, 1280, 900) as page:
        page.goto(url)
        settle(page)
        assert "started without the upload guard" in page.inner_text("body")
        assert page.locator(TOKEN_INPUT).count() == 0  # not even the token is asked


def test_a_link_to_a_kept_upload_shows_nothing_of_it_without_the_token(
    served: tuple[str, int], browser: Any
) -> None:
    from inspector_ui.kept_uploads import UploadKeeper

    url, _ = served
    data = (ROOT / "sample_data" / "imports" / "openai_chat.json").read_bytes()
    digest = UploadKeeper(KEPT, max_bytes=2**30, max_age=3600).put("secret_recording.json", data)
    with new_page(browser, 1280, 900) as page:
        page.goto(f"{url}/replay?upload={digest}&rstep=5")
        page.wait_for_selector(TOKEN_INPUT, timeout=60_000)
        settle(page)
        body = page.inner_text("body")
        assert "secret_recording" not in page.content() and "step(s)" not in body
        assert page.get_by_test_id("stSlider").count() == 0
        give_token(page)  # the same link, once the token is given, opens the recording
        expect = require_browser().expect
        expect(
            page.get_by_text("Showing your upload secret_recording.json: 13 step(s)")
        ).to_be_visible()
        assert "rstep=5" in page.url and f"upload={digest}" in page.url
