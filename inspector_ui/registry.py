"""The inspector's pages, listed once: script path, title, icon, tooltip.

Streamlit's classic multipage layout routes by file: ``app.py`` is the root
page and ``pages/<name>.py`` is served at ``/<name>``. This registry gives
each script its title, icon and help for the navigation bar
(:func:`inspector_ui.shell.page_shell`); a test checks it matches the
files in ``pages/`` one to one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    """One page: its script (relative to the app root), what the navigation shows."""

    key: str
    path: str
    title: str
    icon: str
    help: str

    @property
    def url_path(self) -> str:
        """Where the page is served: ``""`` for the entry page, else the file's stem."""
        return "" if self.path == ENTRY else self.path.removeprefix("pages/").removesuffix(".py")


ENTRY = "app.py"

PAGES: tuple[PageSpec, ...] = (
    PageSpec(
        key="playground",
        path=ENTRY,
        title="Playground",
        icon=":material/science:",
        help=(
            "Append messages under a window, scope and identity of your choice and watch "
            "count and appended per step, with the events that explain them."
        ),
    ),
    PageSpec(
        key="replay",
        path="pages/replay.py",
        title="Replay",
        icon=":material/replay:",
        help=(
            "Upload a recorded conversation or pick a sample, replay it per message or per "
            "turn, and travel through its timeline step by step."
        ),
    ),
    PageSpec(
        key="spec_examples",
        path="pages/spec_examples.py",
        title="Spec examples",
        icon=":material/fact_check:",
        help=(
            "Every example of the GR-MEM rules as a runnable scenario, grouped by rule, "
            "with expected and actual results. Open any of them in the playground."
        ),
    ),
    PageSpec(
        key="store",
        path="pages/store.py",
        title="Store",
        icon=":material/storage:",
        help=(
            "Connect to a SQLite file, a Redis or a Postgres server: list its slots, open a buffer, and "
            "replay a slot's append journal step by step. Read-only unless switched."
        ),
    ),
    PageSpec(
        key="learn_mem14",
        path="pages/learn_mem14.py",
        title="Learn MEM-14",
        icon=":material/school:",
        help=(
            "A guided walk through every point of MEM-14, one example each, with a "
            "presenter mode: the count stays the same while appended tells what landed."
        ),
    ),
    PageSpec(
        key="glossary",
        path="pages/glossary.py",
        title="Glossary",
        icon=":material/menu_book:",
        help="The words of GR-MEM (count, appended, eviction, placeholder, scope, ...).",
    ),
    PageSpec(
        key="conformance",
        path="pages/conformance.py",
        title="Conformance",
        icon=":material/verified:",
        help=(
            "This implementation's standing against every GR-MEM rule, with its examples "
            "and decisions, as Markdown and JSON."
        ),
    ),
)

BY_KEY: dict[str, PageSpec] = {page.key: page for page in PAGES}
PLAYGROUND = BY_KEY["playground"].path
