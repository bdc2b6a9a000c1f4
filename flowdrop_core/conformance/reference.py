"""This library behind the conformance kit's protocol: one request in, one reply out.

:class:`ReferenceImplementation` is what ``python -m
flowdrop_core.conformance.adapter`` serves over stdin/stdout, and what our own
standing runs in-process. Each request is a JSON object with an ``op``; the
reply is a JSON object (the fields of each op are in docs/conformance.md and
:data:`flowdrop_core.conformance.protocol.REQUEST_SCHEMA`). An input error is
``{"error": TEXT}``; a tier refusal (MEM-9, MEM-15) is ``{"denied": true,
"rule": ID}``. Neither changes anything.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core.assembly import UNWIRED, assemble_messages
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.events import EventKind
from flowdrop_core.provider import normalize
from flowdrop_core.replay import Timeline
from flowdrop_core.scenario import Scenario, ScenarioConfig, ScenarioStep
from flowdrop_core.storage import MemoryStore
from flowdrop_core.text import text_to_message
from flowdrop_core.tiers import TierDenied, owns

__all__ = ["ReferenceImplementation"]

Reply = dict[str, Any]


class ReferenceImplementation:
    """The kit's protocol over this library: a fresh in-memory store per ``begin``."""

    implementation = "flowdrop-buffer-inspector"

    def __init__(self) -> None:
        self._timeline: Timeline | None = None

    def handle(self, request: Mapping[str, Any]) -> Reply:
        """The reply to one request; never raises for a request it can read."""
        op = request.get("op")
        handler = _OPS.get(op) if isinstance(op, str) else None
        if handler is None:
            return {"error": f"unknown op {op!r} (expected one of {', '.join(sorted(_OPS))})"}
        try:
            return handler(self, request)
        except TierDenied as exc:
            return {"denied": True, "rule": exc.rule, "reason": str(exc)}
        except (FlowdropError, ValueError, TypeError) as exc:
            return {"error": str(exc)}

    # -- ops ----------------------------------------------------------------------------

    def _hello(self, request: Mapping[str, Any]) -> Reply:
        from flowdrop_core.conformance.protocol import OPS, PROTOCOL_VERSION

        return {
            "implementation": self.implementation,
            "protocol": PROTOCOL_VERSION,
            "ops": list(OPS),
        }

    def _begin(self, request: Mapping[str, Any]) -> Reply:
        config = ScenarioConfig(**dict(request.get("config") or {}))
        store = MemoryStore()
        for slot in request.get("slots") or ():
            store.set(str(config.scope), slot["scope_id"], config.key, list(slot["messages"]))
        conv = ConversationBuffer(
            scope=config.scope,
            key=config.key,
            max_messages=config.max_messages,
            store=store,
            tier=request.get("tier", "drive"),
        )
        scenario = Scenario(
            name="conformance",
            config=config,
            context=request.get("context"),
            buffer=list(request.get("buffer") or []),
            steps=[ScenarioStep(append=[], context=c) for c in request.get("then") or ()],
        )
        self._timeline = Timeline(scenario, conv)
        return {}

    def _need(self) -> Timeline:
        if self._timeline is None:
            raise ValueError("no session: send a 'begin' request first")
        return self._timeline

    def _append(self, request: Mapping[str, Any]) -> Reply:
        timeline = self._need()
        if request.get("lock_held"):
            return self._append_while_locked(timeline, request)
        record = timeline.append_step(request.get("messages", []), context=request.get("context"))
        return {
            "count": record.count,
            "appended": record.appended,
            "appended_any": record.appended_any,
            "refused": record.refused,
            "resolved_scope_id": record.resolved_scope_id,
            "found": record.found,
            "verdict": record.verdict,
            "messages": timeline.buffer_after(len(timeline.steps)),
        }

    def _append_while_locked(self, timeline: Timeline, request: Mapping[str, Any]) -> Reply:
        """MEM-12: append while another holder keeps the slot lock past the bounded wait."""
        conv = timeline.buffer
        res = conv.resolve(request.get("context"))
        wait = float(request.get("lock_timeout", 0.05))
        if res.refused:
            raise ValueError("lock_held needs a context that resolves the scope")
        slot = (str(res.scope), res.resolved_scope_id, conv.key)
        held = threading.Event()
        release = threading.Event()

        def holder() -> None:
            with conv.store.lock(*slot, 5.0):
                held.set()
                release.wait(10.0)

        thread = threading.Thread(target=holder, daemon=True)
        thread.start()
        held.wait(5.0)
        previous, conv.lock_timeout = conv.lock_timeout, wait
        try:
            result = conv.append(request.get("messages", []), request.get("context"))
        finally:
            conv.lock_timeout = previous
            release.set()
            thread.join(5.0)
        return {
            "count": result.count,
            "appended": result.appended,
            "appended_any": result.appended_any,
            "serialized": result.serialized,
            "warnings": [str(e.kind) for e in result.events if e.kind is EventKind.UNSERIALIZED],
            "messages": conv.messages(request.get("context")),
        }

    def _concurrent(self, request: Mapping[str, Any]) -> Reply:
        """MEM-12: every append of ``appends`` at once, from its own thread, to one slot."""
        conv = self._need().buffer
        context = request.get("context")
        appends = list(request.get("appends") or ())
        start = threading.Barrier(len(appends) + 1)
        failures: list[str] = []

        def one(messages: Any) -> None:
            start.wait(5.0)
            try:
                conv.append(messages, context)
            except FlowdropError as exc:
                failures.append(str(exc))

        threads = [threading.Thread(target=one, args=(m,)) for m in appends]
        for thread in threads:
            thread.start()
        start.wait(5.0)
        for thread in threads:
            thread.join(30.0)
        if failures:
            return {"error": "; ".join(failures)}
        messages = conv.messages(context)
        return {"count": len(messages), "messages": messages}

    def _read(self, request: Mapping[str, Any]) -> Reply:
        conv = self._need().buffer
        result = conv.read(request.get("context"))
        return {
            "refused": result.refused,
            "resolved_scope_id": result.resolved_scope_id,
            "found": result.count > 0,
            "count": result.count,
            "messages": result.messages or [],
        }

    def _clear(self, request: Mapping[str, Any]) -> Reply:
        return {"cleared": self._need().buffer.clear(request.get("context"))}

    def _normalize(self, request: Mapping[str, Any]) -> Reply:
        messages, dropped = normalize(request.get("messages") or [])
        return {"messages": messages, "dropped": dropped}

    def _text(self, request: Mapping[str, Any]) -> Reply:
        message = text_to_message(
            request.get("text"), request.get("role", "user"), request.get("tool_call_id")
        )
        return {"message": message}

    def _assemble(self, request: Mapping[str, Any]) -> Reply:
        inputs = [
            (str(port.get("port", index)), port.get("value", UNWIRED))
            for index, port in enumerate(request.get("inputs") or ())
        ]
        return {"messages": assemble_messages(inputs), "verdict": "assembled"}

    def _owns(self, request: Mapping[str, Any]) -> Reply:
        return {"owns": owns(request.get("principal"), request.get("owner"))}


_OPS: dict[str, Callable[[ReferenceImplementation, Mapping[str, Any]], Reply]] = {
    "hello": ReferenceImplementation._hello,
    "begin": ReferenceImplementation._begin,
    "append": ReferenceImplementation._append,
    "concurrent": ReferenceImplementation._concurrent,
    "read": ReferenceImplementation._read,
    "clear": ReferenceImplementation._clear,
    "normalize": ReferenceImplementation._normalize,
    "text": ReferenceImplementation._text,
    "assemble": ReferenceImplementation._assemble,
    "owns": ReferenceImplementation._owns,
}
