"""What a visitor can cost the served inspector: uploads without the token, a refused
recording's memory, and path entry through a proxy (AppTest, the real ASGI guard, unit tests)."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from inspector_ui import upload_guard
from inspector_ui.cache import MAX_REPLAY_MESSAGES
from inspector_ui.recording_size import too_many_items
from inspector_ui.visitor import local_request

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
MB = 1_000_000
#: The stated bound (docs/serving.md): a refused recording costs at most this many
#: times the bytes read before the refusal (the upload itself included).
REFUSAL_MULTIPLE = 3


# --------------------------------------------------------------------------- a refused recording


def many_short_messages(count: int) -> bytes:
    """A JSONL recording of ``count`` short messages (~41 bytes each, like the report's file)."""
    roles = ("user", "assistant")
    return "\n".join(
        json.dumps({"role": roles[i % 2], "content": f"m{i}"}) for i in range(count)
    ).encode()


def test_a_refused_recording_costs_a_small_multiple_of_its_bytes_and_is_returned() -> None:
    data = many_short_messages(482_196)
    assert 19 * MB < len(data) < 20 * MB  # the 19.9 MB of the report
    gc.collect()
    tracemalloc.start()
    try:
        at = AppTest.from_file(APP, default_timeout=600).run()
        at.switch_page("pages/replay.py").run()
        gc.collect()
        baseline, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        at.file_uploader(key="r_upload").upload("huge.jsonl", data, "application/jsonl").run()
        assert not at.exception, at.exception
        shown = " ".join(e.value for e in at.error).replace("\\", "")
        assert f"replays at most {MAX_REPLAY_MESSAGES:,}" in shown, shown
        _, peak = tracemalloc.get_traced_memory()
        print(f"\n{len(data) / MB:.1f} MB refused: peak +{(peak - baseline) / MB:.0f} MB")
        assert peak - baseline <= REFUSAL_MULTIPLE * len(data)
        del at
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
        assert after - baseline < 0.1 * len(data)
    finally:
        tracemalloc.stop()


def test_the_count_stops_at_the_limit() -> None:
    assert too_many_items(b"[1,2,3]", 3) is None
    assert too_many_items(b"[1,2,3,4]", 3) is not None
    assert too_many_items(b'{"messages": [{"a": "[,,,,]"}, {}]}', 2) is None  # strings skipped
    assert too_many_items(b"{}\n{}\n{}\n{}", 3) is not None  # JSONL lines
    why = too_many_items(b"[" + b"{}," * 1000 + b"{}]", 10)
    assert why is not None and "read to byte 3" in why  # stopped at the 11th item


# --------------------------------------------------------------------------- path entry


@pytest.mark.parametrize(
    ("headers", "peer", "local"),
    [
        ({"Host": "127.0.0.1:8501", "Origin": "http://127.0.0.1:8501"}, None, True),
        ({"Host": "localhost:8501", "Origin": "http://localhost:8501"}, None, True),
        ({"Host": "[::1]:8501"}, None, True),
        ({}, None, True),  # no request at all (AppTest)
        ({"Host": "127.0.0.1:8501", "X-Forwarded-For": "203.0.113.9"}, None, False),
        ({"Host": "127.0.0.1:8501", "Forwarded": "for=203.0.113.9"}, None, False),
        ({"Host": "127.0.0.1:8501", "X-Real-IP": "203.0.113.9"}, None, False),
        ({"Host": "127.0.0.1:8501", "Via": "1.1 proxy"}, None, False),
        ({"Host": "inspector.team.example"}, None, False),  # a proxy keeping the Host
        ({"Host": "127.0.0.1:8501", "Origin": "https://inspector.team.example"}, None, False),
        ({"Host": "127.0.0.1:8501"}, "192.0.2.4", False),  # a non-loopback peer
    ],
)
def test_which_requests_are_local(headers: dict[str, str], peer: str | None, local: bool) -> None:
    assert local_request(headers, peer) is local


def test_no_path_entry_or_writes_for_a_proxied_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for var in ("FLOWDROP_STORES_FILE", "FLOWDROP_DB", "FLOWDROP_REDIS_URL", "FLOWDROP_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FLOWDROP_STORES", f"team={tmp_path / 'team.sqlite3'}")
    monkeypatch.setenv("FLOWDROP_STORE_PATHS", "1")
    proxied = {"Host": "127.0.0.1:8501", "X-Forwarded-For": "203.0.113.9"}
    # The request as a loopback reverse proxy hands it on (read through st.context).
    monkeypatch.setattr(
        "inspector_ui.visitor._request_headers_and_peer", lambda: (proxied, None), raising=False
    )
    was = config.get_option("server.address")
    try:
        config.set_option("server.address", "127.0.0.1")
        at = AppTest.from_file(APP, default_timeout=60).run()
        at.switch_page("pages/store.py").run()
        assert not at.exception, at.exception
        assert len(at.selectbox(key="s_store").options) == 1  # no "type a path" entry
        at.selectbox(key="s_store").set_value("team").run()
        assert at.toggle(key="s_write").disabled  # the operator's read-only store
    finally:
        config.set_option("server.address", was)


# --------------------------------------------------------------------------- the upload guard


@pytest.fixture
def guard_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("FLOWDROP_TOKEN", "team-secret-42")
    monkeypatch.setenv(upload_guard.SESSION_CAP_ENV, "3")
    monkeypatch.setenv(upload_guard.TOTAL_CAP_ENV, "5")
    monkeypatch.setattr(upload_guard, "held_bytes", lambda: ({}, 0))
    yield
    upload_guard._authorized.clear()
    upload_guard._in_flight.clear()


def put(session: str, size: int, file_id: str = "f1") -> tuple[int, bool]:
    """One PUT through the guard; (status, whether Streamlit's handler was reached)."""
    reached: list[bool] = []
    sent: list[dict[str, Any]] = []

    async def downstream(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "PUT",
        "path": f"/_stcore/upload_file/{session}/{file_id}",
        "headers": [(b"content-length", str(size).encode())],
    }
    asyncio.run(upload_guard.UploadGuard(downstream)(scope, receive, send))
    return sent[0]["status"], bool(reached)


def test_no_upload_reaches_streamlit_for_a_session_without_the_token(guard_env: None) -> None:
    assert put("visitor", 1_000) == (403, False)
    upload_guard.authorize("member")
    assert put("member", 1_000) == (204, True)


def test_uploads_in_flight_are_capped_per_session_and_in_total(
    guard_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    upload_guard.authorize("a")
    upload_guard.authorize("b")
    assert upload_guard.reserve("a", "f1", 2 * 2**20) is None  # arriving, not yet stored
    assert put("a", 2 * 2**20, "f2") == (413, False)  # 4 MB > the session's 3 MB
    assert upload_guard.reserve("b", "f1", 2 * 2**20) is None
    assert put("b", 2 * 2**20, "f2") == (413, False)  # and 6 MB > the 5 MB in total
    upload_guard.release("a", 2 * 2**20)
    upload_guard.release("b", 2 * 2**20)
    assert put("a", 2 * 2**20) == (204, True)  # released: room again


def test_stored_uploads_count_and_go_with_the_session(
    guard_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    upload_guard.authorize("a")
    monkeypatch.setattr(upload_guard, "held_bytes", lambda: ({"a": 3 * 2**20}, 3 * 2**20))
    assert put("a", 1_000) == (413, False)
    monkeypatch.setattr(upload_guard, "held_bytes", lambda: ({}, 0))  # the session ended
    assert put("a", 1_000) == (204, True)


class _FakeManager:
    def __init__(self) -> None:
        self.file_storage: dict[str, dict[str, Any]] = {"gone": {"f": object()}}
        self.removed: list[str] = []

    def remove_session_files(self, session_id: str) -> None:
        self.removed.append(session_id)
        self.file_storage.pop(session_id, None)


class _FakeRuntime:
    def __init__(self) -> None:
        self.uploaded_file_mgr = _FakeManager()
        self.active = {"live"}
        self.closed: list[str] = []

    def is_active_session(self, session_id: str) -> bool:
        return session_id in self.active

    def close_session(self, session_id: str) -> None:
        self.closed.append(session_id)


def test_the_sweeper_closes_sessions_ended_for_the_ttl_only(
    guard_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _FakeRuntime()
    monkeypatch.setattr("streamlit.runtime.exists", lambda: True)
    monkeypatch.setattr("streamlit.runtime.get_instance", lambda: fake)
    was = config.get_option("server.disconnectedSessionTTL")
    try:
        config.set_option("server.disconnectedSessionTTL", 120)
        upload_guard.note_session("live")
        upload_guard.note_session("gone")
        upload_guard.authorize("gone")
        assert upload_guard.sweep(now=1e9) == ["gone"]  # long past the TTL
        assert fake.closed == ["gone"] and fake.uploaded_file_mgr.removed == ["gone"]
        assert not upload_guard.is_authorized("gone")
        fake.active.discard("live")  # the tab closes now: kept for a reconnect ...
        assert upload_guard.sweep(now=1e9 + 60) == []
        assert upload_guard.sweep(now=1e9 + 111) == ["live"]  # ... until just before the TTL
    finally:
        config.set_option("server.disconnectedSessionTTL", was)
        upload_guard._seen.clear()
