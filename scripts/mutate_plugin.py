"""Pytest plugin of ``scripts/mutate.py``: map lines to tests, then run only those tests.

Two modes, chosen by environment variables (the plugin does nothing without them):

- ``FLOWDROP_MUTATE_MAP=out.json``: record, with coverage.py, which test reached
  which line of ``flowdrop_core`` (each test is a coverage context named by its
  node id; lines run while importing or collecting have the empty context) and
  how long each test took. Written once per run of the unmutated code.
- ``FLOWDROP_MUTATE_SELECT=ids.txt``: keep only the tests whose node id is a
  line of that file. A mutant can only change what a test sees if the test
  reaches the mutated line, so these are the only tests that can kill it;
  ``mutate.py`` runs every test again before it calls a mutant a survivor.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_MAP = os.environ.get("FLOWDROP_MUTATE_MAP")
_SELECT = os.environ.get("FLOWDROP_MUTATE_SELECT")


class _Recorder:
    """Switches the coverage context to each test's node id and times the test."""

    def __init__(self, out: Path) -> None:
        import coverage

        self.out = out
        self.seconds: dict[str, float] = {}
        self.cov = coverage.Coverage(
            data_file=None, source=["flowdrop_core"], config_file=False, context=""
        )
        # Started when ``-p`` loads this plugin, before the conftest imports the
        # library, so lines run at import time are recorded (empty context).
        self.cov.start()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        self.cov.switch_context(item.nodeid)
        start = time.perf_counter()
        yield
        self.seconds[item.nodeid] = time.perf_counter() - start
        self.cov.switch_context("")

    def pytest_sessionfinish(self) -> None:
        self.cov.stop()
        data = self.cov.get_data()
        lines: dict[str, dict[str, list[str]]] = {}
        for filename in data.measured_files():
            by_line = data.contexts_by_lineno(filename)
            lines[str(Path(filename).resolve())] = {
                str(n): sorted(ctx) for n, ctx in by_line.items()
            }
        self.out.write_text(json.dumps({"lines": lines, "seconds": self.seconds}), encoding="utf-8")


class _Selector:
    """Keeps only the tests named in the selection file, in its order (fastest first)."""

    def __init__(self, ids: Path) -> None:
        order = ids.read_text(encoding="utf-8").splitlines()
        self.rank = {nodeid: k for k, nodeid in enumerate(order)}

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[Any]) -> None:
        kept = sorted(
            (item for item in items if item.nodeid in self.rank),
            key=lambda item: self.rank[item.nodeid],
        )
        dropped = [item for item in items if item.nodeid not in self.rank]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept


_RECORDER = _Recorder(Path(_MAP)) if _MAP else None


def pytest_configure(config: pytest.Config) -> None:
    if _RECORDER is not None:
        config.pluginmanager.register(_RECORDER, "flowdrop-mutate-map")
    if _SELECT:
        config.pluginmanager.register(_Selector(Path(_SELECT)), "flowdrop-mutate-select")
