import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importClaudeTranscript } from '../../src/cli/importers/claude-transcript.ts';
import { loadPlan } from '../../src/cli/plan/plan.ts';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../src/core/engine/engine.ts';
import { workspace } from '../core/engine/helpers.ts';

/* A real Qwen Code 0.24.4 chat (--auth-type anthropic, one tool call) run on the emulator. */
const SESSION = join(import.meta.dirname, '../fixtures/qwen-code/0.24.4/read/session.jsonl');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'fc-qwen-'));
  dirs.push(d);
  return d;
};

describe('a Qwen Code chat as the parent', () => {
  it('converts the Gemini-style parts: thoughts dropped, functionCall -> tool_use, functionResponse -> tool_result', () => {
    const { snapshot, source, notes, expectedCachedTokens } = importClaudeTranscript(SESSION);
    expect(source).toBe('qwen');
    expect(snapshot.model).toBe('claude-opus-5-5');
    expect(
      snapshot.messages.map((m) => [m.role, (m.content as { type: string }[]).map((b) => b.type).join('+')]),
    ).toEqual([
      ['user', 'text'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
      ['assistant', 'text'],
    ]);
    expect(snapshot.messages[0]!.content).toEqual([{ type: 'text', text: 'read notes.txt' }]);
    expect(expectedCachedTokens).toBe(14011);
    expect(notes[0]).toBe('a Qwen Code chat: forks run in the qwen layout');
  });

  it('a plan naming it as parentTranscript runs in the qwen layout, and its forks complete on the emulator', async () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'plan.json'),
      JSON.stringify({ parentTranscript: SESSION, directives: ['say hi', 'say bye'] }),
    );
    const { plan, directives, snapshot } = loadPlan(join(dir, 'plan.json'));
    expect(plan.layout).toBe('qwen');
    const emu = await startEmulator({ latency: 'off', script: 'echo' });
    try {
      const engine = await ForkEngine.create({
        baseURL: emu.url,
        apiKey: 'test',
        workspace: workspace(),
        layout: plan.layout,
        pool: { maxThreads: 1 },
      });
      try {
        const { forks } = await engine.fanOut(snapshot, directives).settled();
        expect(forks.map((f) => f.error?.message ?? f.status)).toEqual(['completed', 'completed']);
      } finally {
        await engine.close();
      }
    } finally {
      await emu.close();
    }
  });

  it('a malformed part names file, line and record type', () => {
    const path = join(tmp(), 'chat.jsonl');
    writeFileSync(path, readFileSync(SESSION, 'utf8').replace('{"functionResponse":', '{"inlineData":{},"x":'));
    expect(() => importClaudeTranscript(path)).toThrow(
      expect.objectContaining({
        code: 'TRANSCRIPT_INVALID',
        message: expect.stringMatching(/chat\.jsonl:6: tool_result record: message\.parts: a part with neither/),
      }),
    );
  });
});
