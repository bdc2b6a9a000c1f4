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

``--part navigator`` times the navigator and compare, on the same upload (median
of 5, wall time of ``AppTest.run``): changing the decision filter, jumping
to the next decision, the compare view against one replay at a new window,
and (``--part memory``, alone in a fresh process) the process RSS
(``/proc/self/status``) after replaying the recording under three windows
and then a fourth and a fifth.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gen_long_conversation import generate, render  # noqa: E402

APP = str(ROOT / "app.py")


def conversation_text(messages: int) -> str:
    """The checked-in generator's conversation, at the requested length."""
    return str(render(generate(messages)))


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
    parser.add_argument(
        "--part",
        choices=["steps", "navigator", "memory", "compare", "sessions", "all"],
        default="all",
    )
    args = parser.parse_args()
    if args.part in ("steps", "all"):
        steps_part(args)
    if args.part in ("navigator", "all"):
        navigator_part(args)
    if args.part in ("compare", "all"):
        compare_part(args)
    if args.part in ("sessions", "all"):
        sessions_part(args)
    if args.part == "memory":  # alone: RSS counts what earlier parts held
        memory_part(args)


def steps_part(args: argparse.Namespace) -> None:
    """Upload and step-move figures."""
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


# --------------------------------------------------------------------------- navigator, compare


def rss_mb() -> float:
    """This process's resident set size, MB (the AppTest server is in-process)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def uploaded(data: bytes, window: int | None) -> AppTest:
    at = replay_page(window)
    at.file_uploader(key="r_upload").upload("big.jsonl", data, "application/jsonl")
    timed(at)
    return at


def navigator_part(args: argparse.Namespace) -> None:
    """Filter change, next decision, compare view vs one replay, RSS over four windows."""
    data = conversation_text(args.messages).encode()
    kinds = ("duplicate_result", "placeholder_inserted", "duplicate_turn", "appended")
    filters: list[float] = []
    jumps: list[float] = []
    replays: list[float] = []
    compares: list[float] = []
    for rep in range(args.repeat):
        st.cache_data.clear()
        st.cache_resource.clear()
        at = uploaded(data, 0)
        at.pills(key="r_kind").set_value(kinds[rep % len(kinds)])
        filters.append(timed(at))
        at.number_input(key="r_goto").set_value(1 + 97 * rep)
        at.run(timeout=600)
        at.button(key="r_next").click()
        jumps.append(timed(at))
        # One replay: the same recording under a window not replayed before.
        at.number_input(key="r_window").set_value(1_000 + rep)
        replays.append(timed(at))
        # The compare view: the other timeline (a window not replayed before) and the diff.
        at.session_state["r_cmp_window"] = 50 + rep
        at.toggle(key="r_compare").set_value(True)
        compares.append(timed(at))

    def line(label: str, values: list[float]) -> str:
        runs = [round(x, 2) for x in values]
        return f"{label:<44} median {statistics.median(values):5.2f} s  {runs}"

    print(f"{args.messages} messages: navigator (target <= 0.5 s), compare (target <= 2x replay)")
    print(line("change the decision filter", filters))
    print(line("jump to the next decision", jumps))
    print(line("one replay at a new window (page run)", replays))
    print(line("compare view at a new what-if window", compares))
    ratio = statistics.median(compares) / statistics.median(replays)
    print(f"{'compare / replay':<44} {ratio:5.2f}x")


def _line(label: str, values: list[float]) -> str:
    runs = [round(x, 2) for x in values]
    return f"{label:<48} median {statistics.median(values):5.2f} s  {runs}"


def compare_part(args: argparse.Namespace) -> None:
    """Compare at size (default 20,002 messages): one replay, compare open, step moves.

    Each repetition is a fresh session (per-session caches): the upload's replay at
    window 0 (uncached), then compare opened at a what-if window not replayed before,
    then step moves with compare open and, after closing it, without. Targets: compare
    open <= 2x one replay; a step move with compare open <= 2x one without.
    """
    messages = 20_002 if args.messages == 20_000 else args.messages
    data = conversation_text(messages).encode()
    replays, opens, with_cmp, without = [], [], [], []
    for rep in range(args.repeat):
        at = replay_page(0)
        at.file_uploader(key="r_upload").upload("big.jsonl", data, "application/jsonl")
        replays.append(timed(at))
        steps = int(at.slider(key="rstep").max)
        at.session_state["r_cmp_window"] = 50 + rep
        at.toggle(key="r_compare").set_value(True)
        opens.append(timed(at))
        for k in range(3):
            at.slider(key="rstep").set_value(steps // 3 + 211 * (3 * rep + k + 1))
            with_cmp.append(timed(at))
        at.toggle(key="r_compare").set_value(False)
        timed(at)
        for k in range(3):
            at.slider(key="rstep").set_value(steps // 4 + 193 * (3 * rep + k + 1))
            without.append(timed(at))
    print(f"{messages:,} messages, {len(data) / 1e6:.1f} MB: compare at size")
    print(_line("one replay (upload, uncached)", replays))
    print(_line("open compare at a new what-if window", opens))
    print(_line("step move, compare open", with_cmp))
    print(_line("step move, compare closed", without))
    print(
        f"{'compare open / one replay':<48} {statistics.median(opens) / statistics.median(replays):5.2f}x"
        "  (target <= 2x)"
    )
    print(
        f"{'step move with / without compare':<48} "
        f"{statistics.median(with_cmp) / statistics.median(without):5.2f}x  (target <= 2x)"
    )


def sessions_part(args: argparse.Namespace) -> None:
    """Two sessions, each with its own 20k upload, moving steps in turn.

    Before per-session caches, two such uploads overflowed the one shared cache and
    each step move replayed again (4.2-4.9 s); now each session keeps its own.
    """
    base = conversation_text(args.messages)
    uploads = [base.encode(), (base + "\n").encode()]  # two different files, same size
    sessions = []
    for n, data in enumerate(uploads):
        at = replay_page(0)
        at.file_uploader(key="r_upload").upload(f"user{n}.jsonl", data, "application/jsonl")
        timed(at)
        sessions.append(at)
    steps = int(sessions[0].slider(key="rstep").max)
    moves: list[list[float]] = [[], []]
    for rep in range(args.repeat * 2):
        for n, at in enumerate(sessions):
            at.slider(key="rstep").set_value(steps // 2 + 149 * (2 * rep + n + 1))
            moves[n].append(timed(at))
    print(f"two sessions, each with a {args.messages:,}-message upload, moving steps in turn")
    for n in range(2):
        print(_line(f"session {n + 1}: step move", moves[n]))


def memory_part(args: argparse.Namespace) -> None:
    """Process RSS after replaying the upload under three windows, then a fourth and fifth.

    Run it alone (``--part memory``), in a fresh process: RSS counts everything the
    process ever held, so earlier parts would be measured too.
    """
    data = conversation_text(args.messages).encode()
    print(f"RSS before the page ran                       {rss_mb():6.0f} MB")
    at = uploaded(data, 0)
    readings = [rss_mb()]
    print(f"RSS after a replay at window 0                {readings[-1]:6.0f} MB")
    for window in (50, 200, 1_000, 5_000):
        at.number_input(key="r_window").set_value(window)
        timed(at)
        readings.append(rss_mb())
        print(f"RSS after a replay at window {window:<6}           {readings[-1]:6.0f} MB")
    print(
        f"after three windows (0, 50, 200) {readings[2]:.0f} MB (target <= 400); the fourth "
        f"{readings[3] - readings[2]:+.0f} MB, the fifth {readings[4] - readings[3]:+.0f} MB "
        "(target: no growth)"
    )


if __name__ == "__main__":
    main()
