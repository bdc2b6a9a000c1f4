"""What several AppTest files share: reading an alert back, starting the app, typed stores.

Imported by name from the test files: pytest puts a test file's folder on
``sys.path`` before importing it (the folders have no ``__init__.py``), as the
browser tests rely on for ``test_browser``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


#: A backslash escape, or a code span (the plain-text helper draws a linkable word so).
_READ = re.compile(r"\\([!-/:-@\[-`{-~])|(`+)( ?)(.+?)\3\2(?!`)")


def shown(markdown: str) -> str:
    """An alert's text as a reader sees it: escapes, code spans and hard breaks read back."""
    text = markdown.replace("\u00a0", " ").replace("\\\n", "\n")
    return _READ.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(4), text)


def start_app(timeout: float, **query: str) -> AppTest:
    """The app run once with ``query`` as its URL parameters; fails on an exception."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def paste(at: AppTest, text: str) -> AppTest:
    """Paste ``text`` into the Playground's box and press Append; fails on an exception."""
    at.text_area(key="pg_paste").input(text)
    at.button(key="pg_append").click().run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(autouse=True)
def path_entry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local path entry on and served on loopback, no store configured: a test types its own.

    Autouse in every test file that imports it (pytest finds fixtures by module
    name), and only there.
    """
    from streamlit import config

    monkeypatch.setenv("FLOWDROP_STORE_PATHS", "1")
    for var in ("FLOWDROP_STORES", "FLOWDROP_STORES_FILE", "FLOWDROP_DB", "FLOWDROP_REDIS_URL"):
        monkeypatch.delenv(var, raising=False)
    was = config.get_option("server.address")
    config.set_option("server.address", "127.0.0.1")
    yield
    config.set_option("server.address", was)
