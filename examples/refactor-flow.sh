#!/usr/bin/env bash
# The refactor flow of docs/plans.md and docs/review.md, end to end, on a temporary copy of
# examples/sample-repo: a plan from a glob, the dry run's estimate, the run (on the embedded
# emulator: no API key needed), then status, diff, merge and clean. Every step prints what it
# shows; any failure stops the script with a non-zero exit.
#
#   bash examples/refactor-flow.sh [WORK_DIR]
#
# WORK_DIR (created if missing, kept afterwards) holds the copy, the plan and the run; without
# it a temporary directory is used and removed at the end. FORKCACHE is the command to run
# (default: this checkout's sources through tsx; e.g. FORKCACHE="npx forkcache" for the package).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OLD=fetchData
NEW=loadData

if [[ $# -ge 1 ]]; then
  WORK=$1
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/forkcache-refactor-flow-XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
WORK=$(cd "$WORK" && pwd)
REPO=$WORK/repo
RUNS=$WORK/runs

forkcache() {
  if [[ -n ${FORKCACHE:-} ]]; then
    # shellcheck disable=SC2086 # FORKCACHE is a command line, split on purpose
    $FORKCACHE "$@"
  else
    (cd "$ROOT" && npx tsx src/cli/main.ts "$@")
  fi
}
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'refactor-flow: %s\n' "$*" >&2; exit 1; }

step "0. a repository to refactor: a copy of examples/sample-repo, committed ($REPO)"
rm -rf "$REPO" "$RUNS"
cp -R "$ROOT/examples/sample-repo" "$REPO"
git -C "$REPO" init -q -b main
git -C "$REPO" add -A
git -C "$REPO" -c user.name=example -c user.email=example@localhost commit -qm 'sample repository'
grep -rlw "$OLD" "$REPO/src" | sed "s|^$REPO/|  uses $OLD: |"

step "1. forkcache plan: one directive per file under src/ that uses $OLD, a check per fork"
# --isolation worktree: each fork in its own worktree and branch, reviewed and merged on its own
forkcache plan --workspace "$REPO" --files 'src/**/*.ts' --grep "\\b$OLD\\b" --isolation worktree \
  --directive "rename $OLD to $NEW in {file}" --check "! grep -qw $OLD {file}" --out "$WORK/plan.json"
# the run directory (default .forkcache/runs in the workspace) is set in the file, outside the copy
node -e '
  const fs = require("node:fs");
  const [file, runs] = process.argv.slice(1);
  const plan = JSON.parse(fs.readFileSync(file, "utf8"));
  Object.assign(plan, { runsDir: runs });
  fs.writeFileSync(file, JSON.stringify(plan, null, 2) + "\n");
  console.log(`  ${plan.directives.length} directive(s), e.g. ${JSON.stringify(plan.directives[0])}`);
  console.log(`  check: ${plan.check}; isolation: ${plan.isolation}; runsDir: ${plan.runsDir}`);
' "$WORK/plan.json" "$RUNS"

step "2. forkcache run --dry-run: the estimate (token counts only, nothing written)"
forkcache run "$WORK/plan.json" --dry-run --api emulator
[[ ! -e $RUNS ]] || fail "the dry run wrote $RUNS"

step "3. forkcache run: the forks, on the embedded emulator"
forkcache run "$WORK/plan.json" --api emulator

step "4. forkcache status: per fork its status, files, branch and commit"
forkcache status "$RUNS"

step "5. forkcache diff --stat, then one fork's diff"
forkcache diff "$RUNS" --stat
forkcache diff "$RUNS" f01

step "6. forkcache merge --dry-run, then merge: every completed fork, one commit on main"
forkcache merge "$RUNS" --dry-run
forkcache merge "$RUNS"
git -C "$REPO" log --oneline -2
if grep -rnw "$OLD" "$REPO/src"; then fail "$OLD is still used under src/ after the merge"; fi
echo "  $OLD left under src/: none"

step "7. forkcache clean: the run's worktrees and forkcache/* branches"
forkcache clean "$RUNS"
[[ $(git -C "$REPO" worktree list | wc -l) -eq 1 ]] || fail "worktrees left: $(git -C "$REPO" worktree list)"
[[ -z $(git -C "$REPO" branch --list 'forkcache/*') ]] || fail "forkcache/* branches left"
echo "  worktrees left: none; forkcache/* branches left: none"

step "done: $OLD renamed to $NEW in every file, merged into main, nothing left behind"
