"""PostgresStore specifics on a real throwaway cluster: URL sources, schemas, first use, failures."""

from __future__ import annotations

import pytest
from postgres_server import free_port

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import StorageError
from flowdrop_core.storage.postgres import POSTGRES_ENV, PostgresStore
from flowdrop_core.store_browser import open_browser

SLOT = ("session", "s1", "chat_history")
CTX = {"session_id": "s1"}


def test_url_from_the_environment(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(POSTGRES_ENV, postgres_url)
    PostgresStore().set(*SLOT, [{"role": "user", "content": "a"}])
    assert PostgresStore(postgres_url).get(*SLOT)[1] is True
    monkeypatch.delenv(POSTGRES_ENV)
    with pytest.raises(ValueError, match=POSTGRES_ENV):
        PostgresStore()


def test_schemas_separate_deployments(postgres_url: str) -> None:
    one, two = PostgresStore(postgres_url), PostgresStore(postgres_url, schema="other_app")
    try:
        one.set(*SLOT, [{"role": "user", "content": "one"}])
        assert two.get(*SLOT) == (None, False) and two.listing() == {}
        two.create_tables()  # idempotent after the first use made them
        assert two.slots() == [] and one.slots() == [SLOT]
    finally:
        import psycopg

        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS other_app CASCADE")


@pytest.mark.parametrize("schema", ["", "a-b", 'x"; DROP TABLE y; --', "1abc"])
def test_a_schema_must_be_a_plain_identifier(schema: str) -> None:
    with pytest.raises(ValueError, match="schema"):
        PostgresStore("postgresql://u@127.0.0.1/db", schema=schema)


def test_browsing_read_only_creates_nothing(postgres_url: str) -> None:
    browser = open_browser(postgres_url)
    assert browser.kind == "postgres" and browser.slots() == []
    with pytest.raises(StorageError, match="no FlowDrop tables"):
        PostgresStore(postgres_url, create=False).set(*SLOT, [])
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regnamespace('flowdrop')").fetchone() == (None,)


def test_an_unreachable_server_is_a_located_error_without_the_password() -> None:
    store = PostgresStore(f"postgresql://me:s3cret@127.0.0.1:{free_port()}/db", connect_timeout=2)
    buf = ConversationBuffer(store=store, journal=5)
    with pytest.raises(StorageError) as err:
        buf.append({"role": "user", "content": "a"}, CTX)
    text = str(err.value)
    assert "scope_id='s1'" in text and "Postgres 127.0.0.1:" in text and "s3cret" not in text
    assert "s3cret" not in repr(store) and store.display_url.count("***") == 1


def test_a_plain_value_is_not_a_buffer(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.set(*SLOT, {"not": "a list"})
    with pytest.raises(StorageError, match="not a conversation buffer"):
        ConversationBuffer(store=store).append({"role": "user", "content": "a"}, CTX)
    assert store.get(*SLOT) == ({"not": "a list"}, True)
