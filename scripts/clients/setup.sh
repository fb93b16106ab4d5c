#!/usr/bin/env bash
# Installs the real MCP clients the `forkcache mcp` tests drive — Claude Code 2.1.332 (a ~400 MB
# native binary inside its npm package) and the Claude Agent SDK 0.3.332 — into a cache folder
# outside the repository. Idempotent: a second run checks the versions and installs nothing.
# Neither package needs an install script (`--ignore-scripts`), so a failure here means the
# registry could not be reached or the disk is full: the tests that need them then say they
# were skipped and why (they read `setup-failed.txt` in the folder).
#
#   bash scripts/clients/setup.sh        # prints the folder on its last line
#
# Environment: FORKCACHE_CLIENTS_CACHE (the folder; default ~/.cache/forkcache/clients).
set -euo pipefail
cache="${FORKCACHE_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forkcache/clients}"
claude_code="2.1.332"
agent_sdk="0.3.332"
mkdir -p "$cache"
fail() {
  echo "clients setup: $1" | tee "$cache/setup-failed.txt" >&2
  exit 1
}
installed() { node -e 'try{process.stdout.write(require(process.argv[1]).version)}catch{}' "$cache/node_modules/$1/package.json"; }
if [ "$(installed @anthropic-ai/claude-code)" != "$claude_code" ] || [ "$(installed @anthropic-ai/claude-agent-sdk)" != "$agent_sdk" ]; then
  [ -f "$cache/package.json" ] || echo '{"name":"forkcache-clients","private":true}' >"$cache/package.json"
  (cd "$cache" && npm install --no-audit --no-fund --ignore-scripts -E \
    "@anthropic-ai/claude-code@$claude_code" "@anthropic-ai/claude-agent-sdk@$agent_sdk") \
    >"$cache/npm-install.log" 2>&1 || fail "npm install failed: see $cache/npm-install.log"
fi
# The package's own bin/claude.exe is a stub its postinstall replaces; the binary itself ships in
# the platform package (an optional dependency), which is what runs here.
platform="$(node -p '`${process.platform}-${process.arch}`')"
bin="$cache/node_modules/@anthropic-ai/claude-code-$platform/claude"
[ -x "$bin" ] || fail "$bin is missing after the install (no @anthropic-ai/claude-code-$platform?)"
[ -x "$cache/node_modules/@anthropic-ai/claude-agent-sdk-$platform/claude" ] \
  || fail "the Agent SDK's native binary (@anthropic-ai/claude-agent-sdk-$platform) is missing"
ln -sf "$bin" "$cache/claude"
version="$("$bin" --version 2>&1 | head -1)" || fail "$bin does not run: $version"
case "$version" in "$claude_code"*) ;; *) fail "$bin reports '$version', expected $claude_code" ;; esac
rm -f "$cache/setup-failed.txt"
echo "clients setup: claude-code $claude_code, claude-agent-sdk $agent_sdk ready"
echo "$cache"
