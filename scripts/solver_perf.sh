#!/usr/bin/env bash
# Issue 32 part 5: CPU seconds (user + sys) and peak memory of `deployfit check` on the
# solver's measurement files in benches/solver/, three runs each, the median printed.
# Usage: scripts/solver_perf.sh [path/to/deployfit]   (default: target/release/deployfit)
set -uo pipefail
bin="${1:-target/release/deployfit}"
dir="$(dirname "$0")/../benches/solver"
out="$(mktemp)"
for file in "$dir"/*.deploy; do
    cpus=()
    mems=()
    for _ in 1 2 3; do
        /usr/bin/time -o "$out" -f '%U %S %M' "$bin" check "$file" >/dev/null 2>&1
        read -r user sys mem < <(tail -1 "$out")
        cpus+=("$(echo "$user + $sys" | bc)")
        mems+=("$mem")
    done
    cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n 2p)
    mem=$(printf '%s\n' "${mems[@]}" | sort -n | sed -n 2p)
    printf '%-28s %6.2f s CPU  %6d MB\n' "$(basename "$file")" "$cpu" "$((mem / 1024))"
done
rm -f "$out"
