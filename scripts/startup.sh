#!/usr/bin/env bash
# Issue 33: start-up CPU time of the release binary, from `perf stat` (task-clock: user +
# system time of every thread), the mean of N runs:
#   - `deployfit check` of an empty file and of examples/;
#   - the language server's cold start: `deployfit lsp` started, initialized, given a
#     4,500-line document (450 deployments) with didOpen, until it publishes that
#     document's diagnostics, then shut down (scripts/lsp_cold_start.py drives it and
#     reads the server's CPU time from wait4's rusage, so Python's own time is not counted).
# Usage: scripts/startup.sh [path/to/deployfit] [runs]   (default: target/release/deployfit 20)
set -euo pipefail
bin="${1:-target/release/deployfit}"
runs="${2:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/empty.deploy"
cpu() {
    perf stat -r "$runs" -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { printf "%.1f ms CPU (±%s)\n", $1, $4 }'
}
printf '%-34s ' "check (empty file)"
cpu "$bin" check "$tmp/empty.deploy"
printf '%-34s ' "check examples/"
cpu "$bin" check "$root/examples/"
printf '%-34s ' "lsp cold start (4,500 lines)"
python3 "$root/scripts/lsp_cold_start.py" "$bin" "$runs"
