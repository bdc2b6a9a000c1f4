"""What every ``flowdrop-buffer`` command prints goes through here, escaped the same way.

Data from input is shown, never obeyed: a message, an id or a file name can
hold ESC sequences, C1 controls (U+009B is a one-byte CSI), bidi overrides
(U+202E) or zero-width characters. :func:`visible` turns each into its
escape for text output; :func:`visible_json` does the same inside JSON
output with JSON's own ``\\uXXXX`` escape, so a JSON line still parses to
the same value. Errors (:class:`CliError`, exit 2), the last-resort message
and the progress bar live here too, so every command reports alike.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from flowdrop_core._errors import FlowdropError
from flowdrop_core.text import _UNPRINTABLE
from flowdrop_core.text import visible as shown

__all__ = [
    "INPUT_ERRORS",
    "INTERNAL_ERROR",
    "PROG",
    "PROGRESS_MIN_STEPS",
    "CliError",
    "Progress",
    "error",
    "fit",
    "in_file",
    "leave_to_exit",
    "left_to_exit",
    "plural",
    "say",
    "say_json",
    "visible",
    "visible_json",
]

PROG = "flowdrop-buffer"

#: Replays shorter than this never draw a progress bar (they finish at once).
PROGRESS_MIN_STEPS = 200

#: What the last-resort handler says: an exception no layer turned into a located
#: error is a bug in this tool; the user still gets one line, exit 2, no traceback.
INTERNAL_ERROR = "internal error while handling this input"


class CliError(FlowdropError):
    """Bad input found by the command line itself (exit 2)."""


#: Set by the program's own entry (:func:`flowdrop_core.cli.console_main`) only:
#: the process ends when the command returns, so what it built need not be freed.
EXIT_AFTER_COMMAND = {"on": False}
_LEFT: list[Any] = []


def leave_to_exit(*objects: Any) -> None:
    """Keep ``objects`` alive until the process ends, when the program's entry ends it.

    A long replay holds millions of small objects (steps, events, entries)
    until its output is written; freeing them one by one is a tenth of the
    command and gives nothing to a process about to end. Under the program's
    entry they are kept here and the process ends without that teardown; for
    an in-process caller of ``main`` this does nothing (they are freed as usual).
    """
    if EXIT_AFTER_COMMAND["on"]:
        _LEFT.extend(objects)


def left_to_exit() -> bool:
    """Whether a command left objects for the process's end (see :func:`leave_to_exit`)."""
    return bool(_LEFT)


#: Bad input: reported on stderr as one message, exit 2, no traceback. Every error
#: the library raises on purpose is a :class:`FlowdropError`; ``ValueError`` too,
#: because constructors check their arguments with it (``ConversationBuffer``'s
#: blank key is bad input, whichever layer notices it first).
INPUT_ERRORS: tuple[type[Exception], ...] = (FlowdropError, ValueError)


def visible(text: str) -> str:
    """``text`` for a terminal: :func:`flowdrop_core.text.visible`, newlines kept.

    ``\\x1b``, ``\\x9b``, ``\\u202e``: a message or an id cannot recolour the
    terminal, move the cursor, reorder a line or fail the write; newlines stay.
    """
    return shown(text)


def visible_json(text: str) -> str:
    """JSON text for a terminal: the same characters as :func:`visible`, as ``\\uXXXX``.

    They can only occur inside JSON strings (JSON's own syntax is ASCII), where
    ``\\uXXXX`` means the same character, so the line parses to the same value.
    """
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def say(text: str, stream: TextIO | None = None) -> None:
    """Print one block of human-readable output through :func:`visible`."""
    print(visible(text), file=stream or sys.stdout)


def say_json(text: str, stream: TextIO | None = None) -> None:
    """Print one JSON document (or line) through :func:`visible_json`."""
    print(visible_json(text), file=stream or sys.stdout)


def error(message: str, command: str | None = None) -> None:
    """``flowdrop-buffer[ COMMAND]: error: MESSAGE`` on stderr, escaped."""
    prefix = f"{PROG} {command}" if command else PROG
    say(f"{prefix}: error: {message}", sys.stderr)


def plural(n: int, word: str) -> str:
    """``1 step``, ``2 steps``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def in_file(path: str, exc: Exception) -> str:
    """``exc``'s message naming the file it is about (the library names the scenario)."""
    text = str(exc)
    return text if text.startswith(path) else f"{path}: {text}"


class Progress:
    """A progress bar drawn by hand on a terminal (stderr only when it is a TTY).

    Called as ``progress(done, total)``; redraws at most every 0.1 s, and
    :meth:`close` erases the bar so the table or JSON that follows is clean.
    """

    def __init__(self, stream: TextIO, label: str = "replaying", width: int = 30) -> None:
        self.stream = stream
        self.label = label
        self.width = width
        self._last = 0.0
        self._drawn = 0

    @classmethod
    def for_stderr(cls, total: int) -> Progress | None:
        """A bar on stderr when it is a terminal and the replay is long, else ``None``."""
        stream = sys.stderr
        if total < PROGRESS_MIN_STEPS or not stream.isatty():
            return None
        return cls(stream)

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        filled = self.width * done // max(total, 1)
        text = f"{self.label} [{'#' * filled}{'-' * (self.width - filled)}] {done}/{total} steps"
        self.stream.write("\r" + text)
        self.stream.flush()
        self._drawn = len(text)

    def close(self) -> None:
        """Erase the bar (if drawn), so the output that follows starts clean."""
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0
