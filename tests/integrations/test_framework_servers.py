"""Framework stores on servers: a LangGraph ``PostgresSaver`` checkpointer, Agents ``SQLAlchemySession``.

Written by the real packages (a ``StateGraph`` on ``PostgresSaver``,
``SQLAlchemySession.add_items`` and ``Runner.run`` with a scripted model) on
the session's throwaway Postgres, each in its own database, and on a SQLite
file through a ``sqlite:///`` URL. After a repair the frameworks' own
readers load what was planned; a read-back that differs leaves nothing
written.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import psycopg
import pytest
from framework_files import (
    agents_sqlalchemy,
    database,
    folder_state,
    graph_of,
    langgraph_postgres,
)
from langchain_core.messages import HumanMessage
from postgres_server import PostgresServer

from flowdrop_core.cli import main
from flowdrop_core.framework_stores import (
    FrameworkStoreError,
    detect,
    open_framework_store,
    sniff,
)
from flowdrop_core.messages import PLACEHOLDER_CONTENT
from flowdrop_core.replay import replay
from flowdrop_core.tiers import TierDenied

_names = itertools.count()


def _fresh(server: PostgresServer, prefix: str) -> str:
    return database(server.url, f"{prefix}_{next(_names)}")


@pytest.fixture(scope="module")
def langgraph_db(postgres_server: PostgresServer) -> Iterator[str]:
    """One checkpointer for the read-only tests of this module (never written to by them)."""
    yield langgraph_postgres(_fresh(postgres_server, "lg_read"))


def _digest(url: str, tables: tuple[str, ...]) -> dict[str, Any]:
    """Every row of the tables, as text (what 'nothing changed' is checked against)."""
    with psycopg.connect(url) as conn:
        return {
            t: conn.execute(
                f"SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) FROM {t} x"
            ).fetchone()
            for t in tables
        }


LG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
AGENT_TABLES = ("agent_sessions", "agent_messages")


def test_a_checkpointer_lists_its_threads_with_their_findings_read_only(
    langgraph_db: str, postgres_server: PostgresServer
) -> None:
    before = _digest(langgraph_db, LG_TABLES)
    assert detect(langgraph_db) == "langgraph-postgres"
    store = open_framework_store(langgraph_db)
    info = {t.id: t for t in store.threads()}
    assert {k: v.kinds() for k, v in info.items()} == {
        "t1": {"duplicate_result": 1},  # the tool node fired twice
        "t2": {"orphan_result": 1},
        "t3": {"unanswered_call": 1},  # a dangling call, then a user turn
    }
    assert info["t1"].findings[0].index == 3 and info["t1"].count == 4
    timeline = replay(store.scenario("t1"))
    assert [s.appended for s in timeline.steps] == [1, 1, 1, 0]
    assert store.rows("t3")[1]["metadata"]["tool_calls"][0]["id"] == "g1"
    with pytest.raises(TierDenied):
        store.repair("t1")
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        cast(Any, store).conn.execute("DELETE FROM checkpoints")
    cast(Any, store).conn.rollback()
    with psycopg.connect(postgres_server.url) as watcher:  # no read left a transaction open
        idle = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'"
        ).fetchone()
    assert idle == (0,)
    store.close()
    assert _digest(langgraph_db, LG_TABLES) == before


def test_a_checkpointer_repair_is_read_back_by_postgres_saver_and_the_graph_runs_on(
    postgres_server: PostgresServer,
) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    url = langgraph_postgres(_fresh(postgres_server, "lg_fix"))

    def counts() -> dict[str, int]:
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id"
            ).fetchall()
        return {str(t): int(n) for t, n in rows}

    before = counts()
    store = open_framework_store(url, tier="admin")
    plan = store.plan_repair("t1")
    assert [c.op for c in plan.changes] == ["insert", "remove"]
    assert "t1.messages[3]" in plan.changes[1].where
    report = store.repair("t1", plan)
    assert report.backup is None and report.remaining == []
    assert "PostgresSaver.get_tuple before the commit" in report.readback
    assert "one transaction" in report.summary()
    store.close()
    assert counts() == {**before, "t1": before["t1"] + 1}  # one checkpoint more, nothing else
    with PostgresSaver.from_conn_string(url) as saver:
        config: Any = {"configurable": {"thread_id": "t1"}}
        latest = saver.get_tuple(config)
        assert latest is not None
        assert [m.type for m in latest.checkpoint["channel_values"]["messages"]] == [
            "human",
            "ai",
            "tool",
        ]
        assert latest.metadata["source"] == "update"
        state = graph_of(saver).invoke({"messages": [HumanMessage("thanks")]}, config)  # type: ignore[arg-type]
    assert [m.type for m in state["messages"]] == ["human", "ai", "tool", "human", "ai"]


def test_a_checkpointer_read_back_that_differs_rolls_back(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flowdrop_core.integrations.langgraph as lg

    url = langgraph_postgres(_fresh(postgres_server, "lg_back"))
    before = _digest(url, LG_TABLES)
    real = lg.rows_to_messages
    monkeypatch.setattr(lg, "rows_to_messages", lambda rows: real(rows)[:-1])  # writes one less
    store = open_framework_store(url, tier="admin")
    with pytest.raises(FrameworkStoreError, match="differently from the plan; rolled back"):
        store.repair("t1")
    store.close()
    assert _digest(url, LG_TABLES) == before


def _sdk_items(url: str, session_id: str) -> list[Any]:
    from agents.extensions.memory import SQLAlchemySession

    async def read() -> list[Any]:
        session = SQLAlchemySession.from_url(session_id, url=url)
        try:
            return list(await session.get_items())
        finally:
            await session._engine.dispose()

    return asyncio.run(read())


def test_a_sqlalchemy_session_on_a_sqlite_url_reads_repairs_and_the_sdk_reads_it_back(
    tmp_path: Path,
) -> None:
    file = tmp_path / "sessions.sqlite"
    agents_sqlalchemy(f"sqlite+aiosqlite:///{file}")
    url = f"sqlite:///{file}"
    assert detect(url) == "openai-agents-sqlalchemy"
    before = folder_state(tmp_path)
    store = open_framework_store(url)
    assert store.path == url  # shown as typed
    info = {t.id: t for t in store.threads()}
    assert {k: v.kinds() for k, v in info.items()} == {
        "retried": {"duplicate_result": 1},
        "interrupted": {"unanswered_call": 1},
        "parallel": {},
    }
    calls = store.rows("parallel")[1]["metadata"]["tool_calls"]  # one turn, with arguments
    assert [(c["id"], c["arguments"]) for c in calls] == [
        ("p1", '{"city":"Paris"}'),
        ("p2", '{"city":"Rome"}'),
    ]
    with pytest.raises(TierDenied):
        store.repair("retried")
    store.close()
    assert folder_state(tmp_path) == before  # reading changed no byte, made no file

    store = open_framework_store(url, tier="admin")
    report = store.repair("retried")
    assert report.before == 4 and report.after == 3 and report.backup is None
    # MEM-15: recorded, in the user's state folder (nothing is added to the database)
    assert report.record is not None and str(report.record).startswith(os.environ["XDG_STATE_HOME"])
    logged = [json.loads(line) for line in report.record.read_text().splitlines()]
    assert logged[-1]["thread"] == "retried" and logged[-1]["tier"] == "admin"
    assert logged[-1]["file"] == str(store.path)  # the URL as shown: a password masked
    assert "SQLAlchemySession.get_items before the commit" in report.readback
    healed = store.repair("interrupted")
    assert healed.events == {"placeholder_inserted": 1}
    store.close()
    sdk = f"sqlite+aiosqlite:///{file}"
    assert [i.get("type", i.get("role")) for i in _sdk_items(sdk, "retried")] == [
        "user",
        "function_call",
        "function_call_output",
    ]
    interrupted = _sdk_items(sdk, "interrupted")
    assert interrupted[2] == {
        "type": "function_call_output",
        "call_id": "g1",
        "output": PLACEHOLDER_CONTENT,
    }
    assert interrupted[3] == {"role": "user", "content": "anything?"}


def test_a_sqlalchemy_session_on_postgres_is_found_by_its_tables_and_repaired(
    postgres_server: PostgresServer,
) -> None:
    url = _fresh(postgres_server, "ag")
    rest = url.split("://", 1)[1]
    agents_sqlalchemy(f"postgresql+asyncpg://{rest}")
    before = _digest(url, AGENT_TABLES)
    assert detect(url) == "openai-agents-sqlalchemy"  # a plain libpq URL: by its tables
    assert detect(f"postgresql+psycopg://{rest}") == "openai-agents-sqlalchemy"
    store = open_framework_store(url)
    assert {t.id: t.kinds() for t in store.threads()}["interrupted"] == {"unanswered_call": 1}
    with pytest.raises(Exception, match="read-only transaction"):
        cast(Any, store).conn.execute("DELETE FROM agent_messages")
    store.close()
    assert _digest(url, AGENT_TABLES) == before
    store = open_framework_store(f"postgresql+psycopg://{rest}", tier="admin")
    store.repair("interrupted")
    store.close()
    got = _sdk_items(f"postgresql+asyncpg://{rest}", "interrupted")
    assert [i.get("type", i.get("role")) for i in got] == [
        "user",
        "function_call",
        "function_call_output",
        "user",
    ]


def test_a_sqlalchemy_read_back_that_differs_rolls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flowdrop_core.framework_stores._agents_sqlalchemy import AgentsSQLAlchemySession

    file = tmp_path / "sessions.sqlite"
    agents_sqlalchemy(f"sqlite+aiosqlite:///{file}")
    real = AgentsSQLAlchemySession._write_plain

    def and_more(self: Any, thread: Any, plan: Any) -> None:
        real(self, thread, plan)
        self.conn.execute(
            "UPDATE agent_messages SET message_data = ? WHERE session_id = ? AND id = "
            "(SELECT MIN(id) FROM agent_messages WHERE session_id = ?)",
            ('{"role": "user", "content": "not planned"}', "retried", "retried"),
        )

    monkeypatch.setattr(AgentsSQLAlchemySession, "_write_plain", and_more)
    sdk = f"sqlite+aiosqlite:///{file}"
    before = _sdk_items(sdk, "retried")
    store = open_framework_store(f"sqlite:///{file}", tier="admin")
    with pytest.raises(FrameworkStoreError, match="differently from the plan; rolled back"):
        store.repair("retried")
    store.close()
    assert _sdk_items(sdk, "retried") == before


def test_a_postgres_url_is_ours_unless_a_framework_s_tables_are_there(
    postgres_url: str, langgraph_db: str
) -> None:
    from flowdrop_core.storage.postgres import PostgresStore

    with PostgresStore(postgres_url) as ours:
        ours.set("session", "s1", "buffer", [{"role": "user", "content": "hi"}])
    assert sniff(postgres_url) is None  # FlowDrop's own PostgresStore: store lists its slots
    assert sniff(langgraph_db) == "langgraph-postgres"
    assert sniff("redis://127.0.0.1:1/0") is None


def test_the_store_command_opens_a_checkpointer_url(
    langgraph_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["store", langgraph_db])
    out = capsys.readouterr().out
    assert code == 1
    assert "3 threads in" in out and "LangGraph PostgresSaver checkpointer" in out
    assert "unanswered_call x1" in out
    code = main(["store", langgraph_db, "--thread", "t3"])
    out = capsys.readouterr().out
    assert code == 1 and "unanswered_call [g1]" in out
    code = main(["store", langgraph_db, "--thread", "t1", "--repair"])
    captured = capsys.readouterr()
    assert code == 2 and "t1: 2 changes to write:" in captured.out and "--admin" in captured.err


@pytest.mark.parametrize("scheme", ["postgresql", "postgresql+psycopg"])
def test_a_server_that_does_not_answer_is_a_clear_error_without_the_password(scheme: str) -> None:
    from server_process import free_port

    url = f"{scheme}://flowdrop:s3cret@127.0.0.1:{free_port()}/db"
    with pytest.raises(FrameworkStoreError) as info:
        open_framework_store(url) if "+" in scheme else detect(url)
    assert "s3cret" not in str(info.value) and "***" in str(info.value)


def test_a_checkpointer_thread_is_followed_read_only(postgres_server: PostgresServer) -> None:
    """``store URL --thread ID --follow``'s library: a new turn written by PostgresSaver is
    the next update, with the thread's health; the follower wrote nothing."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from flowdrop_core.framework_stores.follow import follow_thread

    url = langgraph_postgres(_fresh(postgres_server, "lg_follow"))
    follower = follow_thread(url, "t3", interval=0.05)
    try:
        assert follower.poll() is None  # starts at the end: nothing new yet
        with PostgresSaver.from_conn_string(url) as saver:
            graph_of(saver).update_state(  # type: ignore[arg-type]
                {"configurable": {"thread_id": "t3"}}, {"messages": [HumanMessage("still?")]}
            )
        before = _digest(url, LG_TABLES)
        update = follower.poll()
        assert update is not None and not update.rewritten
        assert [s.incoming[0]["content"] for s in update.steps] == ["still?"]
        assert update.healthy is False  # the dangling call g1 is still there
        assert follower.poll() is None
        assert _digest(url, LG_TABLES) == before
    finally:
        follower.close()
