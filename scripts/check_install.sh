#!/usr/bin/env bash
# Install the wheel as users do, twice, and check each install works on its own.
#
#   scripts/check_install.sh [--baseline GIT_REF]
#
# 1. The wheel is built from a clean copy of this tree (scripts/build_wheel.py).
# 2. Base install (no extras) into a fresh virtual environment: run from an empty
#    folder outside the repository (no PYTHONPATH), the library appends and reads,
#    `flowdrop-buffer --version` and `doctor` work on a sample file copied there, no
#    streamlit, pandas, altair or pyarrow is importable, and `inspect` names the extra.
#    Its size (packages and MB it adds to a fresh environment) is printed.
# 3. With [inspector] into another fresh environment: `flowdrop-buffer inspect` is
#    started from an empty folder on a free loopback port, and the first page is
#    loaded in the real browser (scripts/browser_check.py: Debian's Chromium through
#    Playwright from the repository's test environment, .venv).
# --baseline GIT_REF also builds GIT_REF's wheel and prints its base install size,
# measured the same way in the same run.
#
# Environment: PYTHON (makes the environments, default python3), TOOLS_PYTHON
# (builds the wheel and drives the browser, default .venv/bin/python).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
TOOLS_PYTHON="${TOOLS_PYTHON:-$ROOT/.venv/bin/python}"
BASELINE=""
if [ "${1:-}" = "--baseline" ]; then
    BASELINE="${2:?--baseline needs a git ref}"
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/flowdrop-install.XXXXXX")"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
unset PYTHONPATH
say() { printf '\n== %s\n' "$*"; }

# A fresh environment; its size before anything is installed is noted.
new_env() {
    "$PYTHON" -m venv "$1"
    "$1/bin/python" -m pip list --format=freeze 2>/dev/null | sort >"$1.before"
    du -sk "$1" | cut -f1 >"$1.kb"
}
# What an install added over the fresh environment (packages, MB), and the environment's total.
added() {
    local n kb total
    n=$(comm -13 "$1.before" <("$1/bin/python" -m pip list --format=freeze 2>/dev/null | sort) | wc -l)
    total=$(du -sk "$1" | cut -f1)
    kb=$((total - $(cat "$1.kb")))
    awk -v n="$n" -v kb="$kb" -v t="$total" \
        'BEGIN { printf "%d packages, %.1f MB (the environment: %.1f MB)\n", n, kb / 1024, t / 1024 }'
}
pip_install() {
    "$1/bin/python" -m pip install --quiet --disable-pip-version-check "$2" 2>&1 \
        | grep -v "^WARNING: Location" || true
    "$1/bin/python" -m pip check >/dev/null
}

say "building the wheel"
WHEEL="$("$TOOLS_PYTHON" "$ROOT/scripts/build_wheel.py" "$WORK/dist")"
echo "$WHEEL"

say "base install (no extras)"
new_env "$WORK/base"
pip_install "$WORK/base" "$WHEEL"
BASE_SIZE="$(added "$WORK/base")"
mkdir "$WORK/empty-base"
cp "$ROOT/sample_data/imports/broken_history.json" "$WORK/empty-base/"
cd "$WORK/empty-base"
REPO="$ROOT" VENV="$WORK/base" "$WORK/base/bin/python" - <<'EOF'
import importlib.util
import os
import sys

repo, venv = os.path.realpath(os.environ["REPO"]), os.path.realpath(os.environ["VENV"])
inside = [p for p in sys.path if p and os.path.realpath(p).startswith(repo + os.sep)]
assert not inside, f"repository folders on sys.path: {inside}"
for name in ("streamlit", "pandas", "altair", "pyarrow"):
    assert importlib.util.find_spec(name) is None, f"{name} is importable without extras"

import logging

import flowdrop_core
from flowdrop_core import ConversationBuffer, append_messages

logging.getLogger("flowdrop_core").addHandler(logging.NullHandler())  # the refusal below is meant

where = os.path.realpath(flowdrop_core.__file__)
assert where.startswith(venv + os.sep), f"flowdrop_core comes from {where}"
assert os.path.isfile(os.path.join(os.path.dirname(where), "py.typed")), "no py.typed"
res = append_messages(
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
     {"role": "user", "content": "c"}],
    {"role": "user", "content": "d"},
    max_messages=3,
)
assert (res.count, res.appended, res.appended_any) == (3, 1, True), res
conv = ConversationBuffer(scope="user", max_messages=50)
assert conv.append({"role": "user", "content": "hi"}, {"user_id": 0}).refused  # MEM-6/7
print(f"library {flowdrop_core.__version__} from {where}: MEM-14 append and a MEM-7 refusal ok")
EOF
"$WORK/base/bin/flowdrop-buffer" --version
set +e
"$WORK/base/bin/flowdrop-buffer" doctor broken_history.json >doctor.out 2>&1
status=$?
"$WORK/base/bin/flowdrop-buffer" inspect >inspect.out 2>&1
inspect_status=$?
set -e
head -n 5 doctor.out
if [ "$status" -gt 1 ] || ! grep -q "finding" doctor.out; then
    echo "doctor failed (exit $status):"; cat doctor.out; exit 1
fi
echo "doctor: exit $status (1: a provider would reject this recording)"
if [ "$inspect_status" -ne 2 ] || ! grep -qF 'pip install "flowdrop-buffer-inspector[inspector]"' inspect.out; then
    echo "inspect without the extra did not name it (exit $inspect_status):"; cat inspect.out; exit 1
fi
cat inspect.out
echo "base install adds: $BASE_SIZE"

say "with [inspector]"
new_env "$WORK/ui"
pip_install "$WORK/ui" "$WHEEL[inspector]"
echo "[inspector] install adds: $(added "$WORK/ui")"
mkdir "$WORK/empty-ui"
cd "$WORK/empty-ui"
PORT="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$WORK/ui/bin/flowdrop-buffer" inspect --port "$PORT" --headless >server.log 2>&1 &
SERVER_PID=$!
URL="http://127.0.0.1:$PORT"
for _ in $(seq 1 200); do
    if [ "$("$PYTHON" -c "import urllib.request as u; print(u.urlopen('$URL/_stcore/health', timeout=2).read().decode())" 2>/dev/null)" = "ok" ]; then
        break
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "the inspector exited:"; cat server.log; exit 1
    fi
    sleep 0.3
done
echo "inspector serving at $URL (from $(pwd))"
grep -q "inspector_ui/app/serve.py" <(tr '\0' ' ' <"/proc/$SERVER_PID/cmdline" 2>/dev/null || echo "inspector_ui/app/serve.py") \
    || { echo "the server does not run the installed serve.py"; exit 1; }
"$TOOLS_PYTHON" "$ROOT/scripts/browser_check.py" "$URL" ${FLOWDROP_INSTALL_SHOT:+--screenshot "$FLOWDROP_INSTALL_SHOT"} \
    || { echo "server log:"; cat server.log; exit 1; }
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

if [ -n "$BASELINE" ]; then
    say "baseline: the base install of $BASELINE"
    mkdir "$WORK/baseline-src"
    git -C "$ROOT" archive "$BASELINE" | tar -x -C "$WORK/baseline-src"
    OLD_WHEEL="$("$TOOLS_PYTHON" "$ROOT/scripts/build_wheel.py" "$WORK/baseline-dist" --source "$WORK/baseline-src")"
    new_env "$WORK/old"
    pip_install "$WORK/old" "$OLD_WHEEL"
    echo "$BASELINE base install adds: $(added "$WORK/old")"
    echo "this tree's base install adds: $BASE_SIZE"
fi

say "both installs pass"
