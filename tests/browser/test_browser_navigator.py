"""Real browser (system Chromium): the decision navigator, a session through its URL, compare.

The navigator in the real browser: jumping with next / previous
to a duplicate in ``long_conversation.jsonl``, and a Playground session
round-tripped through its URL in a new page; plus the navigator's and the
compare view's screenshots (``make screenshots`` writes them to
``docs/screenshots/``). The server, browser and screenshot helpers are the
ones of ``test_browser.py``.
"""

from __future__ import annotations

import json
import re

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from test_browser import browser, expect, page, server, settle, shot  # noqa: F401


def metric(page, label: str) -> str:  # noqa: F811
    for m in page.locator("[data-testid='stMetric']").all():
        if m.locator("[data-testid='stMetricLabel']").inner_text().strip() == label:
            return m.locator("[data-testid='stMetricValue']").inner_text().strip()
    raise AssertionError(f"no metric {label!r}")


def step_in_url(page) -> int:  # noqa: F811
    found = re.search(r"[?&]rstep=(\d+)", page.url)
    assert found, page.url
    return int(found.group(1))


def test_next_and_previous_jump_to_duplicates_in_the_long_recording(server, page):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(f"{server}/replay?r_sample=long_conversation.jsonl")
    settle(page)
    expect(page.locator("[data-testid='stAlert']").first).to_contain_text("5002 step(s)")
    pill = page.locator("button").filter(has_text=re.compile(r"^duplicate result · 67$"))
    following = page.get_by_role("button", name="Next duplicate result")
    pill.click()
    settle(page)
    try:  # a click that lands while the page re-renders the pills is lost (once in ~3 suites)
        following.wait_for(state="visible", timeout=20_000)
    except PlaywrightTimeoutError:
        pill.click()  # the filter is still off (no "Next duplicate result"): choose it again
        settle(page)
    expect(following).to_be_visible()
    box = page.get_by_label("Go to step", exact=True).and_(
        page.get_by_test_id("stNumberInputField")
    )
    box.fill("1")
    box.press("Enter")
    settle(page)
    assert step_in_url(page) == 1
    page.get_by_role("button", name="Next duplicate result").click()
    settle(page)
    first = step_in_url(page)
    expect(page.get_by_text(f"Step {first} is duplicate result step 1 of 67.")).to_be_visible()
    page.get_by_role("button", name="Next duplicate result").click()
    settle(page)
    second = step_in_url(page)
    assert second > first
    expect(page.get_by_text(f"Step {second} is duplicate result step 2 of 67.")).to_be_visible()
    page.get_by_role("button", name="Previous duplicate result").click()
    settle(page)
    assert step_in_url(page) == first
    assert metric(page, "appended") == "0"  # a dropped duplicate appends nothing
    # The timeline fits a 1280 px window: no horizontal scrolling, no hidden column.
    scroller = page.locator("[data-testid='stDataFrame'] .dvn-scroller").first
    widths = scroller.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert widths[0] <= widths[1] + 1, widths
    assert page.locator("[data-testid='stException']").count() == 0
    shot(page, "navigator.png")


def test_a_playground_session_round_trips_through_its_url(server, browser, page):  # noqa: F811
    page.goto(server)
    settle(page)
    box = page.locator("[data-testid='stTextArea'] textarea").first
    for i in range(1, 4):
        box.fill(json.dumps({"role": "user", "content": f"m{i}"}))
        box.press("Control+Enter")
        settle(page)
        page.get_by_role("button", name="Append", exact=True).click()
        settle(page)
    assert metric(page, "count") == "3"
    link = page.url
    assert "appends=1." in link, link
    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = other.new_page()
        fresh.goto(link)
        settle(fresh)
        expect(fresh.locator("[data-testid='stMetricValue']").first).to_have_text(
            "3", timeout=60_000
        )
        assert metric(fresh, "count") == "3"
        assert metric(fresh, "appended") == "1"
        assert "appends=1." in fresh.url
        fresh.get_by_role("tab", name="Step before / after").click()
        settle(fresh)
        expect(fresh.get_by_text("m3", exact=True).first).to_be_visible()
    finally:
        other.close()


def test_compare_view_screenshots(server, page):  # noqa: F811
    page.goto(server)
    settle(page)
    page.get_by_role("button", name="Load sample conversation").click()
    settle(page)
    window = page.get_by_label("Window size (max_messages)", exact=True).and_(
        page.get_by_test_id("stNumberInputField")
    )
    window.fill("4")
    window.press("Enter")
    settle(page)
    expect(page.get_by_text("report differently under the other settings")).to_be_visible()
    assert metric(page, "count") == "13"  # not rewritten until picked
    shot(page, "compare.png")
    page.get_by_role("button", name="Use the new settings").click()
    settle(page)
    assert metric(page, "count") == "4"

    page.goto(f"{server}/replay?r_sample=long_conversation.jsonl")
    settle(page)
    page.get_by_text("Compare with other settings").click()
    settle(page)
    expect(page.get_by_text("report differently under the other settings")).to_be_visible()
    assert page.locator("[data-testid='stException']").count() == 0
    shot(page, "replay-compare.png")
