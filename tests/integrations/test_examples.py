"""Every script in ``examples/`` runs to the end (each asserts the failure and GR-MEM's fix)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.py"))

EXPECTED = {
    "langgraph_live_store.py": "gr_mem_reducer dropped them (MEM-1)",
    "langgraph_refired_tool_node.py": "gr_mem_messages: 1 result for call_1",
    "openai_agents_retried_output.py": "GRMemSession:  1 output stored for call_1",
    "pydantic_ai_interrupted_call.py": "call_1 returned 'Found 3 cats'",
}


def test_every_example_is_listed() -> None:
    assert {p.name for p in EXAMPLES} == set(EXPECTED)


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": ""}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert EXPECTED[script.name] in done.stdout
    assert (
        "without GR-MEM" in done.stdout
        or "add_messages" in done.stdout
        or "SQLiteSession" in done.stdout
    )
