#!/usr/bin/env bash
# Record one real Claude Code session offline against `forkcache emulator`, then scrub it into
# a fixture with scripts/session-to-fixture.ts. On demand only, not in CI.
#
#   CLAUDE=/path/to/node_modules/.bin/claude scripts/record-claude-session.sh OUT_DIR PROMPT [claude args...]
#
# e.g. the fixture test/fixtures/claude-code/2.1.332/fork-fanout-haiku-4-5:
#   CLAUDE=... scripts/record-claude-session.sh test/fixtures/claude-code/2.1.332/fork-fanout-haiku-4-5 \
#     'fork read notes.txt | count the lines of notes.txt' --allowedTools Agent Read Bash --model claude-haiku-4-5
#
# Install Claude Code outside the repository (~400 MB): `npm i -E @anthropic-ai/claude-code@2.1.332`
# in a directory of its own. The session runs in a fresh work directory (its own HOME and
# CLAUDE_CONFIG_DIR, a project holding a two-line notes.txt) against a fresh emulator with the
# `claude-code` scripted model (`SCRIPT=` to choose another) and --log-dir for the wire requests.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$1"; PROMPT="$2"; shift 2
CLAUDE="${CLAUDE:-claude}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/forkcache-session-XXXXXX")"
mkdir -p "$WORK/project" "$WORK/logs" "$WORK/home/.claude"
printf 'line one\nline two\n' > "$WORK/project/notes.txt"
export ANTHROPIC_API_KEY=sk-ant-emulator-fake-key
export DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1
export HOME="$WORK/home" CLAUDE_CONFIG_DIR="$WORK/home/.claude"

node "$REPO/bin/forkcache.js" emulator --port 0 --latency off --script "${SCRIPT:-claude-code}" --log-dir "$WORK/logs" > "$WORK/emulator.out" 2>&1 &
EMU=$!
trap 'kill "$EMU" 2>/dev/null || true; wait "$EMU" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q 'listening on' "$WORK/emulator.out" 2>/dev/null && break; sleep 0.2; done
export ANTHROPIC_BASE_URL="$(sed -n 's/.*listening on //p' "$WORK/emulator.out")"
[ -n "$ANTHROPIC_BASE_URL" ] || { echo "record-claude-session: the emulator did not start" >&2; cat "$WORK/emulator.out" >&2; exit 1; }

(cd "$WORK/project" && timeout 300 "$CLAUDE" -p "$PROMPT" "$@") > "$WORK/client.txt" 2>&1 \
  || { echo "record-claude-session: claude failed:" >&2; cat "$WORK/client.txt" >&2; exit 1; }
SESSION="$(find "$WORK/home/.claude/projects" -maxdepth 2 -name '*.jsonl' | head -n 1)"
[ -n "$SESSION" ] || { echo "record-claude-session: no session transcript was written" >&2; exit 1; }
cd "$REPO" && npx tsx scripts/session-to-fixture.ts "$SESSION" "$WORK/logs" "$WORK" "$OUT"
echo "record-claude-session: $OUT (work directory $WORK)" >&2
