#!/usr/bin/env bash
# The GitHub Action's steps (action.yml), runnable anywhere: tests/it/action.rs runs it.
#
#   scripts/action.sh key       print the action's source hash (the source build's cache key)
#   scripts/action.sh install   put deployfit in $DEPLOYFIT_ROOT/bin: the release binary of
#                               $INPUT_VERSION, its SHA-256 checked, else a source build of
#                               this repository (skipped when the binary is there: the cache)
#   scripts/action.sh check     run `deployfit check` with GitHub annotations, a step summary,
#                               the errors/warnings outputs, and a SARIF file when asked
#
# Inputs come from the environment, as a composite action passes them:
#   INPUT_VERSION           a release (`0.1.0`, `v0.1.0`) to download, or `source` to build
#                           this checkout of the action (default: the action's own tag,
#                           $ACTION_REF, when it is a version, else `source`)
#   INPUT_PATHS             files or directories, separated by spaces or newlines (default ".")
#   INPUT_ARGS              more `deployfit check` options, separated by spaces (each one
#                           argument, never globbed or evaluated)
#   INPUT_WORKING_DIRECTORY where to run (default ".")
#   INPUT_DENY_WARNINGS     "true" or "false" (default "false")
#   INPUT_NOTICES           "true": notes become annotations and SARIF alerts too (default
#                           "false": errors and warnings only)
#   INPUT_SARIF             "true" or "false": also write $INPUT_SARIF_FILE (default "false")
#   INPUT_SARIF_FILE        where the SARIF log goes (default "deployfit.sarif")
#   DEPLOYFIT_RELEASES      where releases are downloaded from (default the GitHub releases of
#                           deployfit/deployfit; a file:// folder in the tests)
# Outputs go to $GITHUB_OUTPUT (errors=N, warnings=N) and the summary to
# $GITHUB_STEP_SUMMARY when they are set.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="${DEPLOYFIT_ROOT:-$here/target/action}"
bin="${DEPLOYFIT:-$root/bin/deployfit}"
releases="${DEPLOYFIT_RELEASES:-https://github.com/deployfit/deployfit/releases/download}"

fail() {
  echo "::error title=deployfit action::$*" >&2
  exit 2
}

bool() {
  case "$2" in
    true | false) printf '%s' "$2" ;;
    *) fail "input $1 must be true or false, not '$2'" ;;
  esac
}

# Words of an input, split on whitespace only: no globbing, no evaluation.
words() {
  set -f
  local line word
  while IFS= read -r line; do
    for word in $line; do printf '%s\n' "$word"; done
  done < <(printf '%s\n' "$1")
  set +f
}

# The version to install: the input, else the action's own tag when it names a release.
version() {
  local v="${INPUT_VERSION:-}"
  if [[ -z "$v" ]]; then
    case "${ACTION_REF:-}" in
      v[0-9]*) v="${ACTION_REF}" ;;
      *) v=source ;;
    esac
  fi
  v="${v#v}"
  if [[ "$v" != source && ! "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
    fail "input version must be a release such as 0.1.0, or 'source', not '$v'"
  fi
  printf '%s' "$v"
}

# cargo-dist's target triple for this runner.
target() {
  local os arch
  os="$(uname -s)"
  arch="$(uname -m)"
  case "$os/$arch" in
    Linux/x86_64) echo x86_64-unknown-linux-gnu ;;
    Linux/aarch64 | Linux/arm64) echo aarch64-unknown-linux-gnu ;;
    Darwin/arm64) echo aarch64-apple-darwin ;;
    Darwin/x86_64) echo x86_64-apple-darwin ;;
    MINGW* | MSYS* | CYGWIN*) echo x86_64-pc-windows-msvc ;;
    *) echo "" ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# Downloads the release's archive for this runner and checks it against its .sha256;
# returns non-zero (with a warning) when there is none or it does not match.
download() {
  local v="$1" triple archive tmp expected actual
  triple="$(target)"
  [[ -n "$triple" ]] || { echo "::warning title=deployfit action::no release build for $(uname -s)/$(uname -m)"; return 1; }
  archive="deployfit-$triple.tar.xz"
  [[ "$triple" == *windows* ]] && archive="deployfit-$triple.zip"
  tmp="$(mktemp -d)"
  if ! curl -fsSL --retry 3 -o "$tmp/$archive" "$releases/v$v/$archive" \
    || ! curl -fsSL --retry 3 -o "$tmp/$archive.sha256" "$releases/v$v/$archive.sha256"; then
    echo "::warning title=deployfit action::no release v$v of deployfit for $triple at $releases"
    rm -rf "$tmp"
    return 1
  fi
  expected="$(cut -d' ' -f1 <"$tmp/$archive.sha256")"
  actual="$(sha256 "$tmp/$archive")"
  if [[ "$expected" != "$actual" ]]; then
    echo "::error title=deployfit action::the SHA-256 of $archive is $actual, its release says $expected"
    rm -rf "$tmp"
    exit 2
  fi
  mkdir -p "$root/bin"
  if [[ "$archive" == *.zip ]]; then
    (cd "$tmp" && unzip -q "$archive")
  else
    tar -xJf "$tmp/$archive" -C "$tmp"
  fi
  found="$(find "$tmp" -type f \( -name deployfit -o -name deployfit.exe \) | head -1)"
  [[ -n "$found" ]] || fail "$archive holds no deployfit binary"
  cp "$found" "$root/bin/"
  chmod +x "$root/bin/$(basename "$found")"
  rm -rf "$tmp"
  echo "deployfit $v installed from the release ($archive, SHA-256 $actual)"
}

case "${1:-}" in
  key)
    # Every file a source build reads: the cache follows the action's commit.
    (cd "$here" && find Cargo.toml Cargo.lock src syntax model compiler ide host lsp mcp artifacts registry grammar stdlib \
      -type f 2>/dev/null | LC_ALL=C sort | while IFS= read -r f; do sha256 "$f"; done | sha256 /dev/stdin)
    ;;
  install)
    v="$(version)"
    if [[ -x "$bin" ]]; then
      echo "deployfit is cached at $bin"
    elif [[ "$v" == source ]] || ! download "$v"; then
      echo "building deployfit from $here"
      "${DEPLOYFIT_CARGO:-cargo}" install --locked --path "$here" --root "$root"
    fi
    "$bin" --version
    ;;
  check)
    deny="$(bool deny-warnings "${INPUT_DENY_WARNINGS:-false}")"
    sarif="$(bool sarif "${INPUT_SARIF:-false}")"
    notices="$(bool notices "${INPUT_NOTICES:-false}")"
    sarif_file="${INPUT_SARIF_FILE:-deployfit.sarif}"
    cd "${INPUT_WORKING_DIRECTORY:-.}" || fail "working-directory '${INPUT_WORKING_DIRECTORY}' does not exist"
    paths=()
    while IFS= read -r word; do
      [[ "$word" == -* ]] && fail "path '$word' starts with '-'"
      paths+=("$word")
    done < <(words "${INPUT_PATHS:-.}")
    [[ ${#paths[@]} -eq 0 ]] && paths=(.)
    flags=()
    while IFS= read -r word; do
      case "$word" in
        --format | --format=* | --fix | --diff | -o | --output*) fail "args cannot set $word: the action chooses the outputs" ;;
      esac
      flags+=("$word")
    done < <(words "${INPUT_ARGS:-}")
    [[ "$deny" == true ]] && flags+=(--deny warnings)
    [[ "$notices" == true ]] || flags+=(--min-severity warning)
    if [[ "$sarif" == true ]]; then
      "$bin" check --format sarif "${flags[@]}" -- "${paths[@]}" >"$sarif_file" || true
    fi
    if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
      "$bin" check --format markdown "${flags[@]}" -- "${paths[@]}" >>"$GITHUB_STEP_SUMMARY" || true
    fi
    counts="$("$bin" check --format json "${flags[@]}" -- "${paths[@]}" | tr -d ' \n' | grep -o '"summary":{[^}]*}' || true)"
    errors="$(printf '%s' "$counts" | sed -n 's/.*"errors":\([0-9]*\).*/\1/p')"
    warnings="$(printf '%s' "$counts" | sed -n 's/.*"warnings":\([0-9]*\).*/\1/p')"
    if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
      printf 'errors=%s\nwarnings=%s\n' "${errors:-0}" "${warnings:-0}" >>"$GITHUB_OUTPUT"
    fi
    status=0
    "$bin" check --format github "${flags[@]}" -- "${paths[@]}" || status=$?
    exit "$status"
    ;;
  *)
    echo "usage: scripts/action.sh key|install|check" >&2
    exit 2
    ;;
esac
