#!/usr/bin/env bash
# Runs the unit and integration projects (what `npm test` runs) on one Node.js release of
# scripts/node/versions.sh, installed by scripts/node/setup.sh. The tests' own child processes
# (forkcache commands, fork workers) run on the same Node: it comes first on PATH.
#
#   bash scripts/node/test.sh 26                     # the newest LTS
#   bash scripts/node/test.sh 22 --project unit      # more vitest arguments after the major
set -euo pipefail
major="${1:?usage: scripts/node/test.sh MAJOR [vitest arguments]}"
shift
root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="$(bash "$root/scripts/node/setup.sh" | tail -n 1)"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
ln -s "$cache/node$major" "$bin/node"
export PATH="$bin:$PATH"
cd "$root"
node --version
[ $# -gt 0 ] || set -- --project unit --project integration
node node_modules/vitest/vitest.mjs run "$@"
