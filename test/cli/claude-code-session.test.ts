import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importClaudeTranscript } from '../../src/cli/importers/claude-transcript.ts';
import { rebuildWireRequest } from '../../src/cli/importers/claude-wire.ts';
import { CacheContinuity } from '../../src/cli/importers/cache-continuity.ts';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../src/core/engine/engine.ts';
import { workspace } from '../core/engine/helpers.ts';
import { replayWire, sessionFixture, upToLastMarker } from './claude-fixture.ts';

/*
 * Real Claude Code sessions (fork fan-out through its Agent tool, then the tool results) run on
 * the emulator and scrubbed by scripts/session-to-fixture.ts: their transcript and the four wire
 * requests the emulator logged (parent, two fork children, parent again), one per build the
 * real-client tests run (scripts/clients/claude-code.json).
 */
const fixtureDir = (version: string) => join(import.meta.dirname, `../fixtures/claude-code/${version}/fork-fanout`);
const DIR = fixtureDir('2.1.332');
const { session: SESSION } = sessionFixture(DIR);
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l, i) => ({ line: i + 1, value: JSON.parse(l) as unknown }));
const withoutBilling = (system: { text: string }[]) =>
  system.filter((b) => !b.text.startsWith('x-anthropic-billing-header:'));

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function copyWith(edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-cc-session-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'session.jsonl'), edit(readFileSync(SESSION, 'utf8')));
  return join(dir, 'session.jsonl');
}

describe.each(['2.1.332', '2.1.337'])('a Claude Code %s session as the parent', (version) => {
  const { session: SESSION, wire } = sessionFixture(fixtureDir(version));
  const LAST = wire('04.json');

  it('rebuilds the last wire request byte for byte up to its last marker (billing block removed)', () => {
    const rebuilt = rebuildWireRequest(SESSION, lines(SESSION))!;
    const sent: Record<string, unknown> = {
      ...LAST.body,
      system: withoutBilling(LAST.body['system'] as { text: string }[]),
    };
    expect(upToLastMarker(rebuilt.request)).toBe(upToLastMarker(sent));
    expect(upToLastMarker(sent).length).toBeGreaterThan(50_000);
    for (const key of ['thinking', 'output_config', 'context_management', 'model'])
      expect(rebuilt.request[key]).toEqual(sent[key]);
  });

  it("imports it as a snapshot with the session's system, tools and messages, and expects the cache the session wrote", () => {
    const { snapshot, source, expectedCachedTokens, notes } = importClaudeTranscript(SESSION);
    expect(source).toBe('wire');
    expect(JSON.stringify(snapshot.messages)).toBe(JSON.stringify(LAST.body['messages']));
    expect(JSON.stringify(snapshot.tools)).toBe(JSON.stringify(LAST.body['tools']));
    // The session's last request cached its prefix up to the last marker: the importer expects exactly that.
    expect(expectedCachedTokens).toBe(LAST.cache.markers.at(-1)!.tokens);
    // what the session's requests carried that changes what the model reads goes to every fork, as it was
    expect(JSON.stringify(snapshot.context_management)).toBe(JSON.stringify(LAST.body['context_management']));
    expect(notes.filter((n) => n.includes('context_management'))).toEqual([]);
    // every record of the session is one the importer knows
    expect(notes.filter((n) => n.startsWith('skipped'))).toEqual([]);
  });

  it('forks on an emulator that served the session read >= 90% of its cached prefix in every first request', async () => {
    const emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    try {
      // Serve the session again: the four requests it sent, as it sent them. The last one's
      // usage is what this emulator cached of the (scrubbed) prefix.
      const text = await replayWire(
        emu.url,
        ['01.json', '02.json', '03.json', '04.json'].map((n) => wire(n).body),
      );
      const usage = (k: string) => Number(new RegExp(`"${k}":(\\d+)`).exec(text)![1]);
      const served = usage('cache_read_input_tokens') + usage('cache_creation_input_tokens');
      const { snapshot, expectedCachedTokens } = importClaudeTranscript(SESSION);
      const engine = await ForkEngine.create({
        baseURL: emu.url,
        apiKey: 'sk-ant-test',
        workspace: workspace(),
        pool: { maxThreads: 2 },
      });
      const continuity = new CacheContinuity(expectedCachedTokens);
      try {
        const fan = engine.fanOut(snapshot, ['read notes.txt', 'count the lines of notes.txt', 'say hi']);
        for await (const event of fan) continuity.onEvent(event as Parameters<CacheContinuity['onEvent']>[0]);
        const { forks } = await fan.settled();
        expect(forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed']);
      } finally {
        await engine.close();
      }
      const { share, forks, minRead } = continuity.result();
      expect(forks).toBe(3);
      // Every fork's first request read all of it. (The importer's figure comes from the live
      // session's usage, before local paths were scrubbed out of the fixture: a few tokens more,
      // within 1% as in test/integrations/emulator/real-clients.test.ts; 2.1.337 names its memory folder, a
      // path, nine times.)
      expect(minRead).toBe(served);
      expect(Math.abs(served - expectedCachedTokens!)).toBeLessThanOrEqual(
        Math.max(20, Math.ceil(expectedCachedTokens! * 0.01)),
      );
      expect(share).toBeGreaterThanOrEqual(0.9);
    } finally {
      await emu.close();
    }
  });
});

describe('a Claude Code 2.1.332 session: records and errors', () => {
  it('skips and counts record types it does not know; tools-used is not read as tool definitions', () => {
    const path = copyWith((t) => `${t}{"type":"brand-new-record","tools":["Read"]}\n{"type":"brand-new-record"}\n`);
    expect(readFileSync(SESSION, 'utf8')).toContain('"type":"tools-used","tools":["Agent"');
    const { notes, source } = importClaudeTranscript(path);
    expect(source).toBe('wire');
    expect(notes[0]).toBe('skipped 2 record(s) of type(s) not known here: brand-new-record (2)');
  });

  it('a side query logged after the main thread (another querySource) is not taken for the parent', () => {
    const side = {
      type: 'api-request',
      id: 'side-1',
      querySource: 'generate_session_title',
      shapeHash: 'side-shape',
      params: { model: 'claude-haiku-5-5' },
      keep: 0,
      tail: ['side-blob'],
      cacheControl: [],
    };
    const extra = [
      {
        type: 'api-request-shape',
        shapeHash: 'side-shape',
        shape: { system: [{ type: 'text', text: 'Title this.' }], tools: [] },
      },
      { type: 'api-request-blob', hash: 'side-blob', message: { role: 'user', content: 'hi' } },
      side,
    ];
    const path = copyWith((t) => t + extra.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const { snapshot, notes } = importClaudeTranscript(path);
    expect(snapshot.model).toBe('claude-opus-5-5');
    expect(notes).toContain('rebuilt from the api-request record at line 28 (4 messages, 3 markers, 12 tools)');
  });

  it('a malformed api-request record names file, line and record type', () => {
    const path = copyWith((t) => t.replace(/("type":"api-request".*?)"tail":\[[^\]]*\]/s, '$1"tail":7'));
    expect(() => importClaudeTranscript(path)).toThrow(
      expect.objectContaining({
        code: 'TRANSCRIPT_INVALID',
        message: expect.stringMatching(/session\.jsonl:17: api-request record: tail: /),
      }),
    );
  });

  it("refuses a fork child's own transcript, naming the parent session", () => {
    const sub = join(DIR, 'session', 'subagents');
    const child = readdirSync(sub).find((f) => f.endsWith('.jsonl'))!;
    expect(() => importClaudeTranscript(join(sub, child))).toThrow(
      /this is a fork child of session 00000000-0000-4000-8000-000000000001; import the parent/,
    );
  });
});
