"""Real browser: the Store page follows a slot while another process appends to it.

The server is another process than this test's, which appends. The
Journal tab's "Follow" switch reruns the timeline's fragment on
Streamlit's own timer: new steps appear without a reload, the step the
person picked stays picked, and the health panel follows.
"""

from __future__ import annotations

import re
from pathlib import Path

from serving import chromium, new_page, require_browser, serve, settle
from store_fixture import make_store_file

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import SQLiteStore

expect = require_browser().expect


def test_a_followed_slot_shows_new_steps_and_keeps_the_picked_one(tmp_path: Path) -> None:
    path = make_store_file(tmp_path / "buffers.sqlite3")
    store = SQLiteStore(path)  # this process appends, as a running agent would
    buf = ConversationBuffer(scope="session", max_messages=4, store=store, journal=100)
    try:
        with (
            serve({"FLOWDROP_STORES": f"team={path}"}) as server,
            chromium() as browser,
            new_page(browser, 1400, 1000) as page,
        ):
            page.goto(f"{server}/store?store=team")
            settle(page)
            page.get_by_role("tab", name="Journal").click()
            settle(page)
            expect(page.get_by_text("Records 1..9 replayed")).to_be_visible()
            box = page.get_by_label("Go to step", exact=True).and_(
                page.get_by_test_id("stNumberInputField")
            )
            box.fill("3")
            box.press("Enter")
            settle(page)
            slider = page.get_by_role("slider").first
            expect(slider).to_have_attribute("value", "3")
            expect(slider).to_have_attribute("max", "9")
            page.get_by_text("Follow", exact=True).click()
            expect(page.get_by_text("Following: 0 new append(s)")).to_be_visible()

            turn = {"role": "user", "content": "one more, please"}
            buf.append(turn, {"session_id": "demo"})
            expect(page.get_by_text("Records 1..10 replayed")).to_be_visible(timeout=15_000)
            expect(page.get_by_text("Following: 1 new append(s)")).to_be_visible()
            expect(slider).to_have_attribute("max", "10")
            expect(slider).to_have_attribute("value", "3")  # the picked step stays
            # the health panel follows too (its summary counts the new message)
            expect(page.get_by_text(re.compile(r"finding\(s\) in 10 message"))).to_be_visible()
            buf.append(turn, {"session_id": "demo"})
            expect(page.get_by_text("Records 1..11 replayed")).to_be_visible(timeout=15_000)
            expect(slider).to_have_attribute("max", "11")
            expect(slider).to_have_attribute("value", "3")
            assert page.locator("[data-testid='stException']").count() == 0
    finally:
        store.close()
