#!/usr/bin/env bash
# Re-run today's real clients against `forkcache emulator`, offline, and refresh the fixtures in
# test/fixtures/clients/ from what they sent. On demand only, not in CI: it installs ~400 MB
# (Claude Code's native binary) into a directory outside the repository.
#
#   scripts/real-clients.sh [WORK_DIR]        # default: $TMPDIR/forkcache-real-clients
#   CLAUDE_CODE_VERSION=2.1.337 scripts/real-clients.sh [WORK_DIR]
#
# With CLAUDE_CODE_VERSION (a build of scripts/clients/claude-code.json), only the Claude Code
# and Agent SDK scenarios run, on that build as scripts/clients/setup.sh installed it, and the
# fixtures go to test/fixtures/clients/claude-code-VERSION/ (the flat ones stay 2.1.332's).
#
# Each scenario gets a fresh emulator (so its cache figures depend on nothing run before), with
# --log-dir capturing every exchange; scripts/clients-to-fixtures.ts then scrubs keys, session
# ids and local paths and writes one fixture per scenario. Exits non-zero if a client fails.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${1:-${TMPDIR:-/tmp}/forkcache-real-clients}"
CLIENTS="$WORK/clients"
LOGS="$WORK/logs"
PROJECT="$WORK/project"
mkdir -p "$CLIENTS" "$LOGS" "$PROJECT"

VERSION="${CLAUDE_CODE_VERSION:-}"
if [ -n "$VERSION" ]; then
  CACHE="$(bash "$REPO/scripts/clients/setup.sh" | tail -n 1)"
  CLIENTS="$CACHE/claude-code/$VERSION"
  [ -x "$CLIENTS/claude" ] || { echo "real-clients: Claude Code $VERSION is not in scripts/clients/claude-code.json" >&2; exit 1; }
  CLAUDE="$CLIENTS/claude"
  SDK="$CLIENTS/agent-sdk"
fi
# Versions of issue 13 (the facts file's "Real clients" section).
if [ -z "$VERSION" ] && [ ! -x "$CLIENTS/node_modules/.bin/claude" ]; then
  (cd "$CLIENTS" && [ -f package.json ] || npm init -y >/dev/null
   cd "$CLIENTS" && npm i -E @anthropic-ai/claude-code@2.1.332 @anthropic-ai/claude-agent-sdk@0.3.332 @qwen-code/qwen-code@0.24.4)
fi
PYTHON=""
if [ -z "$VERSION" ] && [ ! -x "$WORK/venv/bin/python" ]; then
  python3 -m venv "$WORK/venv" && "$WORK/venv/bin/pip" install -q anthropic==1.13.0 || echo "real-clients: the Python SDK could not be installed; skipping it" >&2
fi
[ -x "$WORK/venv/bin/python" ] && "$WORK/venv/bin/python" -c 'import anthropic' 2>/dev/null && PYTHON="$WORK/venv/bin/python"

printf 'line one\nline two\n' > "$PROJECT/notes.txt"
export ANTHROPIC_API_KEY=sk-ant-emulator-fake-key
export DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1

EMU_PID=""
stop_emulator() { if [ -n "$EMU_PID" ]; then kill "$EMU_PID" 2>/dev/null || true; wait "$EMU_PID" 2>/dev/null || true; EMU_PID=""; fi; }
trap stop_emulator EXIT

# start_emulator NAME SCRIPT: a fresh emulator logging into $LOGS/NAME; sets ANTHROPIC_BASE_URL.
start_emulator() {
  rm -rf "$LOGS/$1" && mkdir -p "$LOGS/$1"
  local out="$LOGS/$1.stdout"
  node "$REPO/bin/forkcache.js" emulator --port 0 --latency off --script "$2" --log-dir "$LOGS/$1" > "$out" 2>&1 &
  EMU_PID=$!
  for _ in $(seq 1 100); do grep -q 'listening on' "$out" 2>/dev/null && break; sleep 0.2; done
  export ANTHROPIC_BASE_URL="$(sed -n 's/.*listening on //p' "$out")"
  [ -n "$ANTHROPIC_BASE_URL" ] || { echo "real-clients: the emulator did not start" >&2; cat "$out" >&2; exit 1; }
}

# claude_home NAME: a private HOME / config dir per scenario (no login, no shared state).
claude_env() { export HOME="$WORK/home-$1" CLAUDE_CONFIG_DIR="$WORK/home-$1/.claude"; mkdir -p "$CLAUDE_CONFIG_DIR"; }

run() { # run NAME SCRIPT COMMAND...
  local name="$1" script="$2"; shift 2
  start_emulator "$name" "$script"
  echo "$script" > "$LOGS/$name.script"
  echo "$*" | sed "s#$CLIENTS/node_modules/.bin/##; s#$CLIENTS/##; s#$REPO/##" > "$LOGS/$name.command"
  echo "== $name: $*" >&2
  (cd "$PROJECT" && timeout 300 "$@") > "$LOGS/$name.client.txt" 2>&1 || { echo "real-clients: $name failed:" >&2; cat "$LOGS/$name.client.txt" >&2; exit 1; }
  stop_emulator
}

CLAUDE="${CLAUDE:-$CLIENTS/node_modules/.bin/claude}"
SDK="${SDK:-$CLIENTS}"
claude_env default; run cc-default-model echo "$CLAUDE" -p "say hi"
for model in claude-fable-5-2 claude-mythos-5-2 claude-opus-5-5 claude-sonnet-5-5 claude-haiku-5-5; do
  claude_env "$model"; run "cc-model-$model" echo "$CLAUDE" -p "say hi" --model "$model"
done
claude_env tools
_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1 run cc-first-party-read-bash claude-code "$CLAUDE" -p 'read notes.txt then run `wc -l notes.txt`' --allowedTools Read Bash
claude_env fork; run cc-fork-fanout claude-code "$CLAUDE" -p 'fork read notes.txt | count the lines of notes.txt' --allowedTools Agent Read Bash
claude_env agent-sdk; run agent-sdk-query echo node "$REPO/scripts/real-clients/agent-sdk-query.mjs" "$SDK" "say hi"
for model in claude-fable-5-2 claude-mythos-5-2 claude-opus-5-5 claude-sonnet-5-5 claude-haiku-5-5; do
  claude_env "agent-sdk-$model"; run "agent-sdk-query-$model" echo node "$REPO/scripts/real-clients/agent-sdk-query.mjs" "$SDK" "say hi" "$model"
done

if [ -n "$VERSION" ]; then
  mkdir -p "$REPO/test/fixtures/clients/claude-code-$VERSION"
  cd "$REPO" && npx tsx scripts/clients-to-fixtures.ts "$LOGS" "test/fixtures/clients/claude-code-$VERSION" "$PROJECT" "$WORK" "$CACHE"
  echo "real-clients: Claude Code $VERSION fixtures refreshed from $LOGS" >&2
  exit 0
fi
QWEN="$CLIENTS/node_modules/.bin/qwen"
export ANTHROPIC_MODEL=claude-opus-5-5
mkdir -p "$WORK/home-qwen"
HOME="$WORK/home-qwen" run qwen-opus-5-5 echo "$QWEN" --auth-type anthropic -p "say hi"
mkdir -p "$WORK/home-qwen-global/.qwen"
echo '{"model":{"generationConfig":{"forceGlobalCacheScope":true}}}' > "$WORK/home-qwen-global/.qwen/settings.json"
HOME="$WORK/home-qwen-global" run qwen-opus-5-5-global-scope echo "$QWEN" --auth-type anthropic -p "say hi"

if [ -n "$PYTHON" ]; then run python-sdk echo "$PYTHON" "$REPO/scripts/real-clients/python-sdk.py"; fi

cd "$REPO" && npx tsx scripts/clients-to-fixtures.ts "$LOGS" test/fixtures/clients "$PROJECT" "$WORK"
echo "real-clients: fixtures refreshed from $LOGS" >&2
