import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache } from './run-cli.ts';

const ROOT = join(import.meta.dirname, '../..');
const DIR = join(ROOT, 'test/fixtures/claude-code/2.1.332/fork-fanout');
// the command in this process (run-cli.ts)
const cli = (...args: string[]) => forkcache(['inspect-transcript', ...args], { ANTHROPIC_API_KEY: '' });

describe('forkcache inspect-transcript', () => {
  it('prints the rebuilt parent of a real Claude Code session without running it', async () => {
    const res = await cli(join(DIR, 'session.jsonl'), '--json');
    expect(res.code).toBe(0);
    const shape = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(shape).toMatchObject({
      source: 'wire',
      model: 'claude-opus-5-5',
      system: { blocks: 2 },
      tools: { count: 12 },
      messages: { count: 4, roles: 'user,system,assistant,user', blocks: 9 },
      markers: ['system[0]', 'system[1]', 'messages[3].content[1]'],
      expected_cached_tokens: 12179,
    });
  });

  it('shows where a 2.1.337 session sent its requests (its api-request-route)', async () => {
    const session = join(ROOT, 'test/fixtures/claude-code/2.1.337/fork-fanout/session.jsonl');
    const json = await cli(session, '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ route: { provider: 'customEndpoint', credential: 'key' } });
    const text = await cli(session);
    expect(text.stdout).toContain('\nroute    customEndpoint (credential key)\n');
    expect(text.stdout).not.toContain('skipped');
    expect(JSON.parse((await cli(join(DIR, 'session.jsonl'), '--json')).stdout)).toMatchObject({ route: null });
  });

  it("refuses a fork child's transcript with exit 2, naming the parent session", async () => {
    const res = await cli(join(DIR, 'session/subagents/agent-a3df335d75f9e1451.jsonl'));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /this is a fork child of session 00000000-0000-4000-8000-000000000001; import the parent/,
    );
  });

  it('a malformed record: exit 2, naming file, line and record type', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-inspect-'));
    try {
      const path = join(dir, 'session.jsonl');
      const lines = readFileSync(join(DIR, 'session.jsonl'), 'utf8').split('\n');
      lines[13] = JSON.stringify({ ...(JSON.parse(lines[13]!) as object), shape: { system: 'not blocks', tools: [] } });
      writeFileSync(path, lines.join('\n'));
      const res = await cli(path);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`${path}:14: api-request-shape record: shape.system:`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
