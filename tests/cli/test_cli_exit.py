"""The program's own exit (``python -m flowdrop_core``): all output written, the same status.

After a replay on the memory store the program ends the process without
freeing what the replay built (``console_main``); these tests run the real
program as a child process and hold it to what ``main`` does in process.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flowdrop_core.cli import _output as output
from flowdrop_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "sample_data" / "long_conversation.jsonl"  # 5,002 messages, this project's generator


def _program(*args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    # Block-buffered output, as a user's shell gives it, so an unflushed end would be lost.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "flowdrop_core", *args],
        cwd=ROOT,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        check=False,
    )


@pytest.mark.parametrize("extra", [[], ["--json"], ["--storage-sqlite"]])
def test_the_program_writes_all_of_a_long_replay_and_exits_as_main_returns(
    extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["replay", str(LONG), *[e for e in extra if e != "--storage-sqlite"]]
    if "--storage-sqlite" in extra:  # a scenario on the SQLite store exits the ordinary way
        scenario = tmp_path / "sqlite.json"
        scenario.write_text(
            '{"name": "sqlite", "config": {"storage": "sqlite"}, "context": {"session_id": "s"},'
            ' "steps": [{"append": {"role": "user", "content": "hi"}}]}',
            encoding="utf-8",
        )
        args = ["replay", str(scenario)]
    assert main(args) == 0
    expected = capsys.readouterr().out
    child = _program(*args)
    assert child.returncode == 0, child.stderr
    assert child.stdout == expected  # every byte flushed before the process ended
    assert child.stderr == ""


def test_a_failed_write_is_still_an_error_and_exit_2() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        child = _program("replay", str(LONG), stdout=full.fileno())
    assert child.returncode == 2
    assert "No space left on device" in child.stderr


def test_bad_input_exits_2_with_its_message() -> None:
    child = _program("replay", str(ROOT / "no-such-file.jsonl"))
    assert child.returncode == 2
    assert child.stdout == ""
    assert child.stderr.startswith("flowdrop-buffer: error: cannot read ")


@pytest.mark.parametrize("program_entry", [False, True])
def test_the_collector_is_back_on_unless_the_process_is_about_to_end(
    program_entry: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In process, main pauses the collector for a replay and switches it back
    # on; under the program's entry, whose process ends right after, switching
    # it on would only make one collection scan everything the replay built.
    monkeypatch.setitem(output.EXIT_AFTER_COMMAND, "on", program_entry)
    monkeypatch.setattr(output, "_LEFT", [])
    assert gc.isenabled()
    try:
        assert main(["replay", str(LONG)]) == 0
        assert gc.isenabled() is not program_entry
        assert output.left_to_exit() is program_entry
    finally:
        gc.enable()
    assert capsys.readouterr().out.startswith("long_conversation: ")
