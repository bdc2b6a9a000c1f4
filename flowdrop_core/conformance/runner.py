"""Run the conformance kit against an implementation: in this process, or a command over JSON Lines.

:func:`run_kit` sends every exchange of every case through a
:class:`Transport` and judges each reply (:func:`~flowdrop_core.conformance.protocol.mismatches`).
A case stops at its first failing exchange, since later ones build on its
state. :class:`Subprocess` starts ``COMMAND`` once and speaks the protocol over
its stdin and stdout; an adapter that dies, is silent past the timeout, or
answers with something that is not one JSON object fails the case at hand
with that reason (and every case after it, once it has exited).
"""

from __future__ import annotations

import contextlib
import json
import queue
import shlex
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from flowdrop_core._errors import FlowdropError
from flowdrop_core.conformance._report import ConformanceReport, ExampleResult, standing_of
from flowdrop_core.conformance.protocol import mismatches
from flowdrop_core.conformance.reference import ReferenceImplementation

__all__ = ["AdapterError", "InProcess", "Subprocess", "Transport", "run_kit"]


class AdapterError(FlowdropError, RuntimeError):
    """The adapter under test broke the protocol: it exited, timed out, or sent no JSON object."""


class Transport(Protocol):
    """Where requests go: one reply per request, in order."""

    def send(self, request: Mapping[str, Any]) -> Any:
        """The reply to ``request`` (raises :class:`AdapterError` when there is none)."""
        ...

    def close(self) -> None:
        """Stop the implementation."""
        ...


class InProcess:
    """An implementation in this process; requests cross as JSON, as they would over the wire."""

    def __init__(self, implementation: ReferenceImplementation | None = None) -> None:
        self.implementation = implementation or ReferenceImplementation()

    def send(self, request: Mapping[str, Any]) -> Any:
        reply = self.implementation.handle(json.loads(json.dumps(request)))
        return json.loads(json.dumps(reply))

    def close(self) -> None:
        return None


class Subprocess:
    """``command`` started once; one request line in, one reply line out, each within ``timeout`` s."""

    def __init__(self, command: str, timeout: float = 30.0) -> None:
        self.command = command
        self.timeout = timeout
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        try:
            self._proc = subprocess.Popen(
                shlex.split(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                encoding="utf-8",
                bufsize=1,
            )
        except OSError as exc:
            self._stderr.close()
            raise AdapterError(f"cannot start {command!r}: {exc}") from None
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        for line in stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read()[-600:].decode("utf-8", "replace").strip()
        return f"; its stderr ends: {tail}" if tail else ""

    def send(self, request: Mapping[str, Any]) -> Any:
        op = request.get("op")
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise AdapterError(
                f"the adapter exited before op {op!r}{self._stderr_tail()}"
            ) from None
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise AdapterError(f"no reply to op {op!r} within {self.timeout:g} s") from None
        if line is None:
            self._lines.put(None)  # stays at the end for every later request
            raise AdapterError(f"the adapter exited at op {op!r}{self._stderr_tail()}")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AdapterError(
                f"the reply to op {op!r} is not JSON ({exc}): {line[:200]!r}"
            ) from None
        if not isinstance(reply, dict):
            raise AdapterError(f"the reply to op {op!r} is not a JSON object: {line[:200]!r}")
        return reply

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 300 else text[:297] + "..."


def run_case(case: Mapping[str, Any], transport: Transport) -> ExampleResult:
    """One case through ``transport``: passed, the verdicts it saw, and what did not match."""
    verdicts: list[str] = []
    problems: list[str] = []
    for number, exchange in enumerate(case["exchanges"], start=1):
        send = exchange["send"]
        try:
            reply = transport.send(send)
        except AdapterError as exc:
            problems.append(f"exchange {number} ({send.get('op')}): {exc}")
            break
        if isinstance(reply, dict) and isinstance(reply.get("verdict"), str):
            verdicts.append(reply["verdict"])
        missed = mismatches(exchange.get("expect", {}), reply)
        if missed:
            problems += [
                f"exchange {number} ({send.get('op')}): {field}: expected {_short(want)}, "
                f"got {_short(got)}"
                for field, want, got in missed
            ]
            break
    return ExampleResult(
        name=case["name"],
        title=case.get("title", ""),
        passed=not problems,
        verdicts=tuple(verdicts),
        mismatches=tuple(problems),
    )


def run_kit(
    cases: Iterable[Mapping[str, Any]],
    transport: Transport,
    *,
    implementation: str | None = None,
) -> ConformanceReport:
    """The standing of the implementation behind ``transport``: every case run, rule by rule."""
    name = implementation
    if name is None:
        try:
            hello = transport.send({"op": "hello"})
        except AdapterError:
            hello = {}
        name = str(hello.get("implementation") or "unnamed implementation")
    results = [(case, run_case(case, transport)) for case in cases]
    return standing_of(results, implementation=name)
