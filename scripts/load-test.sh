#!/usr/bin/env bash
# Runs the load test and checks that the process exits by itself once the work is done:
# a leaked handle (socket, timer, worker) would keep it alive past the deadline.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
timeout 600 npx tsx scripts/load-test.mts "$@"
echo "exited on its own after $(( $(date +%s) - start )) s"
