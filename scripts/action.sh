#!/usr/bin/env bash
# The GitHub Action's steps (action.yml), runnable anywhere: tests/it/action.rs runs it.
#
#   scripts/action.sh install   build deployfit from this repository into $DEPLOYFIT_ROOT
#                               (skipped when $DEPLOYFIT_ROOT/bin/deployfit exists: the cache)
#   scripts/action.sh check     run `deployfit check` with GitHub annotations, and a SARIF
#                               file when asked
#
# Inputs come from the environment, as a composite action passes them:
#   INPUT_PATHS          files or directories, separated by spaces or newlines (default ".")
#   INPUT_DENY_WARNINGS  "true" or "false" (default "false")
#   INPUT_SARIF          "true" or "false": also write $INPUT_SARIF_FILE (default "false")
#   INPUT_SARIF_FILE     where the SARIF log goes (default "deployfit.sarif")
# Each path is passed as one argument (no word splitting inside a path, no globbing, no
# evaluation); a path that starts with "-" is refused.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="${DEPLOYFIT_ROOT:-$here/target/action}"
bin="${DEPLOYFIT:-$root/bin/deployfit}"

bool() {
  case "$2" in
    true | false) printf '%s' "$2" ;;
    *)
      echo "::error title=deployfit action::input $1 must be true or false, not '$2'" >&2
      exit 2
      ;;
  esac
}

case "${1:-}" in
  install)
    if [[ -x "$bin" ]]; then
      echo "deployfit is cached at $bin"
    else
      cargo install --locked --path "$here" --root "$root"
    fi
    ;;
  check)
    deny="$(bool deny-warnings "${INPUT_DENY_WARNINGS:-false}")"
    sarif="$(bool sarif "${INPUT_SARIF:-false}")"
    sarif_file="${INPUT_SARIF_FILE:-deployfit.sarif}"
    set -f # split on whitespace only: no globbing
    paths=()
    while IFS= read -r line; do
      for word in $line; do
        [[ "$word" == -* ]] && {
          echo "::error title=deployfit action::path '$word' starts with '-'" >&2
          exit 2
        }
        paths+=("$word")
      done
    done < <(printf '%s\n' "${INPUT_PATHS:-.}")
    [[ ${#paths[@]} -eq 0 ]] && paths=(.)
    flags=()
    [[ "$deny" == true ]] && flags+=(--deny warnings)
    status=0
    if [[ "$sarif" == true ]]; then
      "$bin" check --format sarif "${flags[@]}" -- "${paths[@]}" >"$sarif_file" || true
    fi
    "$bin" check --format github "${flags[@]}" -- "${paths[@]}" || status=$?
    exit "$status"
    ;;
  *)
    echo "usage: scripts/action.sh install|check" >&2
    exit 2
    ;;
esac
