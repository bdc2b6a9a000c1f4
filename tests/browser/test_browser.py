"""Real-browser test: Playwright drives the system Chromium against ``streamlit run app.py``.

It appends MEM-14's full-window example through the playground's own inputs
(window 3, three messages, then a fourth), reads the metrics off the page,
and saves screenshots of the timeline and of every page to a temporary
folder, or to ``FLOWDROP_SCREENSHOT_DIR`` (``make screenshots`` points it at
``docs/screenshots/``, so a plain test run leaves the tree clean). Skips with
a reason where Chromium or Playwright is missing. See
``shared/notes/browser-test.md`` for why it is set up this way.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving import (
    IDLE,
    ROOT,
    SHOTS,
    chromium,
    new_page,
    require_browser,
    serve,
    settle,
)

from inspector_ui.registry import PAGES

NAV_LINK = ".st-key-nav a[data-testid='stPageLink-NavLink']"

playwright_sync = require_browser()
expect = playwright_sync.expect


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser):
    with new_page(browser, 1400, 1000) as page:
        yield page


def metric_values(page) -> dict[str, str]:
    out: dict[str, str] = {}
    for metric in page.locator("[data-testid='stMetric']").all():
        label = metric.locator("[data-testid='stMetricLabel']").inner_text().strip()
        value = metric.locator("[data-testid='stMetricValue']").inner_text().strip()
        out.setdefault(label, value)
    return out


def append_text(page, text: str) -> None:
    box = page.locator("[data-testid='stTextArea'] textarea").first
    box.fill(text)
    box.press("Control+Enter")  # commit the text
    settle(page)
    page.get_by_role("button", name="Append", exact=True).click()
    settle(page)


def shot(page, name: str) -> Path:
    """A screenshot of the whole page: Streamlit scrolls inside its main block, so the
    viewport is grown to the content's height first (capped), then restored."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    size = page.viewport_size
    height = size["height"]
    for _ in range(4):  # content may grow as the viewport does (lazy grids, charts)
        needed = page.evaluate(
            "Math.max(...[...document.querySelectorAll('[data-testid=stMain], "
            "[data-testid=stSidebarContent]')].map(e => e.scrollHeight), 0)"
        )
        needed = min(max(needed + 40, size["height"]), 6000)
        if needed <= height:
            break
        height = needed
        page.set_viewport_size({"width": size["width"], "height": height})
        page.wait_for_timeout(700)
    page.wait_for_timeout(2500)  # a resize can rerun the page and re-mount buttons and grids
    page.wait_for_selector(IDLE, timeout=60_000)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path


def test_mem14_full_window_through_the_ui(server, page):
    page.goto(server)
    settle(page)
    window = page.get_by_label("Window size (max_messages)", exact=True).and_(
        page.get_by_test_id("stNumberInputField")
    )
    window.fill("3")
    window.press("Enter")
    settle(page)
    first = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
    ]
    append_text(page, json.dumps(first))
    expect(page.locator("[data-testid='stMetricValue']").first).to_have_text("3")
    append_text(page, json.dumps({"role": "user", "content": "four"}))
    expect(page.locator("[data-testid='stMetricValue']").nth(1)).to_have_text("1")

    values = metric_values(page)
    assert values["count"] == "3"
    assert values["appended"] == "1"
    assert values["appended_any"] == "true"
    assert page.locator("[data-testid='stException']").count() == 0
    assert "window=3" in page.url  # the settings live in the URL

    table = page.locator("[data-testid='stDataFrame']").first
    expect(table).to_be_visible()
    path = shot(page, "playground-timeline.png")
    assert path.stat().st_size > 10_000


def test_screenshots_of_every_page(server, page):
    page.goto(f"{server}/?scenario=mem-3-heal-on-user-turn")
    settle(page)
    page.get_by_role("tab", name="Step before / after").click()
    settle(page)
    shot(page, "playground-step-detail.png")
    page.get_by_role("tab", name="Provider view").click()
    settle(page)
    shot(page, "playground-provider-view.png")

    page.goto(f"{server}/replay")
    settle(page)
    expect(page.locator("[data-testid='stAlert']").first).to_contain_text("step(s)")
    shot(page, "replay.png")

    page.goto(f"{server}/spec_examples")
    settle(page)
    expect(page.get_by_text("examples pass.")).to_be_visible()
    assert page.get_by_text("All ").count() >= 1
    shot(page, "spec-examples.png")

    page.goto(f"{server}/learn_mem14")
    settle(page)
    page.get_by_role("button", name="Append", exact=True).click()
    settle(page)
    values = [v.inner_text() for v in page.locator("[data-testid='stMetricValue']").all()]
    assert values == ["3", "1", "true", "appended"]
    page.get_by_role("button", name="Next", exact=True).click()
    settle(page)
    page.get_by_role("button", name="Append", exact=True).click()
    settle(page)
    values = [v.inner_text() for v in page.locator("[data-testid='stMetricValue']").all()]
    assert values == ["2", "0", "false", "dropped"]
    shot(page, "learn-mem14.png")
    assert page.locator("[data-testid='stException']").count() == 0


def test_no_spec_table_hides_a_column_at_1280_px(browser, server):
    """Every table of every rule's spec cards fits the 1280 px page: no horizontal scroll."""
    from inspector_ui.samples import group_by_rule, sample_scenarios

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        for rule in group_by_rule(sample_scenarios()):
            page.goto(f"{server}/spec_examples?rule={rule}")
            expect(page.locator("[data-testid='stDataFrame']").first).to_be_visible(timeout=60_000)
            settle(page)
            widths = page.evaluate(
                "[...document.querySelectorAll(\"[data-testid='stDataFrame'] .dvn-scroller\")]"
                ".map(s => [s.scrollWidth, s.clientWidth])"
            )
            assert widths, rule
            assert all(scroll <= client + 1 for scroll, client in widths), (rule, widths)
            if rule == "MEM-7":
                shot(page, "spec-examples-mem7.png")
        assert page.locator("[data-testid='stException']").count() == 0
    finally:
        page.close()


def nav_labels(page) -> list[str]:
    """The page links of the navigation bar, in order."""
    links = page.locator(f"{NAV_LINK}:visible [data-testid='stMarkdownContainer']")
    return [link.inner_text().strip() for link in links.all()]


@pytest.mark.parametrize("spec", PAGES, ids=[p.key for p in PAGES])
def test_deep_link_is_the_first_request_to_a_fresh_server(browser, spec):
    """No legacy sidebar listing pages/ files, the right page at once."""
    with serve() as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(30_000)
        try:
            page.goto(f"{url}/{spec.url_path}")
            settle(page)
            expect(page.locator("h1").first).to_have_text(spec.title)
            expect(page.locator(f"{NAV_LINK}:visible")).to_have_count(len(PAGES))
            settle(page)
            assert page.locator("[data-testid='stSidebarNav']").count() == 0
            assert page.locator("[data-testid='stSidebarNavLink']").count() == 0
            assert nav_labels(page) == [p.title for p in PAGES]
            assert page.locator("[data-testid='stException']").count() == 0
            text = page.locator("[data-testid='stApp']").inner_text()
            for helper in ("common", "playground_state", "app_pages", "inspector_ui"):
                assert helper not in text
            assert page.url.rstrip("/") == f"{url}/{spec.url_path}".rstrip("/") or (
                page.url.startswith(f"{url}/{spec.url_path}?")
            )
            if spec.key == "replay":
                shot(page, "deep-link-replay.png")
            # The navigation bar then leads to every other page.
            other = PAGES[-1] if spec is not PAGES[-1] else PAGES[0]
            page.locator(f"{NAV_LINK}:visible", has_text=other.title).click()
            settle(page)
            expect(page.locator("h1").first).to_have_text(other.title)
        finally:
            context.close()


def test_store_page_browses_a_file_and_replays_its_journal(page, tmp_path):
    """The Store page over a SQLite file with three slots and a journal, configured by the
    operator (visitors pick configured stores; they cannot type a path)."""
    from store_fixture import make_store_file

    path = make_store_file(tmp_path / "buffers.sqlite3")
    with serve({"FLOWDROP_STORES": f"team={path}"}) as server:
        _browse_the_store(page, server)


def _browse_the_store(page, server: str) -> None:
    page.goto(f"{server}/store?store=team")
    settle(page)
    expect(page.get_by_text("3 slot(s), sqlite store, read-only.")).to_be_visible()
    page.get_by_role("tab", name="Journal").click()
    settle(page)
    expect(page.get_by_text("Records 1..9 replayed")).to_be_visible()
    assert page.locator("[data-testid='stException']").count() == 0
    # the window of 4 after the ninth record (waits for the tab's metrics to render)
    expect(page.locator("[data-testid='stMetricValue']:visible").first).to_have_text("4")
    assert metric_values(page)["count"] == "4"
    shot(page, "store-journal.png")
    page.get_by_role("tab", name="Buffer").click()
    settle(page)
    assert page.locator("[data-testid='stChatMessage']:visible").count() == 4
    page.get_by_role("tab", name="Write").click()
    settle(page)
    expect(page.get_by_text("Read-only. Switch on")).to_be_visible()
    shot(page, "store.png")


# --------------------------------------------------------------------------- hostile data

EVIL_HOST = "127.0.0.1:9"
#: Every Markdown / HTML / auto-link trick at once, with blank lines to break out of spans.
HOSTILE = (
    "HOSTILE`\n\n![img](http://127.0.0.1:9/p.png)\n\n**BOLD** _ITALIC_ "
    "[link](http://127.0.0.1:9/l) <b>HTMLB</b> http://127.0.0.1:9/auto "
    "www.example.org x@example.org :red[RED]\n# HEADING\n    indented\n\n> quote"
)
MARKUP_FROM_DATA = ", ".join(
    [
        f"img[src*='{EVIL_HOST}']",
        f"a[href*='{EVIL_HOST}']",
        "a[href*='example.org']",
        "a[href^='mailto:']",
        "strong:has-text('BOLD')",
        "b:has-text('BOLD')",
        "b:has-text('HTMLB')",
        "em:has-text('ITALIC')",
        "h1:has-text('HEADING')",
        "blockquote:has-text('quote')",
        "span:has-text('RED')[class*='red']",
    ]
)


def hostile_conversation() -> list[dict]:
    """An agent exchange whose ids, contents and names are all HOSTILE."""
    return [
        {"role": "user", "content": HOSTILE},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": HOSTILE,
                    "type": "function",
                    "function": {"name": HOSTILE, "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": HOSTILE, "content": HOSTILE},
        {"role": "tool", "tool_call_id": HOSTILE, "content": HOSTILE},
    ]


def assert_no_markup_from_data(page, requests: list[str]) -> None:
    """Nothing of HOSTILE became an element or a request; it is on the page as text."""
    page.wait_for_timeout(500)
    found = page.locator(MARKUP_FROM_DATA)
    assert found.count() == 0, [
        found.nth(k).evaluate(
            "e => e.outerHTML + ' in ' + e.closest('[data-testid]:not([data-testid=stMarkdownContainer])')"
            "?.getAttribute('data-testid')"
        )
        for k in range(min(3, found.count()))
    ]
    assert [u for u in requests if EVIL_HOST in u] == []
    assert page.locator("[data-testid='stException']").count() == 0
    assert "**BOLD**" in page.locator("[data-testid='stApp']").inner_text()


def test_hostile_ids_names_and_contents_never_become_markup(server, browser):
    """Data is never markup, in the real browser: Playground (sidebar, paste, every tab) and Replay."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    requests: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    try:
        page.goto(server)
        settle(page)
        for label in ("Session id", "User id", "Session owner"):
            box = page.get_by_label(label, exact=True)
            box.fill(HOSTILE.replace("\n", " "))
            box.press("Enter")
            settle(page)
        append_text(page, json.dumps(hostile_conversation()))
        for tab in ("Timeline", "Step before / after", "Provider view"):
            page.get_by_role("tab", name=tab).click()
            settle(page)
            assert_no_markup_from_data(page, requests)

        page.goto(f"{server}/replay")
        settle(page)
        upload = page.locator("[data-testid='stFileUploaderDropzoneInput']")
        name = "**BOLD** [l](http://127.0.0.1:9/f) ![i](http://127.0.0.1:9/i.png).json"
        payload = json.dumps({"messages": hostile_conversation()}).encode()
        upload.set_input_files(
            files=[{"name": name, "mimeType": "application/json", "buffer": payload}]
        )
        settle(page)
        expect(page.locator("[data-testid='stAlert']").first).to_contain_text("step(s)")
        for tab in ("Step before / after", "Provider view"):
            page.get_by_role("tab", name=tab).click()
            settle(page)
            assert_no_markup_from_data(page, requests)
        shot(page, "hostile-replay.png")
        # A file that fails to import quotes its name and the problem in an error box.
        upload.set_input_files(
            files=[{"name": name, "mimeType": "application/json", "buffer": b'{"x": "**BOLD**'}]
        )
        settle(page)
        expect(page.locator("[data-testid='stAlert']").first).to_contain_text("Cannot replay")
        assert_no_markup_from_data(page, requests)
    finally:
        context.close()


def test_a_one_megabyte_word_does_not_freeze_the_page(server, page, tmp_path):
    """A 1 MB one-word message is clipped in every view; the page stays usable."""
    word = "x" * 1_000_000
    payload = json.dumps(
        [{"role": "user", "content": word}, {"role": "assistant", "content": word}]
    )
    page.goto(f"{server}/replay")
    settle(page)
    started = time.monotonic()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": "long.json", "mimeType": "application/json", "buffer": payload.encode()}]
    )
    settle(page)
    expect(page.locator("[data-testid='stAlert']").first).to_contain_text("2 step(s)")
    longest_js = (
        "Math.max(...[...document.querySelectorAll('[data-testid=stApp] *')]"
        ".map(e => e.childElementCount ? 0 : (e.textContent || '').length))"
    )
    for tab in ("Step before / after", "Provider view", "Timeline"):
        page.get_by_role("tab", name=tab).click()
        settle(page)
        # Nothing on the page holds the whole word; the step tab offers it whole.
        assert page.evaluate(longest_js) < 20_000, tab
        if tab == "Step before / after":
            expect(page.get_by_text("characters clipped").first).to_be_visible()
            expect(page.get_by_role("button", name="Whole content").first).to_be_visible()
    elapsed = time.monotonic() - started
    assert elapsed < 45, f"the page took {elapsed:.0f} s"


def test_a_long_replay_shows_progress_and_can_be_cancelled(server, page):
    """A replay of a large upload shows its progress and stops on Cancel."""
    spec = importlib.util.spec_from_file_location(
        "gen", ROOT / "scripts" / "gen_long_conversation.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen"] = gen
    spec.loader.exec_module(gen)
    # 90,000 messages (about 13 MB, under the 20 MB cap and the 100,000-message replay
    # budget of a session), replayed with the whole run re-fired (180,000 steps), so the
    # replay is still running when its progress is looked for even on an idle machine.
    payload = gen.render(gen.generate(90_000)).encode()
    page.goto(f"{server}/replay?r_refire=steps")
    settle(page)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": "big.jsonl", "mimeType": "application/jsonl", "buffer": payload}]
    )
    expect(page.get_by_text(re.compile("^Replaying"))).to_be_visible(timeout=60_000)
    page.get_by_role("button", name="Cancel").click()
    settle(page)
    expect(page.get_by_text("Replay of big.jsonl cancelled.")).to_be_visible()
    assert page.locator("[data-testid='stMetric']").count() == 0  # no timeline was kept
    assert page.locator("[data-testid='stException']").count() == 0
    page.get_by_role("button", name="Replay it").click()
    expect(page.get_by_text(re.compile("^Replaying"))).to_be_visible(timeout=60_000)
    page.get_by_role("button", name="Cancel").click()  # leave the shared server idle
    settle(page)
    expect(page.get_by_text("Replay of big.jsonl cancelled.")).to_be_visible()
