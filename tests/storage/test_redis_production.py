"""Redis as production runs it: maxmemory and eviction policies, ACL users, passwords, a cluster.

Each test starts its own real ``redis-server`` (or three, for the cluster)
on free local ports, because it changes the server's configuration.
"""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis_server import RedisServer, free_port, require_redis_server

from flowdrop_core.cli import main as cli_main
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.journal.replay import replay_journal
from flowdrop_core.storage import StorageError
from flowdrop_core.storage._base import mask_url
from flowdrop_core.storage.redis_store import RedisStore, slot_keys
from flowdrop_core.store_browser import open_browser


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own."""
    srv = RedisServer(require_redis_server(), tmp_path / "redis")
    srv.start()
    yield srv
    srv.stop()


def big(text: str) -> dict[str, Any]:
    """A user turn of about 8 KB, so a few hundred fill a small maxmemory."""
    return {"role": "user", "content": text + " " + "x" * 8000}


def _fill(url: str, slots: int, per_slot: int) -> dict[str, list[str]]:
    """Append to ``slots`` slots in turn; return each slot's acknowledged turns."""
    buf = ConversationBuffer(store=RedisStore(url, check_policy=False), journal=1000)
    acked: dict[str, list[str]] = {f"s{n}": [] for n in range(slots)}
    for j in range(per_slot):
        for sid, turns in acked.items():
            try:
                buf.append(big(f"{sid}:{j}"), {"session_id": sid})
            except StorageError as exc:
                assert f"scope_id='{sid}'" in str(exc)  # a failure names the slot
                continue
            turns.append(f"{sid}:{j}")
    return acked


def test_at_maxmemory_with_noeviction_nothing_is_lost_and_reads_work(
    server: RedisServer,
) -> None:
    """Appends fail cleanly at maxmemory (nothing written, no record) and reads still work."""
    admin = RedisStore(server.url, check_policy=False).client
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", str(int(admin.info("memory")["used_memory"]) + 3_000_000))
    acked = _fill(server.url, slots=4, per_slot=150)
    store = RedisStore(server.url)
    total = sum(len(t) for t in acked.values())
    assert 0 < total < 4 * 150  # the server filled up: some appends failed
    for sid, turns in acked.items():
        slot = ("session", sid, "chat_history")
        got = [m["content"].split(" ")[0] for m in store.get(*slot)[0]]  # a read at maxmemory
        assert got == turns  # every acknowledged turn, no failed one
        records = journal_for(store).read(slot)
        assert [r.seq for r in records] == list(range(1, len(turns) + 1))
    assert store.listing()[("session", "s0", "chat_history")][0] == len(acked["s0"])


def test_a_user_without_client_permission_still_serializes(
    server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    admin = RedisStore(server.url, check_policy=False).client
    admin.acl_setuser(
        "app",
        enabled=True,
        passwords=["+s3cretpw"],
        keys=["*"],
        channels=["*"],
        commands=["+@all", "-client", "-config"],
    )
    url = f"redis://app:s3cretpw@127.0.0.1:{server.port}/0"
    with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
        store = RedisStore(url)
        buf = ConversationBuffer(store=store, lock_timeout=5)
        results = [
            buf.append({"role": "user", "content": str(n)}, {"session_id": "s"}) for n in range(3)
        ]
    assert all(r.serialized for r in results)  # an append's lease needs no CLIENT
    with (
        caplog.at_level(logging.WARNING, logger="flowdrop_core"),
        store.lock("session", "s", "chat_history", 1.0) as held,
    ):
        assert held  # the lease was taken without CLIENT
        with store.lock("session", "s", "chat_history", 0.0) as again:  # same thread: waits
            assert again is False
    warned = [r.getMessage() for r in caplog.records if "refuses CLIENT" in r.getMessage()]
    assert len(warned) == 1
    assert all("s3cretpw" not in r.getMessage() for r in caplog.records)


def test_no_url_password_is_ever_shown(
    server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    admin = RedisStore(server.url, check_policy=False).client
    admin.config_set("requirepass", "s3cretpw")
    try:
        url = f"redis://:s3cretpw@127.0.0.1:{server.port}/0"
        ConversationBuffer(store=RedisStore(url)).append(
            {"role": "user", "content": "hi"}, {"session_id": "s"}
        )
        assert cli_main(["store", url]) == 0
        out = capsys.readouterr()
        assert "s3cretpw" not in out.out + out.err and ":***@" in out.out
        browser = open_browser(url)
        assert "s3cretpw" not in browser.target + repr(browser.store)
        bad = f"redis://:s3cretpw@127.0.0.1:{free_port()}/0"
        assert cli_main(["store", bad]) == 2
        out = capsys.readouterr()
        assert "s3cretpw" not in out.out + out.err
    finally:
        RedisStore(
            f"redis://:s3cretpw@127.0.0.1:{server.port}/0", check_policy=False
        ).client.config_set("requirepass", "")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:pw@h:1/0", "redis://:***@h:1/0"),
        ("rediss://user:pw@h/0", "rediss://user:***@h/0"),
        ("redis://pw@h/0", "redis://***@h/0"),
        ("postgresql://me:pw@db:5432/app", "postgresql://me:***@db:5432/app"),
        (
            "postgresql://db/app?password=pw&sslmode=require",
            "postgresql://db/app?password=***&sslmode=require",
        ),
        ("postgresql://me@db/app", "postgresql://me@db/app"),
        ("/var/lib/buffers.sqlite3", "/var/lib/buffers.sqlite3"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


# -- Redis Cluster ---------------------------------------------------------------------------


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[list[_ClusterNode]]:
    """Three ``redis-server --cluster-enabled yes`` nodes joined by ``redis-cli --cluster create``."""
    exe = require_redis_server()
    cli = shutil.which("redis-cli") or "/usr/bin/redis-cli"
    if not Path(cli).exists():
        pytest.skip("redis-cli not found (Debian package 'redis-tools')")
    nodes = [_ClusterNode(exe, tmp_path / f"node{n}") for n in range(3)]
    try:
        for node in nodes:
            node.start()
        subprocess.run(
            [
                cli,
                "--cluster",
                "create",
                *(f"127.0.0.1:{n.port}" for n in nodes),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        deadline = time.monotonic() + 30
        admins = [redis.Redis.from_url(n.url) for n in nodes]
        while time.monotonic() < deadline:  # every node, not the first: a client may ask any
            if all(b"cluster_state:ok" in a.execute_command("CLUSTER", "INFO") for a in admins):
                break
            time.sleep(0.1)
        for a in admins:
            a.close()
        yield nodes
    finally:
        for node in nodes:
            node.stop()


def _cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is valid and free too."""
    while True:
        port = free_port()
        if port + 10000 > 65535:
            continue
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port


class _ClusterNode(RedisServer):
    """A redis-server started with cluster mode on (its config file in its folder)."""

    def __init__(self, exe: str, folder: Path) -> None:
        super().__init__(exe, folder)
        self.port = _cluster_port()

    def args(self) -> list[str]:
        return [
            *super().args(),
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            str(self.folder / "nodes.conf"),
            "--cluster-node-timeout",
            "5000",
        ]


def test_a_slot_runs_on_one_node_of_a_real_cluster(cluster: list[_ClusterNode]) -> None:
    store = RedisStore(cluster[0].url)
    assert store.cluster is True
    sessions = [f"s{n}" for n in range(12)]  # spread over the cluster's three nodes
    for sid in sessions:
        buf = ConversationBuffer(store=store, journal=10, max_messages=3)
        for n in range(5):
            buf.append({"role": "user", "content": f"{sid}:{n}"}, {"session_id": sid})
    keyslots = set()
    for sid in sessions:
        slot = ("session", sid, "chat_history")
        assert [m["content"] for m in store.get(*slot)[0]] == [f"{sid}:{n}" for n in (2, 3, 4)]
        own = {store.client.keyslot(k) for k in slot_keys(slot)}
        assert len(own) == 1  # every key of one slot hashes to one cluster slot
        keyslots |= own
        replayed = replay_journal(journal_for(store).read(slot))
        assert replayed.notes == [] and replayed.check.passed
    owners = {store.client.nodes_manager.get_node_from_slot(k).name for k in keyslots}
    assert len(owners) > 1  # the slots really live on different nodes
    listed = store.listing()
    assert {("session", sid, "chat_history") for sid in sessions} <= set(listed)
    assert store.delete("session", "s0", "chat_history") is True
    assert ("session", "s0", "chat_history") not in store.listing()


def test_keys_of_the_layout_before_hash_tags_are_named_then_migrated(server: RedisServer) -> None:
    """A slot written under the old key names is a located error, never empty, until migrated."""
    store = RedisStore(server.url)
    slot = ("session", "old", "chat_history")
    ConversationBuffer(store=store, journal=10).append(
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        {"session_id": "old"},
    )
    for key in slot_keys(slot):  # back to the old names: no braces around the triple
        store.client.rename(key, key.replace(":{[", ":[", 1).replace("]}:", "]:", 1))
    with pytest.raises(StorageError, match=r"migrate_keys\(\)") as err:
        store.get(*slot)
    assert "scope_id='old'" in str(err.value)
    assert store.migrate_keys() == 3
    assert [m["content"] for m in store.get(*slot)[0]] == ["a", "b"]
    buf = ConversationBuffer(store=store, journal=10)
    buf.append({"role": "user", "content": "c"}, {"session_id": "old"})
    assert [r.seq for r in journal_for(store).read(slot)] == [1, 2]
    assert store.migrate_keys() == 0


def test_the_pipelined_read_of_servers_before_7_agrees_with_the_script(server: RedisServer) -> None:
    """Redis 6 cannot run a flagged script: the fallback read gives the same snapshots."""
    store = RedisStore(server.url)
    old = RedisStore(server.url)
    old._old_server = True
    slot = ("session", "s", "chat_history")
    assert old.read(*slot) == store.read(*slot) == (None, False, None)
    ConversationBuffer(store=store).append({"role": "user", "content": "a"}, {"session_id": "s"})
    assert old.read(*slot) == store.read(*slot)
    store.client.delete(slot_keys(slot)[0])  # entries gone, meta says 1
    for reader in (store, old):
        with pytest.raises(StorageError, match="keys disagree"):
            reader.read(*slot)
