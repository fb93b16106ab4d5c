import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { McpProxy } from '../../src/integrations/mcp/start.ts';
import { writeProxyReport } from '../../src/integrations/proxy/report/report.ts';
import type { ExchangeRecord } from '../../src/integrations/proxy/diagnosis/types.ts';

/** Where scripts/clients/setup.sh installs the real clients (outside the clone). */
export const clientsDir =
  process.env['FORKCACHE_CLIENTS_CACHE'] ??
  join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'forkcache/clients');

function availability(paths: string | string[], what: string): { ok: boolean; why: string } {
  const missing = [paths].flat().find((path) => !existsSync(path));
  if (missing === undefined) return { ok: true, why: `on the real ${what}` };
  const failed = join(clientsDir, 'setup-failed.txt');
  const reason = existsSync(failed) ? readFileSync(failed, 'utf8').trim() : `${missing} is not installed`;
  return { ok: false, why: `SKIPPED: ${reason} (bash scripts/clients/setup.sh installs it)` };
}

/** One Claude Code build of scripts/clients/claude-code.json, as scripts/clients/setup.sh installs it. */
export interface ClaudeCodeBuild {
  version: string;
  agentSdkVersion: string;
  /** `claude-code/<version>/claude`: the native binary. */
  bin: string;
  /** `claude-code/<version>/agent-sdk`: the Agent SDK of the same build. */
  agentSdkDir: string;
  claudeCode: { ok: boolean; why: string };
  agentSdk: { ok: boolean; why: string };
}
const pins = JSON.parse(readFileSync(join(import.meta.dirname, '../../scripts/clients/claude-code.json'), 'utf8')) as {
  versions: { claudeCode: string; agentSdk: string }[];
};
/** Every pinned build, newest first: the real-client tests run on each (`describe.each`). */
export const claudeCodeBuilds: ClaudeCodeBuild[] = pins.versions.map(({ claudeCode, agentSdk }) => {
  const links = join(clientsDir, 'claude-code', claudeCode);
  return {
    version: claudeCode,
    agentSdkVersion: agentSdk,
    bin: join(links, 'claude'),
    agentSdkDir: join(links, 'agent-sdk'),
    claudeCode: availability(join(links, 'claude'), `Claude Code ${claudeCode}`),
    agentSdk: availability(join(links, 'agent-sdk'), `Claude Agent SDK ${agentSdk}`),
  };
});
/** The newest build (the examples run on it). */
const newest = claudeCodeBuilds[0]!;
export const claudeBin = newest.bin;
export const agentSdkDir = newest.agentSdkDir;
export const claudeCode = newest.claudeCode;
export const agentSdk = newest.agentSdk;

/** A project directory and a private HOME / config dir for one client run (no login, no shared state). */
export function clientHome(): { project: string; env: Record<string, string> } {
  const root = mkdtempSync(join(tmpdir(), 'forkcache-client-'));
  const project = join(root, 'project');
  const home = join(root, 'home');
  mkdirSync(project);
  mkdirSync(join(home, '.claude'), { recursive: true });
  writeFileSync(join(project, 'notes.txt'), 'line one\nline two\n');
  return {
    project,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
      ANTHROPIC_API_KEY: 'sk-ant-emulator-fake-key',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
  };
}

/** Run a client to its end; its output and exit code (bounded: a hung client is killed). */
export function runClient(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 600_000,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

const isTurn = (r: ExchangeRecord): boolean => /^\/v1\/messages(\?|$)/.test(r.path);

/**
 * What the cache figures of a fan-out through the MCP tool come to: the client's turn that called
 * the tool (the last main-thread turn before the first fork), what it had cached, and each fork's
 * first request.
 */
export function forkFigures(records: readonly ExchangeRecord[]) {
  const turns = records.filter(isTurn);
  const firstFork = turns.findIndex((r) => r.kind === 'fork');
  const caller = turns
    .slice(0, firstFork)
    .filter((r) => r.kind === 'main')
    .at(-1)!;
  const cached = caller.usage!.cache_creation_input_tokens + caller.usage!.cache_read_input_tokens;
  const firsts = new Map<string, ExchangeRecord>();
  // A fork's first answered request: on a loaded machine an attempt can be refused (e.g. a 529 at
  // the emulator's in-flight body bound) and sent again; the refused one has no usage. (Seen once
  // here beside other load, both builds alike; its status was not kept.)
  for (const r of turns) if (r.kind === 'fork' && r.label && r.usage && !firsts.has(r.label)) firsts.set(r.label, r);
  const ratios = [...firsts.values()].map((r) => r.usage!.cache_read_input_tokens / cached);
  return { caller, cached, forks: [...firsts.values()], minRatio: Math.min(...ratios) };
}

/**
 * What every MCP client's fan-out must show on the proxy: the calling turn cached a real prefix,
 * each of the `count` forks' first requests read ≥ 99% of it, and the proxy's summary holds them
 * in one fan-out. With `report`, the HTML report is written there and returned. `label` names
 * the figure docs/mcp.md quotes.
 */
export function expectOneFanOut(
  proxy: McpProxy['proxy'],
  count: number,
  label: string,
  report?: string,
): ReturnType<typeof forkFigures> & { html: string | undefined } {
  const records = proxy.ledger.records();
  const figures = forkFigures(records);
  expect(figures.cached).toBeGreaterThan(5000);
  expect(figures.forks).toHaveLength(count);
  expect(figures.minRatio).toBeGreaterThanOrEqual(0.99);
  console.info(
    `${label}: the calling turn cached ${figures.cached} tokens; the least a fork's first request read: ${(figures.minRatio * 100).toFixed(1)}%`,
  );
  // the proxy's tree: the client's turns, then one fan-out of every fork
  const summary = proxy.summary();
  const fanout = summary.fanouts.find((f) => f.requests >= count);
  expect(fanout, JSON.stringify(summary.fanouts)).toBeDefined();
  expect(figures.forks.every((f) => f.fanout === fanout!.id)).toBe(true);
  if (report === undefined) return { ...figures, html: undefined };
  writeProxyReport(report, summary, records);
  return { ...figures, html: readFileSync(report, 'utf8') };
}

/** The Node 22 release scripts/node/versions.sh pins (what scripts/clients/setup.sh installs in `node22/`). */
export const pinnedNode22 = /"(22\.\d+\.\d+)"/.exec(readFileSync('scripts/node/versions.sh', 'utf8'))?.[1];

/** Node 22 and the packages that need it, in a project of their own (`node22/` of the folder). */
export const node22Bin = join(clientsDir, 'node22-bin');
export const node22Modules = join(clientsDir, 'node22/node_modules');
export const aiSdk7 = availability(
  existsSync(node22Bin) ? join(node22Modules, 'ai/package.json') : node22Bin,
  'ai 7 on Node 22',
);
/** Qwen Code declares `engines: node >= 22`: its entry, run on that Node. */
export const qwenEntry = join(node22Modules, '@qwen-code/qwen-code/cli-entry.js');
export const qwenCode = availability([node22Bin, qwenEntry], 'Qwen Code 0.24.4 on Node 22');
