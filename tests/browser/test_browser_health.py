"""Real browser (system Chromium): the health panel, the Tool calls tab and filter links.

The server, browser and screenshot helpers are the ones of ``test_browser.py``.
Screenshots go to ``FLOWDROP_SCREENSHOT_DIR`` (``make screenshots``).
"""

from __future__ import annotations

import re

from test_browser import browser, expect, page, server, settle, shot  # noqa: F401


def step_in_url(page) -> int:  # noqa: F811
    found = re.search(r"[?&]rstep=(\d+)", page.url)
    assert found, page.url
    return int(found.group(1))


def pick(page, label: str, option: str) -> None:  # noqa: F811
    """Choose ``option`` (a prefix of its text) in the selectbox labelled ``label``."""
    combo = page.get_by_role("combobox", name=label)
    expect(combo).to_be_visible(timeout=60_000)
    combo.click()
    page.get_by_role("option").filter(has_text=re.compile("^" + re.escape(option))).first.click()
    settle(page)


def test_the_health_panel_jumps_to_a_finding_and_opens_its_call(server, page):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(f"{server}/replay?r_sample=imports/broken_history.json")
    settle(page)
    panel = page.locator(".st-key-r_health")
    expect(panel).to_contain_text("7 finding(s) in 14 message(s)")
    expect(panel).to_contain_text("a provider would reject the recording as it is")
    pick(page, "Go to a finding", "step 6 · unanswered call call_Rf4m · healed there")
    assert step_in_url(page) == 6  # where GR-MEM healed it (it came in at step 5)
    page.get_by_role("button", name="Show call call_Rf4m in the Tool calls tab").click()
    settle(page)
    expect(page.get_by_text("1 of 4 call(s).")).to_be_visible()
    calls = page.locator("[data-testid='stTextInput']").filter(has_text="Call id contains")
    expect(calls.locator("input")).to_have_value("call_Rf4m")
    shot(page, "health-tool-calls.png")


def test_a_filter_link_by_kind_id(server, page):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(f"{server}/replay?r_sample=long_conversation.jsonl&r_kind=duplicate_result")
    settle(page)
    expect(page.get_by_text(re.compile(r"^67 step\(s\) with duplicate result"))).to_be_visible()
    assert "r_kind=duplicate_result" in page.url
    page.goto(f"{server}/replay?r_sample=long_conversation.jsonl&r_kind=banana")
    settle(page)
    expect(page.get_by_text("r_kind=banana is not a decision kind", exact=False)).to_be_visible()
    assert "r_kind" not in page.url


def test_health_panel_screenshot_on_the_long_sample(server, page):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(f"{server}/replay?r_sample=long_conversation.jsonl")
    settle(page)
    panel = page.locator(".st-key-r_health")
    expect(panel).to_contain_text("finding(s) in 5002 message(s)")
    panel.get_by_text("Every finding").click()
    settle(page)
    path = shot(page, "health-panel-long-1280.png")
    assert path.exists()
