"""The reference adapter with one rule broken, to show the conformance kit catches it.

Run as ``python broken_adapter.py MODE``; each mode is a mistake an
implementation of GR-MEM could make. The kit must fail the rule it breaks.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from flowdrop_core.conformance.reference import ReferenceImplementation

MODES = (
    "appended-from-size",
    "keep-duplicates",
    "placeholder-at-end",
    "refused-reads-storage",
    "drop-count-off-by-one",
)


class Broken(ReferenceImplementation):
    """The reference implementation, wrong in one way."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.previous_count = 0
        self.raw_slots: list[list[dict[str, Any]]] = []

    def handle(self, request: Any) -> dict[str, Any]:
        reply = super().handle(request)
        op = request.get("op")
        if op == "begin":
            self.previous_count = len(request.get("buffer") or [])
            self.raw_slots = [s["messages"] for s in request.get("slots") or []]
        elif op == "append" and "count" in reply:
            reply = self._break_append(request, reply)
        elif op == "read" and reply.get("refused") and self.mode == "refused-reads-storage":
            reply = self._read_anyway(reply)
        elif op == "normalize" and self.mode == "drop-count-off-by-one":
            reply["dropped"] += 1
        return reply

    def _read_anyway(self, reply: dict[str, Any]) -> dict[str, Any]:
        """Read the blank-id slot although the scope refused (what MEM-7 forbids)."""
        if self.raw_slots:
            reply["messages"] = list(self.raw_slots[0])
            reply["count"] = len(reply["messages"])
            reply["found"] = True
        return reply

    def _break_append(self, request: Any, reply: dict[str, Any]) -> dict[str, Any]:
        if self.mode == "appended-from-size" and not reply.get("refused"):
            reply["appended"] = max(0, reply["count"] - self.previous_count)
            reply["appended_any"] = reply["appended"] > 0
        elif self.mode == "keep-duplicates" and reply.get("verdict") == "dropped":
            incoming = request["messages"]
            if isinstance(incoming, dict) and incoming.get("role") == "tool":
                reply["messages"].append(incoming)
                reply["count"] += 1
                reply["appended"] += 1
                reply["appended_any"] = True
                reply["verdict"] = "appended"
        elif self.mode == "placeholder-at-end" and "messages" in reply:
            healed = [m for m in reply["messages"] if (m.get("metadata") or {}).get("healed")]
            rest = [m for m in reply["messages"] if not (m.get("metadata") or {}).get("healed")]
            reply["messages"] = rest + healed
        elif self.mode == "refused-reads-storage" and reply.get("refused"):
            reply = self._read_anyway(reply)
        if not reply.get("refused"):
            self.previous_count = reply.get("count", self.previous_count)
        return reply


def main() -> None:
    """Serve the protocol on stdin and stdout, broken as ``sys.argv[1]`` says."""
    implementation = Broken(sys.argv[1])
    for line in sys.stdin:
        reply = implementation.handle(json.loads(line))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
