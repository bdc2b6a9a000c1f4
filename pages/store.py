"""Store: browse a SQLite file's, a Redis or a Postgres server's slots, buffers and append journals."""

from __future__ import annotations

from inspector_ui import place
from inspector_ui.shell import page_shell
from inspector_ui.store import show_store_page

page_shell("store")
show_store_page()
place.remember("store")
