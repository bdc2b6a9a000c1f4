"""Server memory of the Replay page refusing a too-large recording in three tabs at once.

Starts ``streamlit run serve.py`` (as ``make run`` serves it) on a free loopback
port, opens the Replay page in three browser sessions (Chromium through
Playwright, as the browser tests do), uploads the same recording of 482,196
short messages (19.9 MB, over the 100,000 the page replays) in all three at
once, and reads the server's RSS from /proc: the baseline (after a first page
load), the peak while the three refusals run (sampled every 0.1 s), and what
is left once the sessions have ended (tabs closed, then
``server.disconnectedSessionTTL`` plus a margin). Prints the figures in MB and
as multiples of the file size.

Run: ``python benchmarks/served_replay_memory.py`` (needs Playwright and
Debian's ``chromium``; see tests/browser/serving.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from serving import (  # noqa: E402
    chromium,
    free_port,
    run_streamlit_process,
    settle,
    streamlit_executable,
)

MB = 1e6


def recording(count: int) -> bytes:
    """A JSONL recording of ``count`` short messages."""
    roles = ("user", "assistant")
    return "\n".join(
        json.dumps({"role": roles[i % 2], "content": f"m{i}"}) for i in range(count)
    ).encode()


def rss(pid: int) -> float:
    """The process's resident memory in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / MB
    raise RuntimeError("no VmRSS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=482_196)
    parser.add_argument("--tabs", type=int, default=3)
    parser.add_argument("--ttl", type=int, default=10, help="server.disconnectedSessionTTL (s)")
    parser.add_argument("--script", default="serve.py", help="what streamlit runs")
    parser.add_argument("--wait", type=int, default=600, help="seconds to wait for the refusals")
    args = parser.parse_args()
    data = recording(args.messages)
    upload = Path(tempfile.mkdtemp()) / "huge.jsonl"
    upload.write_bytes(data)
    size = len(data) / MB
    port = free_port()
    argv = [
        streamlit_executable(),
        "run",
        args.script,
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.disconnectedSessionTTL",
        str(args.ttl),
    ]
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("FLOWDROP_")}
    with run_streamlit_process(argv, port, env) as (url, proc), chromium() as browser:
        contexts = [
            browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(args.tabs)
        ]
        pages = [c.new_page() for c in contexts]
        for page in pages:
            page.set_default_timeout(600_000)
            page.goto(f"{url}/replay")
            settle(page)
        time.sleep(2)
        baseline = rss(proc.pid)
        peak = [baseline]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss(proc.pid))
                time.sleep(0.1)

        sampler = threading.Thread(target=sample)
        sampler.start()
        start = time.perf_counter()
        for page in pages:  # all three uploads start before any refusal is shown
            page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(upload))
        for page in pages:
            refused = page.get_by_test_id("stAlert").filter(has_text="replays at most")
            refused.first.wait_for(timeout=args.wait * 1000)
        seconds = time.perf_counter() - start
        time.sleep(2)
        done.set()
        sampler.join()
        held = rss(proc.pid)
        for context in contexts:
            context.close()
        time.sleep(args.ttl + 15)  # the sessions end: TTL, then the guard's sweep
        after = rss(proc.pid)
        with urllib.request.urlopen(f"{url}/_stcore/metrics") as resp:
            metrics = resp.read().decode()
        uploads = sum(
            float(line.rsplit(" ", 1)[1])
            for line in metrics.splitlines()
            if "UploadedFileManager" in line and not line.startswith("#")
        )
    tabs = args.tabs
    print(f"file: {size:.1f} MB, {args.messages:,} messages; {tabs} tabs; server: {args.script}")
    print(f"baseline RSS (three pages open): {baseline:.0f} MB")
    print(
        f"peak during {tabs} refusals: +{peak[0] - baseline:.0f} MB "
        f"({(peak[0] - baseline) / size:.1f}x the file, {(peak[0] - baseline) / (tabs * size):.1f}x "
        f"per tab); all refused in {seconds:.1f} s"
    )
    print(f"held with the tabs still open: +{held - baseline:.0f} MB")
    print(
        f"after the sessions ended: {after - baseline:+.0f} MB "
        f"(uploaded files still held: {uploads / MB:.1f} MB)"
    )


if __name__ == "__main__":
    main()
