"""AppTest and unit tests: the shared token and what a browser keeps across reloads."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from inspector_ui.visitor import BrowserKeep, _xsrf_token_bytes, token_matches

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def test_a_set_token_stops_every_page_until_it_is_given(monkeypatch):
    monkeypatch.setenv("FLOWDROP_TOKEN", "team-secret-42")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, at.exception
    assert [t.label for t in at.text_input] == ["Access token"]
    assert not at.title  # nothing of the page ran
    at.text_input(key="_token_typed").set_value("wrong").run()
    assert "not the access token" in at.error[0].value
    assert not at.title
    at.text_input(key="_token_typed").set_value("team-secret-42").run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Playground"
    at.switch_page("pages/store.py").run()  # asked once per session, not per page
    assert at.title[0].value == "Store"


def test_no_token_no_question(monkeypatch):
    monkeypatch.delenv("FLOWDROP_TOKEN", raising=False)
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert "Access token" not in [t.label for t in at.text_input]
    assert at.title[0].value == "Playground"


def test_token_comparison():
    assert token_matches(" abc ", "abc")
    assert not token_matches("abd", "abc")
    assert not token_matches("", "abc")
    assert not token_matches("é", "abc")


def test_xsrf_cookie_token_bytes():
    mask, token = bytes(range(1, 17)), bytes(range(100, 116))
    masked = bytes(a ^ b for a, b in zip(mask, token, strict=True))
    assert _xsrf_token_bytes(f"2|{mask.hex()}|{masked.hex()}|1700000000") == token
    short_mask = bytes([7, 1, 9, 3])
    masked = bytes(b ^ short_mask[i % 4] for i, b in enumerate(token))
    assert _xsrf_token_bytes(f"2|{short_mask.hex()}|{masked.hex()}|1") == token
    assert _xsrf_token_bytes("2|zz|zz|1") is None
    assert _xsrf_token_bytes("2||0000|1") is None
    assert _xsrf_token_bytes("garbage") is None


def test_keep_is_bounded_in_bytes_browsers_and_time(monkeypatch):
    keep = BrowserKeep(max_browsers=2, max_bytes=100, ttl=60)
    assert keep.put("a", "upload", b"x" * 60, 60)
    assert keep.put("b", "upload", b"y" * 30, 30)
    assert keep.get("a", "upload") == b"x" * 60
    assert keep.put("b", "upload", b"y" * 50, 50)  # a's 60 + 50 > 100: the older goes
    assert keep.get("a", "upload") is None and keep.total_bytes() == 50
    assert not keep.put("c", "upload", b"z" * 101, 101)  # larger than the budget: not kept
    assert keep.get("c", "upload") is None
    keep.put("c", "store", "x", 0)
    keep.put("d", "store", "y", 0)  # three browsers > 2: the least recently seen goes
    assert keep.get("b", "upload") is None and keep.get("d", "store") == "y"
    import inspector_ui.visitor as visitor

    now = visitor.time.monotonic()
    monkeypatch.setattr(visitor.time, "monotonic", lambda: now + 61)
    assert keep.get("d", "store") is None and keep.total_bytes() == 0
