#!/usr/bin/env bash
# The refactor of issue 23 on a repository nobody here wrote, on the embedded emulator:
# the @anthropic-ai/sdk 1.14.0 sources from `npm pack` (389 .ts files under src/, one of them
# 326,861 bytes), `forkcache plan` one directive per file that uses an identifier, one more
# directive nothing can act on, then `forkcache run`. It prints the figures docs/plans.md
# reports: forks by status, time, cost, cache efficiency, occurrences left, and whether the
# TypeScript diagnostics are the same before and after (the sources' own dependencies are not
# installed, so both runs report the same missing modules; a broken rename would add errors).
#
#   bash scripts/refactor-real-repo.sh [WORK_DIR] [OLD_NAME] [NEW_NAME]
#
# Needs the npm registry once (npm pack). Exit status: 0 when the figures are as expected
# (every rename applied, the one impossible directive not done, the run exiting 1).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${1:-$(mktemp -d)}"
OLD="${2:-RequestOptions}"
NEW="${3:-CallOptions}"
forkcache() { "$ROOT/node_modules/.bin/tsx" "$ROOT/src/cli/main.ts" "$@"; }
tsc() { "$ROOT/node_modules/.bin/tsc" "$@"; }

mkdir -p "$WORK" && cd "$WORK"
rm -rf repo .forkcache plan.json run.json run.err tsconfig.json
npm pack --silent @anthropic-ai/sdk@1.14.0 >/dev/null
mkdir repo && tar xzf anthropic-ai-sdk-1.14.0.tgz -C repo --strip-components 1
git -C repo init -q && git -C repo add -A
git -C repo -c user.name=forkcache -c user.email=forkcache@localhost commit -qm 'npm pack @anthropic-ai/sdk@1.14.0'
cat > tsconfig.json <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "skipLibCheck": true, "target": "es2022", "module": "commonjs",
  "moduleResolution": "node", "lib": ["es2022", "dom"], "types": [] }, "include": ["repo/src/**/*.ts"] }
JSON
tsc -p tsconfig.json > tsc-before.txt || true

forkcache plan --workspace repo --files 'src/**/*.ts' --grep "\\b$OLD\\b" \
  --directive "rename $OLD to $NEW in {file}" --check "! grep -qw $OLD {file}" --out plan.json
# one directive the scripted model cannot act on: it must end not done, and the run exit 1
node -e '
  const fs = require("fs");
  const plan = JSON.parse(fs.readFileSync("plan.json", "utf8"));
  plan.directives.push({ directive: "rewrite src/core/streaming.ts in Rust", file: "src/core/streaming.ts" });
  fs.writeFileSync("plan.json", JSON.stringify(plan, null, 2));'

start=$(date +%s%N)
status=0
forkcache run plan.json --json > run.json 2> run.err || status=$?
seconds=$(( ($(date +%s%N) - start) / 1000000 ))
tail -n 4 run.err

tsc -p tsconfig.json > tsc-after.txt || true
left=$( (grep -rlw "$OLD" repo/src --include='*.ts' || true) | wc -l)
same=no
if diff -q <(sed "s/\\b$NEW\\b/$OLD/g" tsc-after.txt) tsc-before.txt >/dev/null; then same=yes; fi
node -e '
  const s = JSON.parse(require("fs").readFileSync("run.json", "utf8"));
  const [status, seconds, left, same] = process.argv.slice(1);
  const big = s.fork_results.find((f) => f.fields && f.fields.file === "src/resources/beta/messages/messages.ts");
  console.log(JSON.stringify({
    exit: Number(status), seconds: Number((Number(seconds) / 1000).toFixed(1)), forks: s.forks, turns: s.requests.turns,
    cost_usd: s.cost_usd.actual, cache_efficiency: s.cache.cache_efficiency, fanout_hit_ratio: s.cache.fanout_hit_ratio,
    files_still_using_old_name: Number(left), tsc_diagnostics_unchanged: same === "yes",
    big_file: big && { status: big.status, result: big.report && big.report.result },
    not_done: s.fork_results.filter((f) => f.status !== "completed").map((f) => `${f.id} ${f.status} ${f.fields ? f.fields.file : f.directive}`),
  }));
  const ok = Number(status) === 1 && s.forks.not_done === 1 && s.forks.completed === s.forks.total - 1 && Number(left) === 0 && same === "yes";
  process.exit(ok ? 0 : 1);' "$status" "$seconds" "$left" "$same"
