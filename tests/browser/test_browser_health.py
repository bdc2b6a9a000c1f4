"""Real browser (system Chromium): the health panel, the Tool calls tab and filter links.

The server, browser and screenshot helpers are the ones of ``test_browser.py``.
Screenshots go to ``FLOWDROP_SCREENSHOT_DIR`` (``make screenshots``).
"""

from __future__ import annotations

import json
import re
import time

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
    assert "\u2060" not in panel.inner_text()  # what a reader copies is the text
    panel.get_by_text("Every finding").click()
    settle(page)
    path = shot(page, "health-panel-long-1280.png")
    assert path.exists()


#: OpenAI's sentence as its Python SDK raises it (github.com/RamiAwar/dataline/issues/172),
#: naming one id the default sample answers and one it does not hold.
PASTED = (
    "BadRequestError('Error code: 400 - {\\'error\\': {\\'message\\': \"An assistant message "
    "with \\'tool_calls\\' must be followed by tool messages responding to each "
    "\\'tool_call_id\\'. The following tool_call_ids did not have response messages: "
    "call_Bv81kYzPq2, call_doesnotexist42\", \\'type\\': \\'invalid_request_error\\'}}')"
)


def in_view(page, selector: str, within_ms: int = 5_000) -> dict:  # noqa: F811
    """The element's box once it lies inside the 800 px viewport (polled: the scroll follows the run)."""
    box: dict = {}
    deadline = time.monotonic() + within_ms / 1000
    while time.monotonic() < deadline:
        box = page.locator(selector).first.bounding_box() or {}
        if box and box["y"] >= 0 and box["y"] + box["height"] <= 800:
            return box
        page.wait_for_timeout(100)
    raise AssertionError(f"{selector} not in view: {box}")


def test_a_finding_comes_into_view_and_a_pasted_error_is_checked(server, page):  # noqa: F811
    """At 1280 x 800: the text is the data (no word joiner), a picked finding's step
    caption is on screen (it was about 1,550 px down), and a pasted error's answered and
    absent ids are said to be so, with no other call blamed."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{server}/replay")  # the default sample, openai_chat.json
    settle(page)
    app = page.locator("[data-testid='stApp']")
    expect(app).to_contain_text("finding(s) in 13 message(s):")
    assert "\u2060" not in app.inner_text()
    pick(page, "Go to a finding", "step 10 · unanswered call call_Pz7mD4eR1c")
    assert step_in_url(page) == 10
    in_view(page, ".st-key-nav_reasons")
    expect(page.locator(".st-key-nav_reasons")).to_contain_text("Step 10")

    page.get_by_text("Paste the provider's error").click()
    box = page.get_by_label("The error a provider returned for this history")
    box.fill(PASTED)
    box.press("Control+Enter")
    settle(page)
    said = page.locator(".st-key-r_health [data-testid='stAlert']").filter(has_text="OpenAI")
    expect(said).to_contain_text("call_Bv81kYzPq2 is answered in this recording")
    expect(said).to_contain_text(
        "call_doesnotexist42 is not in this recording: is this the error of another request?"
    )
    expect(said).not_to_contain_text("Caused by")
    assert "\u2060" not in said.inner_text()


def test_a_bidi_override_is_shown_not_obeyed(server, page):  # noqa: F811
    """A message whose bytes say 'Done <RLO>evil<PDF> ok' never reads 'Done live ok'."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{server}/replay")
    settle(page)
    hostile = "Done \u202eevil\u202c ok"
    messages = [
        {"role": "user", "content": "status?"},
        {"role": "assistant", "content": hostile},
    ]
    upload = page.locator("[data-testid='stFileUploaderDropzoneInput']")
    payload = json.dumps({"messages": messages}).encode()
    upload.set_input_files(
        files=[{"name": "bidi.json", "mimeType": "application/json", "buffer": payload}]
    )
    settle(page)
    expect(page.locator(".st-key-nav_reasons")).to_contain_text("Done \\u202eevil\\u202c ok")
    page.get_by_role("tab", name="Step before / after").click()
    settle(page)
    bubble = page.locator("[data-testid='stChatMessage']").filter(has_text="Done \\u202e")
    expect(bubble.first).to_be_visible()
    text = page.locator("[data-testid='stApp']").inner_text()
    assert "\u202e" not in text and "\u202c" not in text
