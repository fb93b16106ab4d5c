// Issue 43's done-when run, each tool-level attack by its real client's route, through the
// emulator's `hostile` scripted model (src/integrations/emulator/scripts/hostile.ts). A parent declares one
// client's tool set, so the run is two fan-outs of 20 forks in one engine and one process:
//   1. Qwen Code's tools: a denied host tool through `tool_call`, a host tool in denyTools
//      (direct and through `tool_call`), nested braces in glob and in grep_search's glob,
//      `read_many_files` of one 260 KB file named 300 times, an `edit` e -> 4000 e replace_all;
//      the other 13 forks benign.
//   2. Claude Code's tools: the 40-edit `MultiEdit` e -> ee replace_all, nested braces in Glob,
//      a denied host tool, a host tool in denyTools; the other 16 forks benign.
// Prints each fork's status and its attack's result code, whether every fan-out ended with its
// summary, how many benign forks completed, how many times a denied handler ran, and the peak
// RSS of this process (engine, worker threads and emulator: VmHWM), the run directory's size.
// `--json` prints one object.
// The MCP session swap and `push` force are not tool calls: test/integrations/mcp/fork-calls.test.ts,
// test/integrations/mcp/mcp-proxy.test.ts and test/cli/push.test.ts play them.
// `npx tsx scripts/hostile-fan-out.mts [--json]`
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForkEngine } from '../src/index.ts';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import { CLAUDE_ATTACKS, QWEN_ATTACKS } from '../src/integrations/emulator/scripts/hostile.ts';
import { captureSnapshot } from '../src/core/fork/snapshot.ts';
import { SUMMARY_FILE } from '../src/core/run-dir/files.ts';

const FORKS = 20;
const json = process.argv.includes('--json');

const schema = (...fields: string[]) => ({
  type: 'object',
  properties: Object.fromEntries(fields.map((f) => [f, { type: 'string' }])),
});
const declare = (name: string, ...fields: string[]) => ({ name, description: name, input_schema: schema(...fields) });
const HOST_TOOLS = [declare('post_comment', 'body'), declare('delete_ticket', 'id')];

/** Qwen Code's declared array (its edit tools and read_many_files are deferred: reached by tool_call). */
const QWEN_TOOLS = [
  declare('read_file', 'file_path'),
  declare('glob', 'pattern', 'path'),
  declare('grep_search', 'pattern', 'glob', 'path'),
  declare('list_directory', 'path'),
  declare('tool_search', 'query'),
  declare('tool_call', 'name', 'arguments'),
];
const CLAUDE_TOOLS = [
  declare('Read', 'file_path'),
  declare('Edit', 'file_path', 'old_string', 'new_string'),
  declare('MultiEdit', 'file_path', 'edits'),
  declare('Glob', 'pattern', 'path'),
  declare('Grep', 'pattern', 'glob', 'path'),
  declare('Bash', 'command'),
];

const parent = (tools: object[]) =>
  captureSnapshot({
    model: 'claude-sonnet-4-6',
    max_tokens: 4096,
    system: [{ type: 'text', text: 'You are a careful engineer. '.repeat(400) }],
    tools: [...tools, ...HOST_TOOLS],
    messages: [{ role: 'user', content: 'Work through the list.' }],
  });

const ws = mkdtempSync(join(tmpdir(), 'hostile-'));
const runDir = mkdtempSync(join(tmpdir(), 'hostile-runs-'));
writeFileSync(join(ws, 'grow.txt'), 'e'.repeat(1000));
writeFileSync(join(ws, '260k.txt'), `${'x'.repeat(99)}\n`.repeat(2_600));
const deniedCalls: string[] = [];
const emulator = await startEmulator({ latency: 'off', script: 'hostile' });
const engine = await ForkEngine.create({
  baseURL: emulator.url,
  apiKey: 'test',
  workspace: ws,
  runDir,
  allow: ['read_file', 'list_dir', 'grep', 'glob', 'edit_file', 'write_file', 'bash'],
  toolLimits: { bashTimeoutMs: 2_000 },
  permissions: { tools: { post_comment: 'deny' } },
  denyTools: ['delete_ticket'],
  hostTools: {
    post_comment: { execute: () => (deniedCalls.push('post_comment'), 'comment posted') },
    delete_ticket: { execute: () => (deniedCalls.push('delete_ticket'), 'deleted') },
  },
});

interface ForkLine {
  directive: string;
  status: string;
  /** The attack's tool call and its result code (`ok` when it ran and was bounded). */
  call: string;
}

async function fanOut(toolSet: 'qwen-code' | 'claude-code', tools: object[], attacks: readonly string[]) {
  const directives = [
    ...attacks.map((a) => `attack ${a}`),
    ...Array.from({ length: FORKS - attacks.length }, (_, i) => `benign ${i + 1}`),
  ];
  const fan = engine.fanOut(parent(tools), directives, { toolSet });
  const calls = new Map<string, string>();
  for await (const e of fan) if (e.type === 'tool-call') calls.set(e.forkId, `${e.name}: ${e.code ?? 'ok'}`);
  const { forks, summary } = await fan.settled();
  const lines: ForkLine[] = forks.map((f) => ({
    directive: f.directive,
    status: f.status,
    call: calls.get(f.forkId) ?? '',
  }));
  return { toolSet, forks: lines, requests: summary.requests };
}

function bytesUnder(dir: string): number {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
}

try {
  const fanOuts = [
    await fanOut('qwen-code', QWEN_TOOLS, Object.keys(QWEN_ATTACKS)),
    await fanOut('claude-code', CLAUDE_TOOLS, Object.keys(CLAUDE_ATTACKS)),
  ];
  const fanOutDirs = readdirSync(runDir);
  const benign = fanOuts.flatMap((f) => f.forks).filter((f) => f.directive.startsWith('benign'));
  const result = {
    fanOuts,
    summaries: fanOutDirs.filter((d) => existsSync(join(runDir, d, SUMMARY_FILE))).length,
    benignCompleted: benign.filter((f) => f.status === 'completed').length,
    benign: benign.length,
    deniedHandlerCalls: deniedCalls.length,
    // the transcripts and summaries: a 78 MB read_many_files result was once written here whole
    runDirKb: Math.round(bytesUnder(runDir) / 1024),
    // ru_maxrss: the process's high-water mark, as /proc/self/status VmHWM and `time -v` report it
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  if (json) console.log(JSON.stringify(result));
  else {
    for (const f of fanOuts) {
      console.log(`${f.toolSet}: ${f.forks.length} forks, ${f.requests} requests`);
      for (const fork of f.forks) console.log(`  ${fork.status.padEnd(10)} ${fork.directive.padEnd(50)} ${fork.call}`);
    }
    console.log(`fan-outs ended with their summary: ${result.summaries}/${fanOuts.length}`);
    console.log(`benign completed: ${result.benignCompleted}/${result.benign}`);
    console.log(`denied handlers called: ${result.deniedHandlerCalls}`);
    console.log(`run directory: ${result.runDirKb} KB`);
    console.log(`peak RSS: ${result.peakRssMb} MB`);
  }
} finally {
  await engine.close();
  await emulator.close();
  rmSync(ws, { recursive: true, force: true });
  rmSync(runDir, { recursive: true, force: true });
}
