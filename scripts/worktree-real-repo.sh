#!/usr/bin/env bash
# The worktree check of docs/review.md on a real repository nobody here wrote: the
# @anthropic-ai/sdk 1.14.0 sources (from `npm pack`), one fork per file that uses buildHeaders
# (80 files), renaming it to mergeHeaders on the embedded emulator's refactor model.
# ROUNDS worktree runs (each: run, status, merge, clean) and one shared-workspace run; prints
# the times, the disk used before and after clean, and whether each merged tree equals the
# shared run's tree. Usage: scripts/worktree-real-repo.sh [WORKDIR] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
rounds=${2:-3}
forkcache() { node "$here/bin/forkcache.js" "$@"; }
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=check GIT_AUTHOR_EMAIL=check@localhost GIT_COMMITTER_NAME=check GIT_COMMITTER_EMAIL=check@localhost
unset ANTHROPIC_API_KEY

mkdir -p "$work" && cd "$work"
[ -f anthropic-ai-sdk-1.14.0.tgz ] || npm pack --silent @anthropic-ai/sdk@1.14.0 >/dev/null
fresh_repo() { # DIR: the package sources as a one-commit repository
  rm -rf "$1" && mkdir -p "$1"
  tar -xzf anthropic-ai-sdk-1.14.0.tgz -C "$1" --strip-components=1
  git -C "$1" init -q -b main && git -C "$1" add -A && git -C "$1" commit -qm base
}
plan() { # REPO RUNS ISOLATION > plan.json
  node -e '
    const [repo, runs, isolation] = process.argv.slice(1);
    const { execFileSync } = require("node:child_process");
    const files = execFileSync("git", ["-C", repo, "grep", "-lw", "buildHeaders", "--", "src/*.ts"]).toString().trim().split("\n");
    const parent = JSON.parse(require("node:fs").readFileSync(process.env.PARENT, "utf8"));
    console.log(JSON.stringify({ parent, workspace: repo, runsDir: runs, isolation,
      directives: files.map((f) => `rename buildHeaders to mergeHeaders in ${f}`),
      emulator: { script: "refactor", latency: "off" } }));
  ' "$@"
}
(cd "$here" && node --import tsx -e '
  const { readFileSync, writeFileSync } = await import("node:fs");
  const { TOOL_DECLARATIONS } = await import("./src/core/tools/declarations.ts");
  const parent = JSON.parse(readFileSync("examples/plan/parent.json", "utf8"));
  writeFileSync(process.argv[1], JSON.stringify({ ...parent, tools: TOOL_DECLARATIONS }));
' "$work/parent.json")
export PARENT=$work/parent.json

fresh_repo shared
plan "$work/shared" "$work/shared-runs" none > shared-plan.json
start=$(date +%s.%N); forkcache run shared-plan.json --json > shared.json || true
echo "shared run: $(echo "$(date +%s.%N) - $start" | bc) s"
git -C shared add -A && shared_tree=$(git -C shared write-tree)

for round in $(seq 1 "$rounds"); do
  fresh_repo "repo$round"
  plan "$work/repo$round" "$work/runs$round" worktree > "plan$round.json"
  start=$(date +%s.%N); forkcache run "plan$round.json" --json > "run$round.json" || true
  ran=$(echo "$(date +%s.%N) - $start" | bc)
  dir=$(ls -d "$work/runs$round"/*/)
  forks=$(node -e 'console.log(require(process.argv[1]).directives.length)' "$work/plan$round.json")
  made=$(git -C "repo$round" worktree list --porcelain | grep -c '^worktree ' || true)
  failed=$(forkcache status "$dir" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log(r.forks.filter(f=>f.error&&/worktree|git/i.test(f.error.message)).length)})')
  disk_before=$(du -sm "$dir" | cut -f1)
  start=$(date +%s.%N); forkcache merge "$dir" > "merge$round.txt"; merged=$(echo "$(date +%s.%N) - $start" | bc)
  same=$([ "$(git -C "repo$round" rev-parse 'HEAD^{tree}')" = "$shared_tree" ] && echo yes || echo NO)
  start=$(date +%s.%N); forkcache clean "$dir" > "clean$round.txt"; cleaned=$(echo "$(date +%s.%N) - $start" | bc)
  left_trees=$(( $(git -C "repo$round" worktree list --porcelain | grep -c '^worktree ') - 1 ))
  left_branches=$(git -C "repo$round" branch --list 'forkcache/*' | wc -l)
  echo "round $round: $forks forks, $((made - 1)) worktrees made, $failed failed on git; run $ran s, merge $merged s, clean $cleaned s;" \
    "run dir ${disk_before} MB before clean, $(du -sm "$dir" | cut -f1) MB after; merged tree = shared tree: $same;" \
    "left: $left_trees worktrees, $left_branches branches"
done
