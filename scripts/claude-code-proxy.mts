// `npx tsx scripts/claude-code-proxy.mts CLAUDE_BIN [--model ID] [--warm-first] [--strip-billing-block] [--report FILE]`: run Claude Code
// (e.g. node_modules/@anthropic-ai/claude-code-linux-x64/claude from `npm i
// @anthropic-ai/claude-code@2.1.332` in a scratch directory) through `forkcache proxy` against the
// emulator, on a scripted fork fan-out, and compare the proxy's per-request read/write with what
// the emulator billed. Offline: a fake key, its own HOME and config directory.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../src/integrations/emulator/start.ts';
import type { EmulatorEvent } from '../src/integrations/emulator/server/core.ts';
import type { ScriptedModel } from '../src/integrations/emulator/scripts/types.ts';
import type { RequestBlock } from '../src/integrations/emulator/types.ts';
import { startProxy } from '../src/integrations/proxy/server.ts';
import { writeProxyReport } from '../src/integrations/proxy/report/report.ts';

const [bin, ...rest] = process.argv.slice(2);
if (!bin)
  throw new Error(
    'usage: claude-code-proxy.mts CLAUDE_BIN [--model ID] [--warm-first] [--strip-billing-block] [--report FILE]',
  );
const reportAt = rest.indexOf('--report');
const modelAt = rest.indexOf('--model');
const model = modelAt >= 0 ? rest[modelAt + 1]! : 'claude-opus-5-5';
const FORKS = 3;

const blocks = (content: unknown): RequestBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : (content as RequestBlock[]);

/** Claude Code's parent asks for forks, each fork reports, the parent sums up. */
const forkingModel: ScriptedModel = {
  name: 'cc-fork',
  respond({ request }) {
    const last = request.messages[request.messages.length - 1];
    const lastBlocks = last ? blocks(last.content) : [];
    if (lastBlocks.some((b) => b.type === 'text' && String(b['text']).includes('<fork-boilerplate>'))) {
      return {
        content: [
          { type: 'text', text: 'Scope: one part\nResult: done\nKey files: none\nFiles changed: none\nIssues: none' },
        ],
      };
    }
    const agent = request.tools?.some((t) => t.name === 'Agent');
    const answered = request.messages.some(
      (m) => m.role === 'assistant' && blocks(m.content).some((b) => b.type === 'tool_use'),
    );
    if (agent && !answered) {
      return {
        content: Array.from({ length: FORKS }, (_, i) => ({
          type: 'tool_use' as const,
          name: 'Agent',
          input: {
            description: `part ${i + 1}`,
            prompt: `Survey part ${i + 1} of ${FORKS} of the repository and report.`,
            subagent_type: 'fork',
          },
        })),
      };
    }
    return { content: [{ type: 'text', text: 'All forks reported.' }] };
  },
};

const emulator = await startEmulator({ latency: 'fast', scripts: { 'cc-fork': forkingModel }, script: 'cc-fork' });
const billed = new Map<string, EmulatorEvent['usage']>();
emulator.on('request-start', (e) => billed.set(e.messageId!, e.usage));
let refused = 0;
emulator.on('request-end', (e) => e.error !== undefined && refused++);
const proxy = await startProxy({
  upstream: emulator.url,
  warmFirst: rest.includes('--warm-first'),
  stripBillingBlock: rest.includes('--strip-billing-block'),
});
const home = mkdtempSync(join(tmpdir(), 'cc-home-'));
try {
  const child = spawn(
    bin,
    [
      '-p',
      `Fork ${FORKS} subagents (Agent tool, subagent_type "fork") to survey this repository, then summarise.`,
      '--model',
      model,
      '--allowedTools',
      'Agent',
    ],
    {
      cwd: home,
      env: {
        ...process.env,
        HOME: home,
        CLAUDE_CONFIG_DIR: join(home, '.claude'),
        ANTHROPIC_BASE_URL: proxy.url,
        ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-the-emulator',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_ERROR_REPORTING: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  process.stdout.write(`claude exited ${code}\n${out.slice(-2000)}\n`);
  await proxy.close();
  const records = proxy.ledger.records();
  let equal = 0;
  for (const r of records) {
    const b = r.messageId ? billed.get(r.messageId) : undefined;
    const same =
      b !== undefined &&
      r.usage !== undefined &&
      b.cache_read_input_tokens === r.usage.cache_read_input_tokens &&
      b.cache_creation_input_tokens === r.usage.cache_creation_input_tokens &&
      b.input_tokens === r.usage.input_tokens;
    if (same) equal++;
    process.stdout.write(
      `#${r.seq} ${r.status} ${r.path} ${r.kind ?? ''} ${r.fanout ?? ''} proxy read/write ${r.usage?.cache_read_input_tokens ?? '-'}/${r.usage?.cache_creation_input_tokens ?? '-'} emulator ${b?.cache_read_input_tokens ?? '-'}/${b?.cache_creation_input_tokens ?? '-'} ${same ? 'equal' : ''} ${r.error ?? r.diagnosis?.reason ?? ''}\n`,
    );
  }
  const summary = proxy.summary();
  process.stdout.write(
    `saved by the proxy ${JSON.stringify(summary.saved_by_proxy_usd)}\n${equal} of ${records.filter((r) => r.usage).length} requests with usage equal; ${refused} refused by the emulator; fan-outs ${JSON.stringify(summary.fanouts.map((f) => ({ id: f.id, members: f.members.map((m) => [m.seq, m.kind, Number(m.hit_ratio.toFixed(3))]) })))}\n`,
  );
  if (reportAt >= 0) writeProxyReport(rest[reportAt + 1]!, summary, records);
} finally {
  await emulator.close();
  rmSync(home, { recursive: true, force: true });
}
