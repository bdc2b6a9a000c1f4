"""``flowdrop-buffer check PATH...``: replay scenario files and compare each step with its expect.

Every mismatch is printed, then ``N passed, M failed``; exit 1 on any
mismatch, 2 when a file could not be checked. Runtime warnings (a MEM-7
refusal) are not printed: under ``check`` a refusal is the behaviour checked.
"""

from __future__ import annotations

import argparse
from typing import Any

from flowdrop_core.cli._loading import (
    check_count,
    check_messages,
    read_json,
    read_text,
    scenario_entries,
)
from flowdrop_core.cli._options import EPILOG
from flowdrop_core.cli._output import INPUT_ERRORS, CliError, error, in_file, plural, say
from flowdrop_core.replay import check
from flowdrop_core.scenario import Scenario, parse_scenario

__all__ = ["NAME", "register", "run"]

NAME = "check"


def register(subparsers: Any) -> None:
    """Add ``check`` to the command line's subparsers (its warnings are not logged)."""
    chk = subparsers.add_parser(
        "check",
        help="replay scenario files and compare each step with its expect",
        description="Replay each scenario and compare every step with its expect. Prints "
        "each mismatch (scenario: step: field: expected, got) and a last line "
        "'N passed, M failed'. Exit 1 on any mismatch.",
        epilog=EPILOG,
    )
    chk.add_argument("paths", nargs="+", metavar="PATH")
    chk.add_argument("-v", "--verbose", action="store_true", help="also list passing scenarios")
    chk.set_defaults(handler=run, log_warnings=False)


def _scenario_only(path: str) -> Scenario:
    """A scenario file for ``check``; a recorded conversation is named as such, in one line."""
    text = read_text(path)
    data = read_json(text, path)
    if not (isinstance(data, dict) and "steps" in data):
        raise CliError(
            f"{path}: not a scenario (no 'steps'); check needs a scenario file with "
            "expect (replay PATH --save SCENARIO makes one from a recording)"
        )
    scenario = parse_scenario(text, source=path)
    check_count(path, len(scenario_entries(scenario)[0]))
    return scenario


def run(args: argparse.Namespace) -> int:
    """``check PATH...``: every mismatch, then ``N passed, M failed``; exit 1 on any."""
    passed = failed = errors = 0
    for path in args.paths:
        try:
            scenario = _scenario_only(path)
            check_messages(path, *scenario_entries(scenario))
            result = check(scenario)
        except INPUT_ERRORS as exc:
            error(in_file(path, exc))
            errors += 1
            continue
        if result.passed:
            passed += 1
            if args.verbose:
                say(f"ok {path} ({plural(len(scenario.steps), 'step')})")
        else:
            failed += 1
            for mismatch in result.mismatches:
                say(str(mismatch))
    summary = f"{passed} passed, {failed} failed"
    if errors:
        summary += f", {plural(errors, 'error')}"
    say(summary)
    if errors:
        return 2
    return 1 if failed else 0
