#!/usr/bin/env bash
# Headless Neovim against the real `deployfit lsp`: the diagnostic of a file with an
# unknown GPU arrives and hover returns the breakdown; and the check fails on a file
# without errors (so it cannot pass when the server reports nothing).
# Needs Debian's neovim (0.7 or later): apt-get install neovim.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../../.." && pwd)"
command -v nvim >/dev/null || { echo "nvim is not installed" >&2; exit 1; }
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
binary="${DEPLOYFIT:-$target/debug/deployfit}"
[ -x "$binary" ] || (cd "$repo" && cargo build --quiet)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat > "$work/broken.deploy" <<'DEPLOY'
deployment chat {
    model = glm4_9b
    quant = Q4_K_M
    gpu   = rtx_9999
}

deployment ok {
    model  = glm4_9b
    quant  = Q4_K_M
    engine = llamacpp
    gpu    = rtx_3090
}
DEPLOY
sed -e 's/rtx_9999/rtx_3090/' "$work/broken.deploy" > "$work/clean.deploy"

run() {
  DEPLOYFIT="$binary" DEPLOYFIT_FILE="$1" DEPLOYFIT_REPO="$repo" \
    timeout 120 nvim --headless -u NONE -c "luafile $repo/editors/nvim/test/check.lua"
}

run "$work/broken.deploy"
if DIAGNOSTIC_WAIT=1 run "$work/clean.deploy" 2>/dev/null; then
  echo "FAIL: the check passed on a file without diagnostics" >&2
  exit 1
fi
echo "OK: the check fails when the server reports no diagnostic"
