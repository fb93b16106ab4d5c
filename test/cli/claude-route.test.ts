import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { routeMismatch } from '../../src/cli/importers/claude-route.ts';
import { importClaudeTranscript } from '../../src/cli/importers/claude-transcript.ts';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { workspace } from '../core/engine/helpers.ts';
import { replayWire, sessionFixture } from './claude-fixture.ts';
import { forkcache } from './run-cli.ts';

/*
 * Claude Code 2.1.333 on writes `api-request-route` records (where the session's requests went:
 * `provider`, `credential`). The importer reads them instead of skipping them: the session's
 * cache is where its requests went, and `run` says when the forks go elsewhere.
 */
const FIXTURES = join(import.meta.dirname, '../fixtures/claude-code');
const { session: SESSION, wire } = sessionFixture(join(FIXTURES, '2.1.337/fork-fanout'));

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function copyWith(edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-cc-route-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'session.jsonl'), edit(readFileSync(SESSION, 'utf8')));
  return join(dir, 'session.jsonl');
}
const customEndpoint = '"provider":"customEndpoint"';

describe('api-request-route records', () => {
  it('are read from a 2.1.337 session, not skipped: the last one says where the requests went', () => {
    expect(readFileSync(SESSION, 'utf8').split(customEndpoint)).toHaveLength(5);
    const { route, notes, source } = importClaudeTranscript(SESSION);
    expect(source).toBe('wire');
    expect(route).toEqual({ provider: 'customEndpoint', credential: 'key', line: 37 });
    expect(notes.filter((n) => n.startsWith('skipped'))).toEqual([]);
    expect(notes).toContain(
      'the session sent its requests to customEndpoint (credential key, line 37): a host of its own (ANTHROPIC_BASE_URL, a gateway or a proxy); forks read its cache only when sent to the same base URL',
    );
    // a session written before 2.1.333 has none
    expect(importClaudeTranscript(join(FIXTURES, '2.1.332/fork-fanout/session.jsonl')).route).toBeUndefined();
  });

  it('a malformed one is bad input naming file, line and record type', () => {
    const path = copyWith((t) => t.replace(customEndpoint, '"provider":7'));
    expect(() => importClaudeTranscript(path)).toThrow(
      expect.objectContaining({
        code: 'TRANSCRIPT_INVALID',
        message: expect.stringMatching(/session\.jsonl:1: api-request-route record: provider: /),
      }),
    );
  });

  it('say when the forks go where the session’s cache is not', () => {
    const route = (provider: string) => ({ provider, credential: 'key', line: 1 });
    expect(routeMismatch(route('customEndpoint'), 'https://api.anthropic.com')).toMatch(
      /^the session went through a custom endpoint, and the forks go to https:\/\/api\.anthropic\.com: they will not read the cache/,
    );
    expect(routeMismatch(route('customEndpoint'), 'http://127.0.0.1:8787')).toBeUndefined();
    expect(routeMismatch(route('anthropic'), 'https://api.anthropic.com/')).toBeUndefined();
    expect(routeMismatch(route('anthropic'), 'http://127.0.0.1:8787')).toMatch(
      /^the session went to Anthropic's API, and the forks go to http:\/\/127\.0\.0\.1:8787/,
    );
    expect(routeMismatch(route('bedrock'), 'https://api.anthropic.com')).toBe(
      'the session went to bedrock, and the forks go to https://api.anthropic.com: they will write a cache of their own',
    );
    expect(routeMismatch(route('unrecorded'), 'https://api.anthropic.com')).toBeUndefined();
  });

  it('forkcache run warns when a session on Anthropic’s API is forked through another endpoint, and not when the endpoint is the session’s', async () => {
    const emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    try {
      await replayWire(
        emu.url,
        ['01.json', '02.json', '03.json', '04.json'].map((n) => wire(n).body),
      );
      const dir = mkdtempSync(join(tmpdir(), 'fc-cc-route-run-'));
      dirs.push(dir);
      writeFileSync(
        join(dir, 'plan.json'),
        JSON.stringify({
          directives: ['read notes.txt and report'],
          workspace: workspace({ 'notes.txt': 'one\n' }),
          runDir: join(dir, 'runs'),
        }),
      );
      const run = (session: string) =>
        forkcache(['run', join(dir, 'plan.json'), '--parent-from-claude-transcript', session, '--api', 'real'], {
          ANTHROPIC_BASE_URL: emu.url,
          ANTHROPIC_API_KEY: 'sk-ant-test',
        });
      const same = await run(SESSION);
      expect(same.code, same.stderr).toBe(0);
      expect(same.stderr).toContain('parent: the session sent its requests to customEndpoint');
      expect(same.stderr).not.toContain('the forks go to');
      const firstParty = await run(copyWith((t) => t.replaceAll(customEndpoint, '"provider":"anthropic"')));
      expect(firstParty.code, firstParty.stderr).toBe(0);
      expect(firstParty.stderr).toContain(
        `parent: the session went to Anthropic's API, and the forks go to ${emu.url}: they read its cache only if that endpoint forwards to the same organisation's API`,
      );
    } finally {
      await emu.close();
    }
  });
});
