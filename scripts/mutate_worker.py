"""Fork server of ``scripts/mutate.py``: pay pytest's and Hypothesis's import once per job.

Started once per parallel job in that job's private copy of the repository.
It imports the test tools (pytest, Hypothesis, pydantic ...) but never
``flowdrop_core`` nor a test module, then reads one JSON request per line on
stdin (``{"args": [...], "env": {...}, "timeout": seconds}``), forks, and runs
``pytest.main(args)`` in the child, so each mutant's tests see a fresh
interpreter state with the mutated file imported for the first time. It
answers one JSON line per request: ``{"status": ..., "seconds": ...}`` with
the same statuses as a subprocess run (killed, survived, timeout, error rc=N).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import time

import pytest

#: What every child would import anyway; never the library nor a test module.
PRELOAD = ("hypothesis", "hypothesis.strategies", "_hypothesis_pytestplugin", "pydantic", "redis")
for _name in PRELOAD:
    with contextlib.suppress(ImportError):
        importlib.import_module(_name)


def _status(code: int) -> str:
    if code == 0:
        return "survived"
    if code in (1, 2, 3, 4):  # tests failed; collection, conftest or import failed
        return "killed"
    return f"error rc={code}"


def _child(args: list[str], env: dict[str, str]) -> None:
    """Run pytest in this (forked) process and leave with its exit code."""
    os.setpgid(0, 0)
    code = 3
    try:
        os.environ.update(env)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        code = int(pytest.main(args))
    finally:
        os._exit(code)


def _wait(pid: int, timeout: float) -> tuple[str, float]:
    start = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        took = time.monotonic() - start
        if done:
            code = os.waitstatus_to_exitcode(status)
            return _status(code if code >= 0 else 128 - code), took
        if took > timeout:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", took
        time.sleep(0.02)


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request["args"], request["env"])
        status, took = _wait(pid, float(request["timeout"]))
        print(json.dumps({"status": status, "seconds": took}), flush=True)


if __name__ == "__main__":
    main()
