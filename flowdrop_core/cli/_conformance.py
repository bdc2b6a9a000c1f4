"""``flowdrop-buffer conformance``: a standing against every GR-MEM rule, ours or another's.

By default it runs the conformance kit made from every scenario file of the
samples folder (``sample_data/``) and the built-in cases against this library,
and prints each rule MEM-1..MEM-16 with its status, its examples and the
project's decisions: as Markdown (what an implementation publishes), or as
one JSON object with ``--json``. ``--export DIR`` writes the kit as one JSON
file per rule; ``--against COMMAND`` runs the kit (the shipped one, or
``--kit DIR``) against another implementation's adapter over JSON Lines
(docs/conformance.md). Exit 1 when a rule fails, 2 when a file cannot be read
or the adapter cannot be started.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from flowdrop_core.cli._loading import check_messages, scenario_entries
from flowdrop_core.cli._options import EPILOG
from flowdrop_core.cli._output import CliError, say, say_json
from flowdrop_core.conformance import ConformanceReport, conformance_report
from flowdrop_core.conformance.kit import build_kit, export_kit, load_kit
from flowdrop_core.conformance.runner import AdapterError, Subprocess, run_kit
from flowdrop_core.scenario import Scenario, load_scenario

__all__ = ["NAME", "register", "run"]

NAME = "conformance"


def register(subparsers: Any) -> None:
    """Add ``conformance`` to the command line's subparsers (its warnings are not logged)."""
    cmd = subparsers.add_parser(
        "conformance",
        help="a standing against every GR-MEM rule: ours, or another implementation's",
        description="Run the conformance kit (every scenario in the samples folder plus the "
        "built-in cases) and report, for each rule MEM-1 to MEM-16, its examples, the "
        "decisions taken where the text is open, and pass, fail, 'no example' or 'not "
        "covered'. --export writes the kit; --against runs it against another "
        "implementation's adapter. Markdown by default. Exit 1 when a rule fails.",
        epilog=EPILOG,
    )
    cmd.add_argument(
        "--samples",
        default="sample_data",
        metavar="DIR",
        help="folder of scenario files (default: sample_data)",
    )
    cmd.add_argument("--json", action="store_true", help="print one JSON object")
    cmd.add_argument(
        "--export",
        metavar="DIR",
        help="write the kit (one JSON file per rule, MEM-n.json) into DIR and stop",
    )
    cmd.add_argument(
        "--against",
        metavar="COMMAND",
        help="run the kit against another implementation's adapter: COMMAND is started once "
        "and spoken to in JSON Lines on its stdin and stdout (docs/conformance.md)",
    )
    cmd.add_argument(
        "--kit",
        metavar="DIR",
        help="with --against: the kit files to run (default: the kit shipped with this package)",
    )
    cmd.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="with --against: seconds to wait for each reply (default: 30)",
    )
    cmd.set_defaults(handler=run, log_warnings=False)


def _against(args: argparse.Namespace) -> ConformanceReport:
    """The standing of the implementation behind ``--against``."""
    try:
        cases = load_kit(args.kit)
    except (OSError, ValueError) as exc:
        raise CliError(f"{args.kit or 'the shipped kit'}: {exc}") from None
    if args.timeout <= 0:
        raise CliError(f"--timeout must be above 0 seconds, got {args.timeout:g}")
    try:
        transport = Subprocess(args.against, timeout=args.timeout)
    except AdapterError as exc:
        raise CliError(str(exc)) from None
    try:
        return run_kit(cases, transport)
    finally:
        transport.close()


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
    if args.export:
        cases = build_kit(_scenarios(args.samples))
        written = export_kit(args.export, cases)
        say(f"wrote {len(written)} kit files ({len(cases)} cases) to {args.export}")
        return 0
    if args.against:
        report = _against(args)
    else:
        if args.kit:
            raise CliError("--kit goes with --against (our own standing uses --samples)")
        report = conformance_report(_scenarios(args.samples))
    if args.json:
        say_json(report.to_json())
    else:
        say(report.to_markdown().rstrip("\n"))
    return 0 if report.passed else 1
