"""``flowdrop-buffer --version`` and ``flowdrop-buffer inspect``.

The version is ``flowdrop_core.__version__``, printed as is. ``inspect`` runs
the real Streamlit server here (from an empty folder, as an installed user
would, with the clone's files); a missing extra is a one-line error naming
it; the command line itself never imports Streamlit.
"""

from __future__ import annotations

import importlib.abc
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

import flowdrop_core
from flowdrop_core.cli import _inspect as inspect
from flowdrop_core.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
#: PEP 440's public version form (what pip and a wheel's file name accept).
PEP440 = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$")


def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert PEP440.match(flowdrop_core.__version__), flowdrop_core.__version__
    assert "__version__" in flowdrop_core.__all__
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"flowdrop-buffer {flowdrop_core.__version__}\n"


def test_the_build_reads_the_version_from_the_library() -> None:
    # One place: pyproject.toml declares the version dynamic and points at __version__.
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in text
    assert 'version = { attr = "flowdrop_core.__version__" }' in text
    assert not re.search(r'(?m)^version\s*=\s*"', text)


def test_the_library_ships_its_type_information() -> None:
    assert (Path(flowdrop_core.__file__).parent / "py.typed").is_file()


class _NoStreamlit(importlib.abc.MetaPathFinder):
    """An environment without the extra: ``streamlit`` cannot be found."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> None:
        if fullname == "streamlit" or fullname.startswith("streamlit."):
            raise ModuleNotFoundError(f"No module named {fullname!r}")
        return None


def test_inspect_without_the_extra_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [n for n in sys.modules if n == "streamlit" or n.startswith("streamlit.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoStreamlit(), *sys.meta_path])
    assert main(["inspect"]) == 2
    err = capsys.readouterr().err
    assert "extra 'inspector'" in err
    assert 'pip install "flowdrop-buffer-inspector[inspector]"' in err
    assert "Traceback" not in err


def test_inspect_listens_on_loopback_unless_told() -> None:
    parser = build_parser()
    default = parser.parse_args(["inspect"])
    assert (default.address, default.port, default.headless) == ("127.0.0.1", 8501, False)
    argv = inspect.streamlit_argv(
        parser.parse_args(["inspect", "--port", "9123", "--address", "0.0.0.0", "--headless"]),
        inspect.app_dir(),
    )
    assert argv[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert argv[4] == str(ROOT / "serve.py")  # a clone runs its own app, behind its guard
    assert argv.count("--server.address=0.0.0.0") == 1
    assert not any(a.startswith("--server.address=127") for a in argv)
    assert "--server.port=9123" in argv
    assert "--server.headless=true" in argv
    # The app's own settings travel with it (Streamlit reads config.toml from the cwd only).
    assert "--client.showSidebarNavigation=false" in argv
    assert "--server.maxUploadSize=20" in argv


@pytest.mark.parametrize("bad", ["0", "65536", "http", "-1"])
def test_inspect_refuses_a_bad_port(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--port", bad]) == 2
    assert "--port" in capsys.readouterr().err


def test_the_command_line_never_imports_streamlit() -> None:
    code = (
        "import sys; from flowdrop_core.cli import build_parser; build_parser(); "
        "import flowdrop_core.cli._inspect; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'pandas')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_inspect_serves_the_inspector_from_an_empty_folder(tmp_path: Path) -> None:
    pytest.importorskip("streamlit", reason="the extra 'inspector' is not installed")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowdrop_core", "inspect", "--port", str(port), "--headless"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            assert proc.poll() is None, "the inspector exited"
            assert time.monotonic() < deadline, "the inspector did not start within 60 s"
            time.sleep(0.3)
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.status == 200
            assert b'<div id="root">' in resp.read()
    finally:
        proc.terminate()  # the process is Streamlit itself (exec), so this stops the server
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the inspector did not stop on SIGTERM")


def test_inspect_help_says_how_to_get_the_extra(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--help"]) == 0
    assert 'pip install "flowdrop-buffer-inspector[inspector]"' in capsys.readouterr().out


class _Stdin:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("tty", "flag", "headless"),
    [(True, [], "false"), (False, [], "true"), (True, ["--headless"], "true")],
)
def test_inspect_is_headless_without_a_terminal(
    tty: bool, flag: list[str], headless: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not headless, Streamlit's first run asks for an e-mail on stdin: without a terminal
    # (make run from a script, CI) that prompt fails, so the server must not ask.
    monkeypatch.setattr(sys, "stdin", _Stdin(tty))
    argv = inspect.streamlit_argv(build_parser().parse_args(["inspect", *flag]), inspect.app_dir())
    assert f"--server.headless={headless}" in argv
