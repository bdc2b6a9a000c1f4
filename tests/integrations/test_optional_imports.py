"""The framework packages are optional: nothing imports them until an integration is used."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "agents", "pydantic_ai", "opentelemetry")

BLOCK = textwrap.dedent(
    f"""
    import sys

    class NoFrameworks:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {FRAMEWORKS!r}:
                raise ImportError(f"No module named {{name!r}} (blocked by the test)")
            return None

    sys.meta_path.insert(0, NoFrameworks())
    """
)


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_library_and_the_readers_import_without_any_framework() -> None:
    done = run(
        """
        import flowdrop_core, flowdrop_core.integrations, flowdrop_core.framework_stores
        import flowdrop_core.integrations._responses_items, flowdrop_core.cli
        print("ok")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_each_integration_names_its_extra_when_the_framework_is_missing() -> None:
    for module, extra in (
        ("langgraph", "langgraph"),
        ("openai_agents", "openai-agents"),
        ("pydantic_ai", "pydantic-ai"),
    ):
        done = run(
            f"""
            from flowdrop_core.integrations import FrameworkMissingError
            try:
                import flowdrop_core.integrations.{module}
            except FrameworkMissingError as exc:
                print(exc)
            """
        )
        assert done.returncode == 0, done.stderr
        assert f"flowdrop-buffer-inspector[{extra}]" in done.stdout


def test_an_agents_file_is_read_without_the_sdk(tmp_path: Path) -> None:
    """The SQLiteSession reader needs no SDK: the items are JSON."""
    import sqlite3

    path = tmp_path / "agents.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE agent_sessions (session_id TEXT PRIMARY KEY, created_at TIMESTAMP, "
            "updated_at TIMESTAMP)"
        )
        conn.execute(
            "CREATE TABLE agent_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, "
            "message_data TEXT, created_at TIMESTAMP)"
        )
        conn.execute("INSERT INTO agent_sessions (session_id) VALUES ('s')")
        conn.execute(
            "INSERT INTO agent_messages (session_id, message_data) VALUES "
            """('s', '{"role": "user", "content": "hi"}')"""
        )
    done = run(
        f"""
        from flowdrop_core.framework_stores import open_framework_store
        store = open_framework_store({str(path)!r})
        print([(t.id, t.count, t.healthy) for t in store.threads()])
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[('s', 1, True)]"


def test_telemetry_is_off_without_opentelemetry() -> None:
    """Without the ``otel`` extra the module imports, says it is off, and emits nothing."""
    done = run(
        """
        from flowdrop_core import telemetry
        from flowdrop_core.engine import Buffer
        telemetry.emit("test", Buffer().append([{"role": "user", "content": "hi"}]))
        print(telemetry.ENABLED)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
