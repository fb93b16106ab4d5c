import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importClaudeTranscript } from '../../src/cli/importers/claude-transcript.ts';
import { FORK_FALLBACK_SYSTEM_PROMPT } from '../../src/core/fork/fallback.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/claude-code/session.jsonl', import.meta.url));

/** A transcript file from records (objects become JSON lines; strings are written as they are). */
function transcript(records: (Record<string, unknown> | string)[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'fc-cc-')), 'session.jsonl');
  writeFileSync(path, records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return path;
}

const user = (content: unknown, extra: Record<string, unknown> = {}) => ({
  type: 'user',
  isSidechain: false,
  message: { role: 'user', content },
  ...extra,
});
const assistant = (content: unknown, extra: Record<string, unknown> = {}) => ({
  type: 'assistant',
  isSidechain: false,
  message: { role: 'assistant', model: 'claude-opus-5-5', content },
  ...extra,
});
const text = (t: string) => ({ type: 'text', text: t });

describe('a parent from a Claude Code transcript', () => {
  it('rebuilds the messages: same-role records merged, sidechains and non-message records dropped', () => {
    const { snapshot, notes } = importClaudeTranscript(FIXTURE);
    expect(snapshot.model).toBe('claude-opus-5-5');
    expect(snapshot.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(snapshot.messages[0]!.content).toEqual([text('rename fetchData to loadData across src')]);
    // One assistant turn written as three records (thinking, text, tool_use), merged back.
    expect((snapshot.messages[1]!.content as { type: string }[]).map((b) => b.type)).toEqual([
      'thinking',
      'text',
      'tool_use',
    ]);
    expect(snapshot.messages[2]!.content).toEqual([
      {
        tool_use_id: 'toolu_01GrepAaaaaaaaaaaaaaaaaa',
        type: 'tool_result',
        content: 'Found 2 files\nsrc/lib/http.ts\nsrc/features/users.ts',
      },
    ]);
    // The session ends with two Task calls: they become the fork's spawn calls.
    const last = snapshot.messages[3]!.content as { type: string; name?: string }[];
    expect(last.map((b) => b.name ?? b.type)).toEqual(['text', 'Task', 'Task']);
    expect(JSON.stringify(snapshot.messages)).not.toContain('It exports fetchData'); // the sidechain's answer
    expect(snapshot.system).toBe(FORK_FALLBACK_SYSTEM_PROMPT);
    expect(snapshot.tools).toEqual(TOOL_DECLARATIONS);
    expect(notes).toEqual([
      expect.stringMatching(/^no api-request records .*approximated from the message records/),
      '2 sidechain record(s) (sub-agents) dropped',
      "no system prompt in the transcript: the fork agent's own prompt is used",
      expect.stringMatching(/^no tool definitions in the transcript: forkcache's tools are used \(read_file, /),
    ]);
  });

  it("uses a system prompt and tools when a record carries them, and the plan's model over the transcript's", () => {
    const path = transcript([
      {
        type: 'session-meta',
        system: [text('You are the parent.')],
        tools: [{ name: 'Read', input_schema: { type: 'object' } }],
      },
      user('hello'),
      assistant([text('hi')]),
    ]);
    const { snapshot, notes } = importClaudeTranscript(path, { model: 'claude-opus-4-5' });
    expect(snapshot.system).toEqual([text('You are the parent.')]);
    expect(snapshot.tools).toEqual([{ name: 'Read', input_schema: { type: 'object' } }]);
    expect(snapshot.model).toBe('claude-opus-4-5');
    expect(notes).toEqual([
      'skipped 1 record(s) of type(s) not known here: session-meta (1)',
      expect.stringMatching(/^no api-request records/),
    ]);
  });

  it('rejoins parallel tool calls written interleaved with their results (grouped by message.id)', () => {
    const call = (id: string) => ({ type: 'tool_use', id, name: 'Read', input: { file_path: `${id}.txt` } });
    const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'x' });
    const turn = (block: unknown) => ({
      type: 'assistant',
      isSidechain: false,
      message: { id: 'msg_1', role: 'assistant', model: 'claude-opus-5-5', content: [block] },
    });
    const path = transcript([
      user('read both'),
      turn(text('Reading.')),
      turn(call('t1')),
      user([result('t1')]),
      turn(call('t2')),
      user([result('t2')]),
      {
        type: 'assistant',
        isSidechain: false,
        message: { id: 'msg_2', role: 'assistant', model: 'claude-opus-5-5', content: [text('done')] },
      },
    ]);
    const { snapshot, notes } = importClaudeTranscript(path);
    expect(snapshot.messages).toEqual([
      { role: 'user', content: [text('read both')] },
      { role: 'assistant', content: [text('Reading.'), call('t1'), call('t2')] },
      { role: 'user', content: [result('t1'), result('t2')] },
      { role: 'assistant', content: [text('done')] },
    ]);
    expect(notes).toContain(
      '1 assistant record(s) written between tool results rejoined their message (same message.id)',
    );
  });

  it('follows the parentUuid chain of the last message: an abandoned branch is dropped', () => {
    const at = (uuid: string, parentUuid: string | null, record: Record<string, unknown>) => ({
      ...record,
      uuid,
      parentUuid,
    });
    const path = transcript([
      at('u1', null, user('question')),
      at('a1', 'u1', assistant([text('first try')])),
      at('a2', 'u1', assistant([text('retry')])),
      at('u2', 'a2', user('thanks')),
      at('a3', 'u2', assistant([text('welcome')])),
    ]);
    const { snapshot, notes } = importClaudeTranscript(path);
    expect(snapshot.messages.map((m) => (m.content as { text: string }[])[0]!.text)).toEqual([
      'question',
      'retry',
      'thanks',
      'welcome',
    ]);
    expect(notes).toContain(
      '1 message record(s) off the parentUuid chain of the last message dropped (abandoned branches)',
    );
  });

  it('restarts the history at a compaction boundary, and drops empty text and cache markers', () => {
    const path = transcript([
      user('old question'),
      assistant([text('old answer')]),
      {
        type: 'system',
        subtype: 'compact_boundary',
        content: 'Conversation compacted',
        compactMetadata: { trigger: 'manual', preTokens: 150000 },
      },
      user('This session is being continued from a previous conversation. Summary: ...', { isCompactSummary: true }),
      assistant([text('  '), { ...text('continuing'), cache_control: { type: 'ephemeral' } }]),
    ]);
    const { snapshot, notes } = importClaudeTranscript(path);
    expect(snapshot.messages).toEqual([
      { role: 'user', content: [text('This session is being continued from a previous conversation. Summary: ...')] },
      { role: 'assistant', content: [text('continuing')] },
    ]);
    expect(notes[1]).toBe('line 3: compaction boundary: the 2 message(s) before it are not part of the parent');
  });
});

describe('errors name the transcript line', () => {
  const cases: [string, (Record<string, unknown> | string)[], RegExp][] = [
    ['a line that is not JSON', [user('hi'), '{"type":"assistant",'], /session\.jsonl:2: not valid JSON/],
    [
      'a record whose message has the other role',
      [user('hi'), { type: 'assistant', message: { role: 'user', content: 'x' } }],
      /session\.jsonl:2: a "assistant" record holds a message with role "user"/,
    ],
    [
      'content that is neither text nor blocks',
      [user('hi'), assistant(42)],
      /session\.jsonl:2: assistant record: message\.content: expected a string or an array of content blocks/,
    ],
    [
      'no conversation at all',
      [{ type: 'summary', summary: 'x', leafUuid: 'u' }],
      /session\.jsonl:1: no user or assistant messages on the main chain/,
    ],
    ['no model anywhere', [user('hi')], /session\.jsonl:1: no assistant record names a model: give the plan a "model"/],
    // The tool_use lived on a sidechain (dropped): its tool_result on line 4 answers nothing.
    [
      'a tool result whose call was dropped',
      [
        user('hi'),
        { ...assistant([{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }]), isSidechain: true },
        assistant([text('ok')]),
        user([text('see:'), { type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }]),
      ],
      /session\.jsonl:4: cannot use this history as a parent: messages\[2\]\.content\[1\]\.tool_use_id: no tool_use "toolu_1" in messages\[1\]/,
    ],
    [
      'a call never answered mid-history',
      [
        user('hi'),
        assistant([{ type: 'tool_use', id: 'toolu_9', name: 'Bash', input: {} }]),
        user('next'),
        assistant([text('ok')]),
      ],
      /session\.jsonl:2: cannot use this history as a parent: .*toolu_9/,
    ],
  ];
  for (const [name, records, message] of cases) {
    it(name, () => {
      expect(() => importClaudeTranscript(transcript(records))).toThrow(
        expect.objectContaining({ code: 'TRANSCRIPT_INVALID', message: expect.stringMatching(message) }),
      );
    });
  }

  it('a missing file', () => {
    expect(() => importClaudeTranscript(join(tmpdir(), 'no-such-session.jsonl'))).toThrow(
      expect.objectContaining({
        code: 'TRANSCRIPT_INVALID',
        message: expect.stringContaining('no-such-session.jsonl: cannot read (no such file)'),
      }),
    );
  });

  it('the fixture stays in the public record format (one JSON object per line, typed)', () => {
    const types = readFileSync(FIXTURE, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(new Set(types)).toEqual(new Set(['summary', 'file-history-snapshot', 'user', 'assistant', 'system']));
  });
});
