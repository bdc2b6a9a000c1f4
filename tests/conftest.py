"""Shared test setup: the oracle on the path, the store fixtures, and the markers.

Markers are applied here, never by hand in a list elsewhere (``make
test-fast``, ``make coverage`` and ``scripts/mutate.py`` select by them):

- ``ui``: every test under ``tests/app/`` (Streamlit AppTest);
- ``browser``: every test under ``tests/browser/`` (Playwright + Chromium);
- ``redis``: every test that needs a Redis server or the redis package (it
  uses ``redis_server`` / ``redis_url``, is the ``"redis"`` case of a
  parametrized fixture such as ``store``, or lives in a ``test_redis_*`` file);
- ``postgres``: the same for a Postgres server (``postgres_server`` /
  ``postgres_url``, a ``"postgres"`` case, a ``test_postgres_*`` file);
- ``slow``: the tests :data:`SLOW` names, measured with ``--durations``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Uploads the inspector keeps for links go to a folder of this test run, never the user's
# cache (AppTest pages and the browser tests' servers inherit the environment).
os.environ.setdefault(
    "FLOWDROP_UPLOAD_KEEP_DIR", str(Path(tempfile.mkdtemp(prefix="flowdrop-kept-")) / "uploads")
)

from postgres_server import PostgresServer, require_postgres_bin
from redis_server import RedisServer, require_redis_server

from flowdrop_core.storage import MemoryStore, SQLiteStore, Store

#: Tests that took 2 s or more each on this two-core machine (``pytest --durations=40``
#: over the core and storage folders): property-based, fuzzing and multi-process runs. Keyed ``file::name``,
#: so every parametrization of a listed test is slow.
SLOW = frozenset(
    {
        "tests/core/test_oracle_properties.py::test_engine_matches_the_oracle_on_loaded_buffers",
        "tests/core/test_oracle_properties.py::test_a_live_buffer_matches_the_oracle_append_after_append",
        "tests/core/test_oracle_properties.py::test_provider_view_matches_the_oracle_and_is_sendable",
        "tests/core/test_oracle_properties.py::test_provider_view_of_what_the_engine_stored_is_sendable",
        "tests/core/test_fuzz.py::test_cli_on_mutated_scenarios",
        "tests/core/test_fuzz.py::test_cli_on_mutated_recordings",
        "tests/core/test_engine_properties.py::test_refiring_results_and_calling_turns_is_idempotent",
        "tests/core/test_engine_properties.py::test_no_call_answered_twice_and_placeholders_sit_by_their_turn",
        "tests/core/test_engine_properties.py::test_buffer_and_pure_form_agree_step_by_step",
        "tests/core/test_engine_properties.py::test_engine_matches_the_naive_model_and_invariants",
        "tests/core/test_messages.py::test_read_row_is_read_message_then_to_stored_row",
        "tests/importers/test_properties.py::test_any_json_value_imports_or_raises_the_documented_error",
        "tests/storage/test_conditional_writes.py::test_write_transaction_held_for_good_fails_loudly_and_writes_nothing",
        "tests/storage/test_conditional_writes.py::test_eight_processes_with_a_tiny_lock_timeout_lose_no_turn",
        "tests/storage/test_store_faults.py::test_writer_killed_mid_append_twenty_times",
        "tests/storage/test_store_faults.py::test_four_processes_retrying_once_store_every_turn_once",
        "tests/storage/test_store_faults.py::test_postgres_four_processes_lose_no_turn",
        "tests/storage/test_store_faults.py::test_postgres_eight_threads_lose_no_turn",
        "tests/storage/test_redis_production.py::test_at_maxmemory_with_noeviction_nothing_is_lost_and_reads_work",
        "tests/storage/test_redis_production.py::test_an_eviction_policy_is_warned_about_and_never_reads_as_a_short_buffer",
        "tests/storage/test_redis_production.py::test_a_slot_runs_on_one_node_of_a_real_cluster",
        # Left out of make test-fast to keep it under a minute, measured with --durations over
        # its selection: neither rule core, importers nor CLI, each 3-15 s of separate
        # processes (the examples importing their frameworks, four writer processes, the
        # optional-import subprocesses) or a fuzzing run beside the two above.
        "tests/integrations/test_examples.py::test_example_runs",
        "tests/integrations/test_optional_imports.py::test_each_integration_names_its_extra_when_the_framework_is_missing",
        "tests/storage/test_concurrency.py::test_four_processes_lose_nothing",
        "tests/core/test_fuzz.py::test_parse_scenario_raises_only_scenario_error",
        # The wheel is built once for these four (3.4 s of a separate build): packaging.
        "tests/test_wheel.py::test_the_wheel_carries_the_inspector_under_its_ui_package",
        "tests/test_wheel.py::test_the_wheel_has_no_top_level_app_or_pages",
        "tests/test_wheel.py::test_the_wheel_ships_type_information",
        "tests/test_wheel.py::test_the_wheel_metadata_names_the_version_and_a_lean_base",
    }
)

#: Folder under tests/ -> the marker every test in it gets.
FOLDER_MARKS = {"app": "ui", "browser": "browser"}

#: Marker -> the fixtures that start its server.
SERVER_FIXTURES = {
    "redis": frozenset({"redis_server", "redis_url"}),
    "postgres": frozenset({"postgres_server", "postgres_url"}),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each collected test by its folder, its fixtures and :data:`SLOW`."""
    root = Path(__file__).parent
    for item in items:
        path = Path(str(item.path))
        try:
            rel = path.relative_to(root)
        except ValueError:
            continue
        folder = rel.parts[0] if len(rel.parts) > 1 else ""
        if folder in FOLDER_MARKS:
            item.add_marker(FOLDER_MARKS[folder])
        fixtures = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        params = {v for v in callspec.params.values() if isinstance(v, str)} if callspec else set()
        for marker, server_fixtures in SERVER_FIXTURES.items():
            # A fixture may reach the server through request.getfixturevalue (its
            # "redis" case): the parameter value names the backend then.
            if (
                fixtures & server_fixtures
                or marker in params
                or path.name.startswith(f"test_{marker}")
            ):
                item.add_marker(marker)
        name = item.name.split("[", 1)[0]
        if f"tests/{rel.as_posix()}::{name}" in SLOW:
            item.add_marker("slow")


@pytest.fixture(scope="session", autouse=True)
def _user_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user's state folder (server repair records) is the test run's, not the home's;
    a test's subprocesses inherit it."""
    was = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
    yield
    if was is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = was


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One real ``redis-server`` for the session (own port and folder); skips without one."""
    server = RedisServer(require_redis_server(), tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, emptied before the test."""
    from flowdrop_core.storage.redis_store import RedisStore

    with RedisStore(redis_server.url) as s:
        s.client.flushdb()
    return redis_server.url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway Postgres cluster for the session (own port and folder); skips without one."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (the 'postgres' extra)")
    server = PostgresServer(require_postgres_bin())
    server.start()
    yield server
    server.remove()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The session server's URL, its ``flowdrop`` schema dropped before the test."""
    import psycopg

    if postgres_server.proc is None:  # a test stopped it and failed before restarting
        postgres_server.start()
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS flowdrop CASCADE")
    return postgres_server.url


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Each backend in turn: in memory, a real SQLite file, a real Redis and Postgres server."""
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        s = SQLiteStore(tmp_path / "buffers.sqlite3")
        yield s
        s.close()
    elif request.param == "redis":
        from flowdrop_core.storage.redis_store import RedisStore

        r = RedisStore(request.getfixturevalue("redis_url"))
        yield r
        r.close()
    else:
        url = request.getfixturevalue("postgres_url")
        from flowdrop_core.storage.postgres import PostgresStore

        p = PostgresStore(url)
        yield p
        p.close()
