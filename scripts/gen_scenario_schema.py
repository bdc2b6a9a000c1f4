"""Write docs/scenario.schema.json from the scenario models.

The schema is generated, never edited by hand, so the documented format cannot
drift from what ``parse_scenario`` accepts; tests/test_scenario.py fails when
the committed file is stale. Run from anywhere:

    .venv/bin/python scripts/gen_scenario_schema.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from flowdrop_core.scenario import scenario_schema_json

TARGET = Path(__file__).resolve().parent.parent / "docs" / "scenario.schema.json"


def main(argv: list[str] | None = None) -> int:
    """Write the schema (or, with --check, exit 1 when the committed one is stale)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, do not write")
    args = parser.parse_args(argv)
    text = scenario_schema_json()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale; run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
