#!/usr/bin/env bash
# Creates or refreshes .venv in the repository root: Python 3.12, the project and its test tools.
# Idempotent: reinstalls only when pyproject.toml changed since the last successful run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"

say() { printf 'bootstrap: %s\n' "$*" >&2; }

is_312() { "$1" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 12) else 1)' >/dev/null 2>&1; }

find_python() {
  local c
  for c in "${VERIGUARD_PYTHON:-}" python3.12 python3; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1 && is_312 "$(command -v "$c")"; then command -v "$c"; return 0; fi
  done
  if command -v pyenv >/dev/null 2>&1; then
    for c in "$(pyenv root)"/versions/3.12*/bin/python3.12; do
      if [ -x "$c" ] && is_312 "$c"; then echo "$c"; return 0; fi
    done
  fi
  return 1
}

check_java() {
  local out major
  if ! out="$(java -version 2>&1)"; then
    say "Java 11 or newer is required by the Nagini verifier and was not found on PATH."
    say "fix: install a JDK/JRE 11+ (Debian/Ubuntu: 'apt-get install openjdk-17-jre-headless'; macOS: 'brew install openjdk@17'), or put its bin/ on PATH."
    return 1
  fi
  major="$(printf '%s' "$out" | sed -n 's/.*version "\([0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2/p' | head -n1)"
  set -- $major
  local m="${1:-0}"; [ "$m" = "1" ] && m="${2:-0}"
  if [ "$m" -lt 11 ]; then
    say "Java $m found, but Nagini needs Java 11 or newer. fix: install openjdk-17 and put it first on PATH."
    return 1
  fi
}

py="$(find_python)" || {
  say "Python 3.12 not found (Nagini 1.3.1 runs only on 3.12)."
  say "fix: install it ('pyenv install 3.12', or your package manager's python3.12), or set VERIGUARD_PYTHON=/path/to/python3.12."
  exit 2
}
check_java || exit 2

# Bytecode for veriguard's own modules, as `pip install` of a wheel writes it: every `veriguard` process (a hook
# call, a monitor, synth) would otherwise compile them again where PYTHONDONTWRITEBYTECODE is set (about 0.3 s).
# Only stale files are compiled; Python checks each file's size and time against its source before using it.
compile_bytecode() {
  (cd "$root" && "$venv/bin/python" -m compileall -q contracts verify synth enforce providers veriguard >/dev/null) || true
}

stamp="$venv/.veriguard-stamp"
want="$(cat "$root/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && is_312 "$venv/bin/python" && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  compile_bytecode
  exit 0
fi
if [ ! -x "$venv/bin/python" ] || ! is_312 "$venv/bin/python"; then
  say "creating .venv with $py"
  rm -rf "$venv"
  "$py" -m venv "$venv"
fi
say "installing veriguard and its dependencies into .venv (first run: one to three minutes)"
log="$venv/bootstrap.log"
if ! { "$venv/bin/python" -m pip install --upgrade "pip>=24" && "$venv/bin/python" -m pip install -e "$root[all,test]"; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  say "pip failed; the full log is $log"
  exit 2
fi
echo "$want" > "$stamp"
compile_bytecode
say "ready: $venv"
