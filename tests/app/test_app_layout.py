"""The inspector's layout: app.py + pages/ (page scripts only), shared code in inspector_ui/.

Streamlit's classic router serves every ``pages/*.py`` file as a page, so a
helper module put there would become a page. These tests keep the folder
and the registry (titles, icons, tooltips) in step, and check every page
draws the same navigation bar.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from inspector_ui.registry import ENTRY, PAGES

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60


def shell_key(script: Path) -> str | None:
    """The key a page script passes to ``page_shell(...)``, if it calls it."""
    for node in ast.walk(ast.parse(script.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "page_shell"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            return str(node.args[0].value)
    return None


def test_pages_folder_holds_exactly_the_registered_page_scripts():
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").iterdir() if p.name != "__pycache__"}
    registered = {p.path for p in PAGES if p.path != ENTRY}
    assert on_disk == registered
    assert not (ROOT / "app_pages").exists()
    assert PAGES[0].path == ENTRY and PAGES[0].url_path == ""


@pytest.mark.parametrize("spec", PAGES, ids=[p.key for p in PAGES])
def test_every_page_script_opens_with_its_own_shell(spec):
    assert shell_key(ROOT / spec.path) == spec.key


@pytest.mark.parametrize("spec", PAGES, ids=[p.key for p in PAGES])
def test_every_page_shows_its_title_and_the_same_navigation(spec):
    at = AppTest.from_file(str(ROOT / ENTRY), default_timeout=TIMEOUT).run()
    if spec.path != ENTRY:
        at.switch_page(spec.path).run()
    assert not at.exception, at.exception
    assert at.title[0].value == spec.title
    nav = at.get_by_key("nav")
    assert nav is not None
