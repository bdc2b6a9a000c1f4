"""Store URLs shown masked and reduced to where they point; the operator's named stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowdrop_core.storage.urls import UnsafeUrlError, mask_url, plain_redis_url
from flowdrop_core.store_browser import open_browser
from flowdrop_core.store_targets import (
    StoreTarget,
    StoreTargetsError,
    configured_targets,
    path_entry_enabled,
)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cretPW@localhost:6379/0", "redis://:***@localhost:6379/0"),
        ("redis://ann:s3cretPW@localhost:6379/0", "redis://ann:***@localhost:6379/0"),
        ("rediss://s3cretPW@host/1", "rediss://***@host/1"),
        ("redis://localhost:6379/0", "redis://localhost:6379/0"),
        ("unix://:pw@/run/redis.sock?db=2", "unix://:***@/run/redis.sock?db=2"),
        ("/srv/buffers.sqlite3", "/srv/buffers.sqlite3"),
        (
            "redis://:p@ss:word@host:99999999/x",
            "redis://:***@host:99999999/x",
        ),  # broken: still masked
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown
    assert "s3cret" not in mask_url(url)


def test_plain_redis_url_keeps_where_not_how() -> None:
    assert (
        plain_redis_url("redis://:pw@h:6380/3?socket_timeout=20&max_connections=1#x")
        == "redis://:pw@h:6380/3"
    )
    assert (
        plain_redis_url("unix://:pw@/run/r.sock?db=2&socket_timeout=9")
        == "unix://:pw@/run/r.sock?db=2"
    )


@pytest.mark.parametrize(
    "url",
    [
        "redis://x:DELE%20*%0D%0AQUIT%0D%0A@127.0.0.1:6379/0",  # protocol lines in a password
        "redis://x:a\r\nb@127.0.0.1:6379/0",
        "redis://127.0.0.1:70000/0",
        "redis://127.0.0.1:6379/zero",
        "http://127.0.0.1:80/",
    ],
)
def test_unsafe_urls_are_refused_before_connecting(url: str) -> None:
    with pytest.raises(UnsafeUrlError) as err:
        plain_redis_url(url)
    assert "DELE" not in str(err.value) or "***" in str(err.value)


def test_a_browser_shows_its_redis_target_masked(redis_url: str) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(redis_url)
    url = f"redis://:s3cretPW@{parts.hostname}:{parts.port}/0?socket_timeout=20"
    browser = open_browser(url)
    assert browser.target == f"redis://:***@{parts.hostname}:{parts.port}/0"
    assert browser.store.client.connection_pool.connection_kwargs["socket_timeout"] == 5.0  # type: ignore[attr-defined]


def test_configured_targets_from_env_and_file(tmp_path: Path) -> None:
    file = tmp_path / "stores.toml"
    file.write_text(
        '[stores.team]\ntarget = "/srv/team.sqlite3"\n'
        '[stores.scratch]\ntarget = "/tmp/s.sqlite3"\nwritable = true\n'
    )
    env = {
        "FLOWDROP_DB": "/var/lib/flowdrop/buffers.sqlite3",
        "FLOWDROP_STORES": "cache=redis://:pw@localhost:6379/0; team=/old.sqlite3\nrw=writable:/tmp/rw.sqlite3",
        "FLOWDROP_STORES_FILE": str(file),
    }
    targets = {t.name: t for t in configured_targets(env)}
    assert list(targets) == ["FLOWDROP_DB", "cache", "team", "rw", "scratch"]
    assert targets["team"].target == "/srv/team.sqlite3"  # the file wins over the variable
    assert targets["rw"] == StoreTarget("rw", "/tmp/rw.sqlite3", True, "$FLOWDROP_STORES entry 3")
    assert not targets["cache"].writable and not targets["FLOWDROP_DB"].writable
    assert targets["scratch"].writable
    assert targets["cache"].label() == "cache · redis://:***@localhost:6379/0 · read-only"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FLOWDROP_STORES": "just-a-path"}, "entry 1 ('just-a-path') is not name=target"),
        ({"FLOWDROP_STORES": "a=redis://:pw@h/0;b"}, "entry 2 ('b') is not name=target"),
        ({"FLOWDROP_STORES_FILE": "/nonexistent/stores.toml"}, "No such file"),
    ],
)
def test_a_bad_configuration_is_a_located_error(env: dict[str, str], message: str) -> None:
    with pytest.raises(StoreTargetsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        configured_targets(env)


def test_a_bad_store_file_entry_is_located(tmp_path: Path) -> None:
    file = tmp_path / "stores.toml"
    file.write_text("[stores.x]\ntarget = 3\n")
    with pytest.raises(StoreTargetsError, match=r"\[stores.x\]: needs target"):
        configured_targets({"FLOWDROP_STORES_FILE": str(file)})
    file.write_text('[stores.x]\ntarget = "/a"\nwritable = "yes"\n')
    with pytest.raises(StoreTargetsError, match="writable must be true or false"):
        configured_targets({"FLOWDROP_STORES_FILE": str(file)})


def test_path_entry_is_off_unless_switched_on() -> None:
    assert not path_entry_enabled({})
    assert not path_entry_enabled({"FLOWDROP_STORE_PATHS": "0"})
    assert path_entry_enabled({"FLOWDROP_STORE_PATHS": "1"})


def test_a_postgres_url_keeps_only_where_it_points() -> None:
    from flowdrop_core.storage.urls import plain_store_url

    url = "postgresql://me:pw@db.internal:5433/app?host=/tmp&options=-c%20statement_timeout%3D0"
    assert plain_store_url(url) == "postgresql://me:pw@db.internal:5433/app"
    with pytest.raises(UnsafeUrlError):
        plain_store_url("postgresql://me:p%0Aw@db/app")
