"""The reference adapter: this library on the conformance kit's protocol, over stdin and stdout.

``python -m flowdrop_core.conformance.adapter`` reads one JSON request per
line and writes one JSON reply per line, in order, until stdin ends. It is
what ``flowdrop-buffer conformance --against`` expects of any
implementation (docs/conformance.md); a line that is not a JSON object gets
``{"error": ...}``, never silence.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from flowdrop_core.conformance.reference import ReferenceImplementation

__all__ = ["main", "serve"]


def serve(stdin: TextIO, stdout: TextIO) -> None:
    """Answer every request line of ``stdin`` on ``stdout``."""
    implementation = ReferenceImplementation()
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as exc:
            reply: dict[str, object] = {"error": f"not JSON: {exc}"}
        else:
            if isinstance(request, dict):
                reply = implementation.handle(request)
            else:
                reply = {"error": "a request is one JSON object"}
        stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        stdout.flush()


def main() -> None:
    """Serve stdin and stdout."""
    serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
