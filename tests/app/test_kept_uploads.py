"""Unit tests: uploads kept on disk by digest (budget, retention, restart, hostile digests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector_ui.kept_uploads import (
    DAY,
    MB,
    KeepSettingsError,
    UploadKeeper,
    digest_of,
    keeper_from_env,
    valid_digest,
)

ROOT = Path(__file__).resolve().parents[2]


def test_an_upload_past_the_budget_evicts_the_oldest(tmp_path: Path) -> None:
    keeper = UploadKeeper(tmp_path, max_bytes=250, max_age=DAY)
    a = keeper.put("a.json", b"a" * 100, now=1000.0)
    b = keeper.put("b.json", b"b" * 100, now=1001.0)
    assert a and b
    assert keeper.get(a, now=1002.0) is not None  # opening renews a: b is now the oldest
    c = keeper.put("c.json", b"c" * 100, now=1003.0)
    assert c
    assert keeper.get(b, now=1004.0) is None
    assert keeper.get(a, now=1004.0) is not None
    got = keeper.get(c, now=1004.0)
    assert got is not None and got.name == "c.json" and got.data == b"c" * 100
    assert keeper.total_bytes() == 200
    assert keeper.put("big.json", b"x" * 251) is None  # never kept, nothing evicted for it
    assert keeper.total_bytes() == 200


def test_an_upload_past_its_retention_is_gone(tmp_path: Path) -> None:
    keeper = UploadKeeper(tmp_path, max_bytes=MB, max_age=60.0)
    old = keeper.put("old.json", b"old", now=1000.0)
    assert old and keeper.get(old, now=1059.0) is not None  # renewed at 1059
    assert keeper.get(old, now=1118.0) is not None
    assert keeper.get(old, now=1179.0) is None  # 61 s unused
    assert sorted(os.listdir(tmp_path)) == []  # its name went with it


def test_a_kept_upload_survives_a_server_restart(tmp_path: Path) -> None:
    env = {**os.environ, "FLOWDROP_UPLOAD_KEEP_DIR": str(tmp_path)}
    data = b'[{"role": "user", "content": "hello"}]'
    put = (
        "from inspector_ui.kept_uploads import keeper_from_env as k; print(k().put('r.json', {!r}))"
    )
    first = subprocess.run(
        [sys.executable, "-c", put.format(data)], env=env, cwd=ROOT, capture_output=True, text=True
    )
    digest = first.stdout.strip()
    assert digest == digest_of(data), first.stderr
    get = f"from inspector_ui.kept_uploads import keeper_from_env as k; u = k().get({digest!r}); print(u.name, u.data.decode())"
    second = subprocess.run(
        [sys.executable, "-c", get], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert second.stdout.strip() == f"r.json {data.decode()}", second.stderr


@pytest.mark.parametrize(
    "value",
    ["../../etc/passwd", "A" * 64, "0" * 63, "0" * 65, "0" * 63 + "/", "0" * 64 + ".name", ""],
)
def test_a_digest_that_is_not_hex_of_the_right_length_names_no_file(
    tmp_path: Path, value: str
) -> None:
    keeper = UploadKeeper(tmp_path / "kept", max_bytes=MB, max_age=DAY)
    (tmp_path / "passwd").write_text("secret")
    assert not valid_digest(value)
    assert keeper.get(value) is None
    keeper.drop(value)
    assert (tmp_path / "passwd").exists()


def test_a_damaged_file_is_gone_not_another_recording(tmp_path: Path) -> None:
    keeper = UploadKeeper(tmp_path, max_bytes=MB, max_age=DAY)
    digest = keeper.put("a.json", b"one")
    assert digest
    (tmp_path / digest).write_bytes(b"two")
    assert keeper.get(digest) is None
    assert not (tmp_path / digest).exists()


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FLOWDROP_UPLOAD_KEEP_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    keeper = keeper_from_env()
    assert keeper is not None and keeper.folder == tmp_path / "flowdrop" / "uploads"
    assert keeper.max_bytes == 500 * MB and keeper.max_age == 7 * DAY
    monkeypatch.setenv("FLOWDROP_UPLOAD_KEEP_MB", "0.5")
    monkeypatch.setenv("FLOWDROP_UPLOAD_KEEP_DAYS", "2")
    keeper = keeper_from_env()
    assert keeper is not None and keeper.max_bytes == MB // 2 and keeper.max_age == 2 * DAY
    monkeypatch.setenv("FLOWDROP_UPLOAD_KEEP_DAYS", "soon")
    with pytest.raises(KeepSettingsError, match="FLOWDROP_UPLOAD_KEEP_DAYS='soon'"):
        keeper_from_env()
    monkeypatch.setenv("FLOWDROP_UPLOAD_KEEP_DIR", "off")
    assert keeper_from_env() is None


def test_the_guard_names_an_oversized_upload_and_passes_a_fitting_one_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from inspector_ui import upload_guard

    monkeypatch.setattr(upload_guard, "_max_upload_bytes", lambda: 100)
    monkeypatch.setattr(upload_guard, "reserve", lambda *a: None)
    monkeypatch.setattr(upload_guard, "token_required", lambda: False)

    def multipart(name: str, size: int) -> bytes:
        head = f'--xyz\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        return (
            head.encode()
            + b"Content-Type: application/json\r\n\r\n"
            + b"x" * size
            + b"\r\n--xyz--\r\n"
        )

    async def call(body: bytes) -> tuple[list[int], bytes]:
        got = bytearray()

        async def app(scope, receive, send):  # Streamlit's handler: reads the whole body
            while True:
                message = await receive()
                got.extend(message.get("body", b""))
                if not message.get("more_body"):
                    break
            await send({"type": "http.response.start", "status": 204, "headers": []})

        chunks = [body[:60], body[60:]]
        sent: list[int] = []

        async def receive():
            return {"type": "http.request", "body": chunks.pop(0), "more_body": bool(chunks)}

        async def send(message):
            if message["type"] == "http.response.start":
                sent.append(message["status"])

        guard = upload_guard.UploadGuard(app)
        guard._sweeper = object()  # type: ignore[assignment]  # no sweeper task in this test
        scope = {
            "type": "http",
            "method": "PUT",
            "path": "/_stcore/upload_file/sid-1/file-1",
            "headers": [
                (b"content-type", b"multipart/form-data; boundary=xyz"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
        await guard(scope, receive, send)
        return sent, bytes(got)

    big = multipart("too_big.json", 150)
    assert asyncio.run(call(big)) == ([413], b"")  # refused: the app never read a byte
    assert upload_guard.take_oversized("sid-1") == ("too_big.json", 150, 100)
    assert upload_guard.take_oversized("sid-1") is None  # said once
    fits = multipart("fits.json", 95)  # the body is over 100 bytes, the file is not
    assert asyncio.run(call(fits)) == ([204], fits)  # passed on whole, first chunk included
    assert upload_guard.take_oversized("sid-1") is None
