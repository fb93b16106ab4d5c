import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { workspace } from '../core/engine/helpers.ts';
import { replayWire, sessionFixture } from './claude-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

/*
 * Issue 32: a fork of a real Claude Code 2.1.332 session works with Claude Code's own tools.
 * Before, every call of the session's `Read`/`Edit` came back "unknown tool" and nothing was
 * renamed; and a parent declaring a tool nothing runs started anyway.
 */
const DIR = join(import.meta.dirname, '../fixtures/claude-code/2.1.332/fork-fanout');
const { session: SESSION, wire } = sessionFixture(DIR);
const FILES = 20;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-client-tools-'));
  dirs.push(dir);
  return dir;
}

describe('a fork of a recorded Claude Code session runs Claude Code tools', () => {
  it(`renames in ${FILES} files with Read, Edit and Bash, every first request reading >= 99% of the cached prefix`, async () => {
    const emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    const dir = tempDir();
    try {
      await replayWire(
        emu.url,
        ['01.json', '02.json', '03.json', '04.json'].map((n) => wire(n).body),
      );
      const files = Object.fromEntries(
        Array.from({ length: FILES }, (_, i) => [
          `src/f${String(i + 1).padStart(2, '0')}.ts`,
          `export function fetchData() {\n  return ${i};\n}\nexport const again = fetchData();\n`,
        ]),
      );
      const ws = workspace(files);
      writeFileSync(
        join(dir, 'plan.json'),
        JSON.stringify({
          directives: Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
          workspace: ws,
          runDir: join(dir, 'runs'),
          allow: ['read_file', 'edit_file', 'bash'],
          limits: { maxThreads: 2 },
        }),
      );
      const { code, stdout, stderr } = await forkcache(
        ['run', join(dir, 'plan.json'), '--parent-from-claude-transcript', SESSION, '--api', 'real', '--json'],
        { ANTHROPIC_BASE_URL: emu.url, ANTHROPIC_API_KEY: 'sk-ant-test' },
      );
      expect(code, stderr).toBe(0);
      const summary = lastJson(stdout) as {
        forks: { completed: number };
        parent_cache: { share: number; forks: number };
      };
      expect(summary.forks.completed).toBe(FILES);
      expect(summary.parent_cache.forks).toBe(FILES);
      expect(summary.parent_cache.share).toBeGreaterThanOrEqual(0.99);
      for (const file of Object.keys(files)) {
        const text = readFileSync(join(ws, file), 'utf8');
        expect(text, file).not.toMatch(/\bfetchData\b/);
        expect(text.match(/\bloadData\b/g), file).toHaveLength(2);
      }
      const records = collect(join(dir, 'runs'));
      const calls = records.filter((r) => r.includes('"type":"tool-start"'));
      expect(calls.filter((r) => r.includes('"name":"Read"'))).toHaveLength(FILES);
      expect(calls.filter((r) => r.includes('"name":"Edit"'))).toHaveLength(FILES);
      expect(calls.filter((r) => r.includes('"name":"Bash"'))).toHaveLength(FILES);
      expect(records.join('\n')).not.toContain('unknown tool');
      expect(records.filter((r) => r.includes('"isError":true'))).toEqual([]);
    } finally {
      await emu.close();
    }
  });

  it('refuses a parent declaring a tool nothing runs before the first request, naming it (exit 2)', async () => {
    const emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    const dir = tempDir();
    try {
      // the session, with one tool of an embedder's own added to its array
      const text = readFileSync(SESSION, 'utf8').replace(
        /("type":"api-request-shape".*?"tools":\[)/s,
        '$1{"name":"search_tickets","description":"Search tickets.","input_schema":{"type":"object","properties":{}}},',
      );
      expect(text).toContain('search_tickets');
      writeFileSync(join(dir, 'session.jsonl'), text);
      writeFileSync(
        join(dir, 'plan.json'),
        JSON.stringify({
          directives: ['read notes.txt and report'],
          workspace: workspace(),
          runDir: join(dir, 'runs'),
        }),
      );
      const run = (plan: string) =>
        forkcache(['run', plan, '--parent-from-claude-transcript', join(dir, 'session.jsonl'), '--api', 'real'], {
          ANTHROPIC_BASE_URL: emu.url,
          ANTHROPIC_API_KEY: 'sk-ant-test',
        });
      const sent = (): number => emu.stats().requests.messages + emu.stats().requests.countTokens;
      const before = sent();
      const refused = await run(join(dir, 'plan.json'));
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(
        'the parent declares search_tickets, which no executor runs: pass a handler, or deny it',
      );
      expect(sent()).toBe(before);
      // denied on purpose, the same parent runs
      writeFileSync(
        join(dir, 'denied.json'),
        JSON.stringify({
          directives: ['read notes.txt and report'],
          workspace: workspace({ 'notes.txt': 'one\n' }),
          runDir: join(dir, 'runs'),
          denyTools: ['search_tickets'],
        }),
      );
      const denied = await run(join(dir, 'denied.json'));
      expect(denied.code, denied.stderr).toBe(0);
    } finally {
      await emu.close();
    }
  });
});

/** The raw lines of every fork transcript under a runs directory. */
function collect(runDir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.jsonl') && d.endsWith('forks'))
        out.push(...readFileSync(p, 'utf8').trim().split('\n'));
    }
  };
  walk(runDir);
  return out;
}
