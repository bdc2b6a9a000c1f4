"""``flowdrop-buffer conformance``: this implementation's standing against every GR-MEM rule.

Replays every scenario file in the samples folder (``sample_data/`` by
default), and prints each rule MEM-1..MEM-16 with its status, its examples
and the project's decisions: as Markdown (the default, what an
implementation publishes), or as one JSON object with ``--json``. Exit 1
when a rule fails, 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from flowdrop_core.cli.loading import check_messages, scenario_entries
from flowdrop_core.cli.options import EPILOG
from flowdrop_core.cli.output import CliError, say, say_json
from flowdrop_core.conformance import conformance_report
from flowdrop_core.scenario import Scenario, load_scenario

__all__ = ["NAME", "register", "run"]

NAME = "conformance"


def register(subparsers: Any) -> None:
    """Add ``conformance`` to the command line's subparsers (its warnings are not logged)."""
    cmd = subparsers.add_parser(
        "conformance",
        help="this implementation's standing against every GR-MEM rule",
        description="Replay every scenario in the samples folder and report, for each rule "
        "MEM-1 to MEM-16, its examples, the decisions taken where the text is open, and "
        "pass, fail, 'no example' or 'not covered'. Markdown by default. Exit 1 when a rule "
        "fails.",
        epilog=EPILOG,
    )
    cmd.add_argument(
        "--samples",
        default="sample_data",
        metavar="DIR",
        help="folder of scenario files (default: sample_data)",
    )
    cmd.add_argument("--json", action="store_true", help="print one JSON object")
    cmd.set_defaults(handler=run, log_warnings=False)


def _scenarios(folder: str) -> list[Scenario]:
    """Every scenario file of the folder, checked for bad messages before any replay."""
    root = Path(folder)
    if not root.is_dir():
        raise CliError(f"{folder}: not a folder of scenario files (give --samples DIR)")
    out = []
    for path in sorted(root.glob("*.json")):
        scenario = load_scenario(path)
        check_messages(str(path), *scenario_entries(scenario))
        out.append(scenario)
    if not out:
        raise CliError(f"{folder}: no scenario files (*.json) in it")
    return out


def run(args: argparse.Namespace) -> int:
    """``conformance``: the report as Markdown or JSON; exit 1 when a rule fails."""
    report = conformance_report(_scenarios(args.samples))
    if args.json:
        say_json(report.to_json())
    else:
        say(report.to_markdown().rstrip("\n"))
    return 0 if report.passed else 1
