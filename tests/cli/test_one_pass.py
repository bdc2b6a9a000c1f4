"""Replay's steps, reports and findings stay what they were before the one-pass reader.

``replay`` (the table and ``--json``), ``doctor --json`` and ``lint --json`` are
run in this process on every file of ``sample_data/`` and on a generated
100,000-message agent recording; each output (exit status, stdout, stderr) is
hashed and compared with ``one_pass_golden.json``, whose hashes were computed
by the code before loading became one pass. A difference names the file and the
command. Rewrite the hashes (only after checking a change is meant) with
``python tests/cli/test_one_pass.py``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from pathlib import Path

import pytest

from flowdrop_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("one_pass_golden.json")
SAMPLES = sorted(
    p.relative_to(ROOT).as_posix()
    for p in (ROOT / "sample_data").rglob("*")
    if p.is_file() and p.suffix != ".md"
)
COMMANDS: dict[str, list[str]] = {
    "replay": ["replay"],
    "replay --json": ["replay", "--json"],
    "doctor --json": ["doctor", "--json"],
    "lint --json": ["lint", "--json"],
}
#: The generated recording's size and its name in the outputs (its folder is replaced).
LONG_MESSAGES = 100_000
LONG_NAME = "long-100k.jsonl"


def digest(argv: list[str], folder: str = "") -> str:
    """sha256 of one in-process run's exit status, stdout and stderr (``folder`` made ``<tmp>``)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    text = f"{status}\n{out.getvalue()}\n{err.getvalue()}"
    if folder:
        text = text.replace(folder, "<tmp>")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sample_digests(path: str) -> dict[str, str]:
    return {name: digest([*argv, path]) for name, argv in COMMANDS.items()}


def long_recording(folder: Path) -> Path:
    """The generated agent recording: tool calls, results, re-fired results, dangling calls."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from gen_long_conversation import generate, render
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    path = folder / LONG_NAME
    path.write_text(render(generate(LONG_MESSAGES)), encoding="utf-8")
    return path


def long_digests(path: Path) -> dict[str, str]:
    folder = str(path.parent)
    return {name: digest([*argv, str(path)], folder) for name, argv in COMMANDS.items()}


@pytest.fixture(scope="session")
def long_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return long_recording(tmp_path_factory.mktemp("one-pass"))


@pytest.fixture(scope="module")
def golden() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # outputs name the sample by its path from the project's root


def test_every_sample_has_a_golden_hash(golden: dict[str, dict[str, str]]) -> None:
    assert sorted(k for k in golden if k != LONG_NAME) == SAMPLES


@pytest.mark.parametrize("path", SAMPLES)
def test_sample_outputs_are_unchanged(path: str, golden: dict[str, dict[str, str]]) -> None:
    assert sample_digests(path) == golden[path]


def test_long_recording_outputs_are_unchanged(
    long_path: Path, golden: dict[str, dict[str, str]]
) -> None:
    assert long_digests(long_path) == golden[LONG_NAME]


def write_golden() -> None:
    """Compute every hash with the code as it is and write ``one_pass_golden.json``."""
    import os
    import tempfile

    os.chdir(ROOT)
    data = {path: sample_digests(path) for path in SAMPLES}
    with tempfile.TemporaryDirectory() as folder:
        data[LONG_NAME] = long_digests(long_recording(Path(folder)))
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN} ({len(data)} files)")


if __name__ == "__main__":
    write_golden()
