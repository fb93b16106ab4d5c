import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SESSION = join(ROOT, 'test/fixtures/claude-code/2.1.332/fork-fanout/session.jsonl');

describe('forkcache demo --parent-from-claude-transcript', () => {
  it('fans the demo out over the imported parent and prints the cache-continuity line', () => {
    const res = spawnSync(
      process.execPath,
      [
        join(ROOT, 'bin/forkcache.js'),
        'demo',
        '--forks',
        '2',
        '--latency',
        'off',
        '--json',
        '--parent-from-claude-transcript',
        SESSION,
      ],
      { encoding: 'utf8', env: { ...process.env, ANTHROPIC_API_KEY: '' } },
    );
    const summary = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as {
      workspace: string;
      forks: { completed: number };
      usage: { cache_read_input_tokens: number };
    };
    rmSync(summary.workspace, { recursive: true, force: true });
    expect(res.status).toBe(0);
    expect(summary.forks.completed).toBe(2);
    expect(res.stderr).toContain('parent: rebuilt from the api-request record at line 28');
    // A fresh emulator: the first fork writes the session's prefix, the second reads all of it.
    expect(res.stderr).toMatch(
      /parent cache: the session should hold 12179 tokens of this prefix; every fork's first request read at least 0 \(0\.0%, 2 fork\(s\)\)/,
    );
    expect(summary.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(12_000);
  });
});
