"""The ``flowdrop-buffer`` command line (``python -m flowdrop_core``).

Every subcommand is a thin layer over the library, one module each:

- :mod:`~flowdrop_core.cli._replay` ``replay PATH``: the timeline of a scenario
  or a recorded conversation, one row (or JSON line) per append, MEM-14 rows
  marked.
- :mod:`~flowdrop_core.cli._check` ``check PATH...``: each scenario step against
  its ``expect``; every mismatch, then ``N passed, M failed``.
- :mod:`~flowdrop_core.cli._normalize` ``normalize PATH``: the MEM-5 provider
  view and every entry it dropped, with where it came from.
- :mod:`~flowdrop_core.cli._lint` ``lint PATH``: what a provider would reject,
  with locations.
- :mod:`~flowdrop_core.cli._doctor` ``doctor PATH``: what is wrong with a
  recording, where (message index and step), and what GR-MEM did about it.
- :mod:`~flowdrop_core.cli._store` ``store STORE``: browse a SQLite, Redis or Postgres
  store, show a slot, replay its journal.
- :mod:`~flowdrop_core.cli._conformance` ``conformance``: this implementation's
  standing against every GR-MEM rule, as Markdown or JSON.
- :mod:`~flowdrop_core.cli._inspect` ``inspect``: start the Streamlit inspector
  (the extra ``inspector``; Streamlit is never imported by the command line).

``--version`` prints the package's version (``flowdrop_core.__version__``).

Shared parts: :mod:`~flowdrop_core.cli._loading` (reading the input file),
:mod:`~flowdrop_core.cli._options` (option types) and
:mod:`~flowdrop_core.cli._output` (all printing, escaped the same way for every
command, and the errors).

Adding a command is adding a module with ``NAME``, ``register(subparsers)``
(which adds its parser and sets ``handler``) and its handler, and naming it
in :data:`COMMANDS`.

Exit codes: 0 fine; 1 ``check`` found a mismatch, ``lint`` found something,
``doctor`` found what a provider would reject, or
a replayed store journal differs from its record; 2 bad input (missing file,
bad JSON, unknown format, bad message, bad option), reported on stderr in one
message and never as a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from flowdrop_core import __version__
from flowdrop_core.cli import (
    _check as check,
)
from flowdrop_core.cli import (
    _conformance as conformance,
)
from flowdrop_core.cli import (
    _doctor as doctor,
)
from flowdrop_core.cli import (
    _inspect as inspect,
)
from flowdrop_core.cli import (
    _lint as lint,
)
from flowdrop_core.cli import (
    _normalize as normalize,
)
from flowdrop_core.cli import (
    _options as options,
)
from flowdrop_core.cli import (
    _output as output,
)
from flowdrop_core.cli import (
    _replay as replay,
)
from flowdrop_core.cli import (
    _store as store,
)
from flowdrop_core.cli._output import INTERNAL_ERROR, PROG, CliError, Progress

__all__ = [
    "COMMANDS",
    "INTERNAL_ERROR",
    "PROG",
    "CliError",
    "Command",
    "Progress",
    "build_parser",
    "console_main",
    "main",
]


class Command(Protocol):
    """What a command module provides (each module of :data:`COMMANDS` is one)."""

    NAME: str

    def register(self, subparsers: Any) -> None:
        """Add the command's parser; set ``handler`` (``args -> exit status``) on it."""

    def run(self, args: argparse.Namespace) -> int:
        """Run the command on parsed arguments; return the exit status."""


#: The commands, in the order ``--help`` lists them.
COMMANDS: tuple[Command, ...] = (
    replay,
    check,
    normalize,
    lint,
    doctor,
    store,
    conformance,
    inspect,
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; ``prog`` is ``flowdrop-buffer`` however it is started."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Replay, check and lint FlowDrop conversation buffers (GR-MEM, MEM-14).",
        epilog=options.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def _paths(args: argparse.Namespace) -> str:
    paths = getattr(args, "paths", None) or [getattr(args, "path", "")]
    return ", ".join(str(p) for p in paths)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (never raises for bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: bad option (2) or --help (0)
        return int(exc.code) if isinstance(exc.code, int) else 2
    handler: Callable[[argparse.Namespace], int] = args.handler
    # Runtime warnings (MEM-7 refusals, MEM-12 unserialized appends) go to stderr,
    # unless the command says otherwise (``check``: a refusal is what it checks).
    warnings: logging.Handler
    if getattr(args, "log_warnings", True):
        warnings = logging.StreamHandler(sys.stderr)
        warnings.setFormatter(logging.Formatter(f"{PROG}: warning: %(message)s"))
    else:
        warnings = logging.NullHandler()
    logger = logging.getLogger("flowdrop_core")
    logger.addHandler(warnings)
    try:
        return handler(args)
    except output.INPUT_ERRORS as exc:
        output.error(str(exc))
        return 2
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, without a traceback at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug, not bad input: still one message, never a traceback
        output.error(
            f"{_paths(args)}: {INTERNAL_ERROR} ({type(exc).__name__}: {exc}); "
            "please report it with the file"
        )
        return 2
    finally:
        logger.removeHandler(warnings)


def console_main() -> None:
    """The ``flowdrop-buffer`` program (and ``python -m flowdrop_core``): :func:`main`, then exit.

    When the command left its objects for the process's end
    (:func:`~flowdrop_core.cli._output.leave_to_exit`: a replay on the memory
    store), its output is flushed and the process ends at once
    (``os._exit``), skipping the teardown of what it built (0.3 s of a
    100,000-message replay); if the flush fails, the exit is the ordinary
    one, which reports it as before. Anything else exits as usual.
    """
    output.EXIT_AFTER_COMMAND["on"] = True
    status = main()
    if output.left_to_exit():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.exit(status)  # the ordinary exit: it reports what the flush hit
        logging.shutdown()
        os._exit(status)
    sys.exit(status)
