#!/usr/bin/env bash
# The disk and `clean` figures of docs/review.md on a repository nobody here wrote: the rxjs
# 7.8.1 package (from `npm pack`, 2,277 files) as a one-commit repository, one fork per
# TypeScript file (FORKS of them, sorted), `rename isFunction to isFn in {file}` on the embedded
# emulator's refactor model, under isolation: worktree, sparse and full. Prints per mode: the
# repository's size, the peak of repository + run directory while the run goes (sampled with
# du), the run's and clean's seconds and their ratio. Usage: scripts/worktree-disk-real-repo.sh
# [WORKDIR] [FORKS] (MODES="sparse" for one mode)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
forks=${2:-300}
forkcache() { node "$here/bin/forkcache.js" "$@"; }
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=check GIT_AUTHOR_EMAIL=check@localhost GIT_COMMITTER_NAME=check GIT_COMMITTER_EMAIL=check@localhost
unset ANTHROPIC_API_KEY

mkdir -p "$work" && cd "$work"
[ -f rxjs-7.8.1.tgz ] || npm pack --silent rxjs@7.8.1 >/dev/null
(cd "$here" && node --import tsx -e '
  const { readFileSync, writeFileSync } = await import("node:fs");
  const { TOOL_DECLARATIONS } = await import("./src/core/tools/declarations.ts");
  const parent = JSON.parse(readFileSync("examples/plan/parent.json", "utf8"));
  writeFileSync(process.argv[1], JSON.stringify({ ...parent, tools: TOOL_DECLARATIONS }));
' "$work/parent.json")

for mode in ${MODES:-sparse full}; do
  repo=$work/repo-$mode runs=$work/runs-$mode
  rm -rf "$repo" "$runs" && mkdir -p "$repo"
  tar -xzf rxjs-7.8.1.tgz -C "$repo" --strip-components=1
  git -C "$repo" init -q -b main && git -C "$repo" add -A && git -C "$repo" commit -qm base
  repo_kb=$(du -sk "$repo" | cut -f1)
  node -e '
    const [repo, runs, parent, n, mode] = process.argv.slice(1);
    const { execFileSync } = require("node:child_process");
    const files = execFileSync("git", ["-C", repo, "ls-files", "*.ts"]).toString().trim().split("\n").sort().slice(0, Number(n));
    console.log(JSON.stringify({ parent, workspace: repo, runsDir: runs, isolation: "worktree", sparse: mode === "sparse",
      directives: files.map((file) => ({ directive: `rename isFunction to isFn in ${file}`, file })),
      emulator: { script: "refactor", latency: "off" } }));
  ' "$repo" "$runs" "$work/parent.json" "$forks" "$mode" > "plan-$mode.json"
  start=$(date +%s.%N)
  # its own session: the run's ending must not take this script's process group with it
  setsid node "$here/bin/forkcache.js" run "plan-$mode.json" --json > "run-$mode.json" 2> "run-$mode.err" &
  pid=$!
  peak=0
  while kill -0 "$pid" 2>/dev/null; do
    # du fails when a worktree goes while it counts: the sum of what it saw is kept
    now=$( (du -sk "$repo" "$runs" 2>/dev/null || true) | awk '{s+=$1} END {print s+0}')
    [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.5
  done
  wait "$pid" || true
  ran=$(echo "$(date +%s.%N) - $start" | bc)
  echo "$mode: run ended after $ran s, peak $((peak / 1024)) MB" >&2
  dir=$(ls -d "$runs"/*/)
  start=$(date +%s.%N); forkcache clean "$dir" --force > "clean-$mode.txt" || true
  cleaned=$(echo "$(date +%s.%N) - $start" | bc)
  completed=$(node -e 'console.log(require(process.argv[1]).forks.completed)' "$work/run-$mode.json")
  echo "$mode: $forks forks ($completed completed); repository $((repo_kb / 1024)) MB, peak repository + run dir $((peak / 1024)) MB ($(echo "scale=2; $peak / $repo_kb" | bc)x);" \
    "run $ran s, clean $cleaned s ($(echo "scale=3; $cleaned / $ran" | bc)x the run)"
done
