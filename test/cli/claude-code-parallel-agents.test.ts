import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importClaudeTranscript } from '../../src/cli/importers/claude-transcript.ts';
import { rebuildWireRequest } from '../../src/cli/importers/claude-wire.ts';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { workspace } from '../core/engine/helpers.ts';
import { replayWire, sessionFixture, upToLastMarker } from './claude-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

/*
 * A real Claude Code 2.1.332 session (scripts/record-claude-session.sh, scrubbed by
 * scripts/session-to-fixture.ts) whose turn made two parallel Agent calls, on a model without
 * mid-conversation system turns (claude-haiku-4-5): Claude Code then writes the user turn of
 * both tool results as a blob, and the assistant turn without one. The last `api-request` has
 * `keep: 1` and two `tail` hashes, blob-less (the assistant turn) then blobbed (the results).
 * Before: the importer filled the blob-less hash with the last conversation record, a user
 * record, and the import failed with `messages[1].role: roles must alternate`.
 */
const DIR = join(import.meta.dirname, '../fixtures/claude-code/2.1.332/fork-fanout-haiku-4-5');
const { session: SESSION, wire, lines } = sessionFixture(DIR);
const LAST = wire('04.json');

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('a Claude Code session whose turn made two parallel Agent calls', () => {
  it('the last api-request is the one the issue names: keep 1, a blob-less hash, then a blobbed user turn', () => {
    const requests = lines.map((l) => l.value as Record<string, unknown>).filter((r) => r['type'] === 'api-request');
    const last = requests.at(-1)!;
    const blobs = new Set(
      lines
        .map((l) => l.value as Record<string, unknown>)
        .filter((r) => r['type'] === 'api-request-blob')
        .map((r) => r['hash']),
    );
    expect(last['keep']).toBe(1);
    expect((last['tail'] as string[]).map((h) => blobs.has(h))).toEqual([false, true]);
  });

  it('rebuilds the last wire request byte for byte up to its last marker, roles alternating', () => {
    const rebuilt = rebuildWireRequest(SESSION, lines)!;
    const system = (LAST.body['system'] as { text: string }[]).filter(
      (b) => !b.text.startsWith('x-anthropic-billing-header:'),
    );
    expect(upToLastMarker(rebuilt.request)).toBe(upToLastMarker({ ...LAST.body, system }));
    const messages = rebuilt.request['messages'] as { role: string; content: { type: string; name?: string }[] }[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1]!.content.filter((b) => b.type === 'tool_use').map((b) => b.name)).toEqual(['Agent', 'Agent']);
    expect(messages[2]!.content.map((b) => b.type)).toEqual(['tool_result', 'tool_result']);
  });

  it('imports as a parent: forkcache run --parent-from-claude-transcript reads >= 90% of the cached prefix', async () => {
    const emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    const dir = mkdtempSync(join(tmpdir(), 'fc-cc-parallel-'));
    dirs.push(dir);
    try {
      await replayWire(
        emu.url,
        ['01.json', '02.json', '03.json', '04.json'].map((n) => wire(n).body),
      );
      const { snapshot, expectedCachedTokens } = importClaudeTranscript(SESSION);
      expect(snapshot.model).toBe('claude-haiku-4-5');
      writeFileSync(
        join(dir, 'plan.json'),
        JSON.stringify({
          directives: ['read notes.txt', 'count the lines of notes.txt', 'say hi'],
          workspace: workspace({ 'notes.txt': 'line one\nline two\n' }),
          runDir: join(dir, 'runs'),
        }),
      );
      const { code, stdout, stderr } = await forkcache(
        ['run', join(dir, 'plan.json'), '--parent-from-claude-transcript', SESSION, '--api', 'real', '--json'],
        { ANTHROPIC_BASE_URL: emu.url, ANTHROPIC_API_KEY: 'sk-ant-test' },
      );
      expect(code, stderr).toBe(0);
      const summary = lastJson(stdout) as {
        forks: { completed: number };
        parent_cache: { expected_tokens: number; min_first_read: number; share: number; forks: number };
      };
      expect(summary.forks.completed).toBe(3);
      expect(summary.parent_cache.expected_tokens).toBe(expectedCachedTokens);
      expect(summary.parent_cache.forks).toBe(3);
      expect(summary.parent_cache.share).toBeGreaterThanOrEqual(0.9);
      expect(stderr).toMatch(
        /parent cache: the session should hold \d+ tokens of this prefix; every fork's first request read at least \d+ \((9\d|100)\.\d%, 3 fork\(s\)\)/,
      );
    } finally {
      await emu.close();
    }
  }); // a real `forkcache run` process: a backstop for a loaded machine
});
