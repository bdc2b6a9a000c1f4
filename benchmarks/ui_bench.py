"""Server-side speed of the inspector at size: a 20,000-message upload and moving between steps.

Runs the Replay page with Streamlit's AppTest (the script runner a server
uses, without a browser), uploads a 20,000-message recording made by the
checked-in generator, and times:

- **shown**: the run after the upload, from nothing cached (the import,
  the replay and the page), caches cleared before each repetition;
- **step move**: one slider move to a step not shown before, with each
  of the three data tabs open (Timeline: metrics, the table's page, the
  chart; Step before / after: the step's tags and entries; Provider view:
  the MEM-5 view and lint of the step's buffer).

Median of 5 each (wall time of ``AppTest.run``). Figures go in the README.

Run: ``python benchmarks/ui_bench.py [--messages 20000] [--window N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


def conversation_text(messages: int) -> str:
    """The checked-in generator's conversation, at the requested length."""
    spec = importlib.util.spec_from_file_location(
        "gen", ROOT / "scripts" / "gen_long_conversation.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen"] = gen
    spec.loader.exec_module(gen)
    return gen.render(gen.generate(messages))


def timed(at: AppTest) -> float:
    start = time.perf_counter()
    at.run(timeout=600)
    elapsed = time.perf_counter() - start
    if at.exception:
        raise SystemExit(f"the page raised: {at.exception}")
    return elapsed


def replay_page(window: int | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at.switch_page("pages/replay.py")
    if window is not None:
        at.query_params["r_window"] = str(window)
    at.run()
    return at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--window", type=int, default=None, help="default: the page's default")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = conversation_text(args.messages).encode()
    print(f"{args.messages} messages, {len(data) / 1e6:.1f} MB, window {args.window or 'default'}")

    tabs = ("Timeline", "Step before / after", "Provider view")
    shown: list[float] = []
    moves: dict[str, list[float]] = {tab: [] for tab in tabs}
    for rep in range(args.repeat):
        st.cache_data.clear()
        st.cache_resource.clear()
        at = replay_page(args.window)
        at.file_uploader(key="r_upload").upload("big.jsonl", data, "application/jsonl")
        shown.append(timed(at))
        steps = int(at.slider(key="rstep").max)
        for k, tab in enumerate(tabs):
            at.session_state["r_tab"] = tab
            at.run(timeout=600)
            at.slider(key="rstep").set_value(steps // 2 + 101 * (rep * len(tabs) + k + 1))
            moves[tab].append(timed(at))

    def line(label: str, values: list[float]) -> str:
        runs = [round(x, 2) for x in values]
        return f"{label:<36} median {statistics.median(values):5.2f} s  {runs}"

    print(f"steps: {steps}")
    print(line("shown after upload (uncached)", shown))
    for tab in tabs:
        print(line(f"step move, {tab} tab", moves[tab]))


if __name__ == "__main__":
    main()
