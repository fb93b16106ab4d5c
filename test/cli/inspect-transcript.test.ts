import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const DIR = join(ROOT, 'test/fixtures/claude-code/2.1.332/fork-fanout');
const cli = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin/forkcache.js'), 'inspect-transcript', ...args], { encoding: 'utf8', env: { ...process.env, ANTHROPIC_API_KEY: '' } });

describe('forkcache inspect-transcript', () => {
  it('prints the rebuilt parent of a real Claude Code session without running it', () => {
    const res = cli(join(DIR, 'session.jsonl'), '--json');
    expect(res.status).toBe(0);
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

  it('refuses a fork child\'s transcript with exit 2, naming the parent session', () => {
    const res = cli(join(DIR, 'session/subagents/agent-a3df335d75f9e1451.jsonl'));
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/this is a fork child of session 00000000-0000-4000-8000-000000000001; import the parent/);
  });
});
