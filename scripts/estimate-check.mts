// The dry run's acceptance check (issue 23: the estimate within 0.5×–2× of what the run costs):
// on a real repository, one fork per file that uses an identifier, `forkcache run --dry-run`
// then the real run on the embedded emulator (the `refactor` scripted model), and the ratio.
//
//   npm pack @anthropic-ai/sdk@1.14.0 && tar xzf anthropic-ai-sdk-1.14.0.tgz
//   (cd package && git init -q && git add -A && git commit -qm base)
//   npx tsx scripts/estimate-check.mts package buildHeaders mergeHeaders [src]
//
// Writes plan.json and parent.json beside the workspace, prints both figures and their ratio as
// one JSON line. The run edits the workspace (that is the refactor): check it out again to rerun.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOL_DECLARATIONS } from '../src/core/tools/declarations.ts';

const [workspaceArg, from, to, under = 'src'] = process.argv.slice(2);
if (!workspaceArg || !from || !to) {
  process.stderr.write('usage: estimate-check.mts WORKSPACE OLD NEW [DIR]\n');
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const workspace = resolve(workspaceArg);
const grep = execFileSync('git', ['grep', '-lw', from, '--', `${under}/*.ts`], { cwd: workspace, encoding: 'utf8' });
const files = grep.trim().split('\n').filter(Boolean).sort();
const directives = files.map((f) => `rename ${from} to ${to} in ${f}`);
const example = JSON.parse(readFileSync(join(root, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>;
// The parent as it stands when it fans out: the task, its grep, and one agent call per file.
const parent = {
  model: example['model'],
  max_tokens: example['max_tokens'],
  stream: true,
  system: example['system'],
  tools: TOOL_DECLARATIONS,
  messages: [
    { role: 'user', content: `Rename ${from} to ${to} across ${under}/ of this repository.` },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Finding every file that uses it.' },
        { type: 'tool_use', id: 'toolu_grep', name: 'grep', input: { pattern: `\\b${from}\\b`, path: under } },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_grep', content: files.join('\n') }],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: `${files.length} files; one fork per file.` },
        ...directives.map((directive, i) => ({
          type: 'tool_use',
          id: `toolu_f${i}`,
          name: 'agent',
          input: { directive },
        })),
      ],
    },
  ],
};
const dir = mkdtempSync(join(tmpdir(), 'fc-estimate-check-'));
writeFileSync(join(dir, 'parent.json'), JSON.stringify(parent));
const plan = {
  parent: 'parent.json',
  directives,
  workspace,
  runsDir: join(dir, 'runs'),
  allow: ['read_file', 'edit_file', 'write_file', 'grep', 'glob', 'list_dir'],
  limits: { maxTurns: 30, concurrency: 16 },
  emulator: { script: 'refactor', latency: 'fast' },
};
const planPath = join(dir, 'plan.json');
writeFileSync(planPath, JSON.stringify(plan, null, 2));

const forkcache = (args: string[]): Record<string, any> => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, ANTHROPIC_API_KEY: '' },
    maxBuffer: 256 * 1024 * 1024,
  });
  const last = run.stdout.trim().split('\n').at(-1);
  if (!last)
    throw new Error(`forkcache ${args.join(' ')} printed nothing (exit ${run.status}): ${run.stderr.slice(-2000)}`);
  return JSON.parse(last) as Record<string, any>;
};
const dry = forkcache(['run', planPath, '--dry-run', '--json', '--api', 'emulator']);
const real = forkcache(['run', planPath, '--json', '--api', 'emulator']);
const estimate = dry['estimate']['cost']['usd'] as number;
const actual = real['cost_usd']['actual'] as number;
const statuses: Record<string, number> = {};
for (const f of real['fork_results'] as { status: string }[]) statuses[f.status] = (statuses[f.status] ?? 0) + 1;
process.stdout.write(
  `${JSON.stringify({
    forks: directives.length,
    estimate_usd: estimate,
    actual_usd: actual,
    ratio: Number((estimate / actual).toFixed(3)),
    estimate_requests: dry['estimate']['requests'],
    actual_requests: real['requests']['turns'],
    estimate_tokens: dry['estimate']['tokens'],
    actual_usage: real['usage'],
    statuses,
    plan: planPath,
  })}\n`,
);
