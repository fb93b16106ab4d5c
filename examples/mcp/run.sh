#!/usr/bin/env bash
# forkcache mcp, offline: the emulator stands in for the API, `forkcache proxy --mcp` sits in
# front of it and serves the fork tool, and a real client fans out through that tool.
#
#   CLAUDE=/path/to/claude bash examples/mcp/run.sh claude-code [N]   # Claude Code 2.1.332
#   AGENT_SDK=/path/to/@anthropic-ai/claude-agent-sdk bash examples/mcp/run.sh agent-sdk [N]
#   QWEN=/path/to/@qwen-code/qwen-code/cli-entry.js NODE22=/path/to/node22 bash examples/mcp/run.sh qwen-code [N]
#
# (`bash scripts/clients/setup.sh` installs all three outside the checkout.) It prints the client's
# answer and then the proxy's summary: the client's turns and the fan-out of its N forks.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
forkcache="${FORKCACHE:-node $here/../../bin/forkcache.js}"
client="${1:?usage: run.sh claude-code|agent-sdk|qwen-code [N]}"
forks="${2:-5}"
work="$(mktemp -d "${TMPDIR:-/tmp}/forkcache-mcp-example-XXXXXX")"
mkdir -p "$work/project" "$work/home/.claude"
printf 'line one\nline two\n' >"$work/project/notes.txt"

pids=()
cleanup() { for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
# wait_for FILE TEXT: until a server has printed its address (bounded).
wait_for() { for _ in $(seq 1 240); do grep -q "$2" "$1" 2>/dev/null && return; sleep 0.5; done; cat "$1" >&2; exit 1; }

$forkcache emulator --port 0 --latency off --script claude-code >"$work/emulator.out" 2>&1 &
pids+=($!)
wait_for "$work/emulator.out" 'listening on'
upstream="$(sed -n 's/.*listening on //p' "$work/emulator.out")"

# One process: the proxy the client's API requests go through, and the MCP endpoint at /mcp.
(cd "$work/project" && exec $forkcache proxy --upstream "$upstream" --mcp --mcp-config "$work/mcp.json" --json) \
  >"$work/proxy.out" 2>"$work/proxy.err" &
proxy=$!
# a client that fails must not leave the proxy running (the cleanup waits for every child)
pids+=("$proxy")
wait_for "$work/proxy.out" 'forkcache mcp at'
base_url="$(sed -n 's/forkcache proxy listening on //p' "$work/proxy.out")"

export HOME="$work/home" CLAUDE_CONFIG_DIR="$work/home/.claude" ANTHROPIC_BASE_URL="$base_url"
export ANTHROPIC_API_KEY=sk-ant-emulator-fake-key DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1
prompt="fork $forks times: count the lines of notes.txt"
cd "$work/project"
case "$client" in
  claude-code)
    "${CLAUDE:?set CLAUDE to the claude binary}" -p "$prompt" --mcp-config "$work/mcp.json" \
      --allowedTools mcp__forkcache__fork ToolSearch
    ;;
  agent-sdk)
    node "$here/agent-sdk.mjs" "${AGENT_SDK:?set AGENT_SDK to the package directory}" "$work/mcp.json" "$prompt"
    ;;
  qwen-code)
    # Qwen Code reads its MCP servers from ~/.qwen/settings.json: the proxy's entry, as `httpUrl`.
    mkdir -p "$HOME/.qwen"
    node -e 'const [from, to] = process.argv.slice(1);
      const { url, headers } = JSON.parse(require("fs").readFileSync(from, "utf8")).mcpServers.forkcache;
      const forkcache = { httpUrl: url, headers, trust: true, timeout: 1800000 };
      require("fs").writeFileSync(to, JSON.stringify({ mcpServers: { forkcache } }), { mode: 0o600 });' \
      "$work/mcp.json" "$HOME/.qwen/settings.json"
    ANTHROPIC_MODEL=claude-opus-5-5 "${NODE22:-node}" "${QWEN:?set QWEN to the cli-entry.js of Qwen Code}" \
      --auth-type anthropic -p "$prompt"
    ;;
  *) echo "run.sh: unknown client $client (claude-code, agent-sdk, qwen-code)" >&2; exit 2 ;;
esac
kill -INT "$proxy"
wait "$proxy"
tail -n 1 "$work/proxy.out"
