#!/usr/bin/env bash
# Run Qwen Code 0.24.4 against `forkcache emulator --api dashscope`, offline, and refresh the
# fixtures in test/fixtures/qwen-code-openai/ from what it sent. On demand only, not in CI: it
# installs Qwen Code into a directory outside the repository.
#
#   scripts/qwen-code-openai.sh [WORK_DIR]     # default: $TMPDIR/forkcache-qwen-code-openai
#
# Qwen Code takes its DashScope path (X-DashScope-CacheControl and cache_control markers) only
# for DashScope hosts or for DASHSCOPE_PROXY_BASE_URL: setting that to the emulator's base URL
# is what makes it send explicit-cache requests to a local endpoint.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${1:-${TMPDIR:-/tmp}/forkcache-qwen-code-openai}"
mkdir -p "$WORK/client" "$WORK/home" "$WORK/project"
rm -rf "$WORK/log"
if [ ! -x "$WORK/client/node_modules/.bin/qwen" ]; then
  (cd "$WORK/client" && npm i -E --no-audit --no-fund @qwen-code/qwen-code@0.24.4)
fi

node "$REPO/bin/forkcache.js" emulator --api dashscope --port 0 --latency off --seed 1 --log-dir "$WORK/log" > "$WORK/emulator.out" 2>&1 &
EMU_PID=$!
trap 'kill "$EMU_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q 'listening on' "$WORK/emulator.out" 2>/dev/null && break; sleep 0.2; done
BASE="$(sed -n 's/.*listening on //p' "$WORK/emulator.out")/compatible-mode/v1"

(cd "$WORK/project" && env -i PATH="$PATH" HOME="$WORK/home" TERM=dumb \
  OPENAI_API_KEY=sk-emulator-fake-key OPENAI_BASE_URL="$BASE" OPENAI_MODEL=qwen3-coder-plus \
  DASHSCOPE_PROXY_BASE_URL="$BASE" \
  "$WORK/client/node_modules/.bin/qwen" --auth-type openai -p "Say hello in one short sentence.")

node --import tsx "$REPO/scripts/qwen-code-openai-fixtures.ts" "$WORK/log" "$WORK" "$REPO/test/fixtures/qwen-code-openai"
