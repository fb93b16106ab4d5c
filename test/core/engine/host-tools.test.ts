import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { INTERRUPTED_TOOL_MESSAGE } from '../../../src/core/pool/resume-messages.ts';
import type { HostTool } from '../../../src/core/tools/host-tools.ts';
import { sharedEmulator, workspace } from './helpers.ts';
import { hostParent as parent } from './host-parent.ts';

const emulator = sharedEmulator({ script: 'host-tools' });

interface Call {
  forkId: string;
  toolUseId: string;
  tool: string;
  input: unknown;
}

/** The embedder's handlers, recording every call they get. */
function handlers(calls: Call[], overrides: Partial<Record<string, Partial<HostTool>>> = {}): Record<string, HostTool> {
  const tool = (name: string, readOnly: boolean, answer: (input: Record<string, unknown>) => string): HostTool => ({
    readOnly,
    execute: (input, ctx) => {
      calls.push({ forkId: ctx.forkId, toolUseId: ctx.toolUseId, tool: name, input });
      return answer(input as Record<string, unknown>);
    },
    ...overrides[name],
  });
  return {
    search_tickets: tool('search_tickets', true, (i) => `T-17 ${String(i['query'])}: login fails`),
    lookup_user: tool('lookup_user', true, (i) => `user ${String(i['name'])}: plan pro`),
    add_comment: tool('add_comment', false, (i) => `comment added to ${String(i['ticket'])}`),
  };
}

const DIRECTIVES = Array.from({ length: 20 }, (_, i) => `triage area ${i + 1}`);

interface ToolRecord {
  type: string;
  id?: string;
  name?: string;
  content?: string;
  isError?: boolean;
}

const records = (path: string): ToolRecord[] =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ToolRecord);

describe('host tools', () => {
  it('20 forks of a parent with three tools of its own call them through host handlers', async () => {
    const calls: Call[] = [];
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      runDir: workspace({}),
      pool: { maxThreads: 2 },
      hostTools: handlers(calls),
    });
    try {
      const fan = engine.fanOut(parent(`host-${Date.now()}`), DIRECTIVES);
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
      // every fork called each of the three tools once, from its own directive
      for (const fork of forks) {
        const own = calls.filter((c) => c.forkId === fork.forkId);
        expect(own.map((c) => c.tool)).toEqual(['search_tickets', 'lookup_user', 'add_comment']);
        expect(own[0]!.input).toEqual({ query: fork.directive, limit: 3 });
        expect(fork.report?.result).toContain(`comment added to ${fork.directive}`);
        const ends = records(fork.transcriptPath!).filter((r) => r.type === 'tool-end');
        expect(ends.map((r) => r.content)).toEqual([
          `T-17 ${fork.directive}: login fails`,
          `user ${fork.directive}: plan pro`,
          `comment added to ${fork.directive}`,
        ]);
        expect(new Set(own.map((c) => c.toolUseId))).toEqual(new Set(ends.map((r) => r.id)));
      }
      expect(calls).toHaveLength(60);
      expect(summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
    } finally {
      await engine.close();
    }
  });

  it('applies the timeout, the result limit, redaction and the permission policy; a fan-out handler wins', async () => {
    const calls: Call[] = [];
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      runDir: workspace({}),
      pool: { maxThreads: 1 },
      secrets: ['s3cr3t-token-value'],
      permissions: { tools: { add_comment: 'deny' } },
      hostTools: handlers(calls),
    });
    try {
      const fan = engine.fanOut(parent(`limits-${Date.now()}`), ['check the limits'], {
        hostTools: handlers(calls, {
          // never settles on its own: only its signal ends it
          search_tickets: {
            timeoutMs: 50,
            execute: (_input, ctx) =>
              new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
          },
          lookup_user: { maxResultBytes: 40, execute: () => `token s3cr3t-token-value ${'x'.repeat(500)}` },
        }),
      });
      const [fork] = (await fan.settled()).forks;
      const ends = records(fork!.transcriptPath!).filter((r) => r.type === 'tool-end');
      expect(ends[0]).toMatchObject({
        isError: true,
        content: 'search_tickets did not finish within 50 ms and was stopped',
      });
      expect(ends[1]!.content).toMatch(
        /^token \[REDACTED\] x+\n\[truncated: the result had 525 bytes, the first 40 are shown\]$/,
      );
      expect(ends[2]).toMatchObject({ isError: true });
      expect(ends[2]!.content).toMatch(/^Permission denied for add_comment/);
      expect(calls.map((c) => c.tool)).toEqual([]); // the fan-out's handlers ran, not the engine's; add_comment never did
    } finally {
      await engine.close();
    }
  });

  it('refuses a bad host tool naming the field', async () => {
    await expect(ForkEngine.create({ hostTools: { search: { execute: 'no' as never } } })).rejects.toThrow(
      /hostTools\.search\.execute: expected a function/,
    );
    await expect(ForkEngine.create({ hostTools: { agent: { execute: () => '' } } })).rejects.toThrow(/spawn tool/);
  });

  it('a resumed run re-runs an interrupted read-only call and never repeats one with effects', async () => {
    const runs = workspace({});
    const ws = workspace();
    const first: Call[] = [];
    const held: { fan?: ReturnType<ForkEngine['fanOut']> } = {};
    let entered = 0;
    // f01 stops inside add_comment (effects), f02 inside search_tickets (read-only): the run is
    // cancelled once both are in their handler, as a stop mid-call would leave them
    const stuck =
      (forkId: string): HostTool['execute'] =>
      (input, ctx) => {
        first.push({ forkId: ctx.forkId, toolUseId: ctx.toolUseId, tool: 'stuck', input });
        if (!ctx.forkId.endsWith(forkId)) return 'ok';
        if (++entered === 2) queueMicrotask(() => held.fan!.cancel());
        return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
      };
    const engine1 = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      runDir: runs,
      pool: { maxThreads: 2 },
      hostTools: handlers(first, {
        add_comment: { readOnly: false, execute: stuck('-f01') },
        search_tickets: { readOnly: true, execute: stuck('-f02') },
      }),
    });
    const fan = (held.fan = engine1.fanOut(parent(`resume-${Date.now()}`), DIRECTIVES.slice(0, 4)));
    const before = await fan.settled();
    await engine1.close();
    expect(before.forks[0]!.status).toBe('cancelled');
    expect(before.forks[1]!.status).toBe('cancelled');
    const interruptedComment = first.find(
      (c) => c.forkId.endsWith('-f01') && c.input !== undefined && 'body' in (c.input as object),
    )!;
    const interruptedSearch = first.find((c) => c.forkId.endsWith('-f02') && 'query' in (c.input as object))!;

    const second: Call[] = [];
    const engine2 = await ForkEngine.create({ baseURL: emulator.current.url, apiKey: 'test', workspace: ws });
    try {
      const { forks } = await engine2.resume(join(runs, fan.id), { hostTools: handlers(second) }).settled();
      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
      const ids = new Set(second.map((c) => c.toolUseId));
      expect(ids.has(interruptedComment.toolUseId)).toBe(false); // never repeated behind the model's back
      expect(ids.has(interruptedSearch.toolUseId)).toBe(true); // it only reads: run again
      // no call with effects that ran (or started) in the first run ran again
      const effects = new Set(first.filter((c) => 'body' in (c.input as object)).map((c) => c.toolUseId));
      expect(second.filter((c) => c.tool === 'add_comment' && effects.has(c.toolUseId))).toEqual([]);
      const f01 = records(forks[0]!.transcriptPath!);
      expect(f01.find((r) => r.type === 'tool-end' && r.id === interruptedComment.toolUseId)).toBeUndefined();
      expect(forks[0]!.report?.result).toContain('add_comment →');
      // the model was told the truth: the effect is unknown
      expect(forks[0]!.report?.issues).toContain(`add_comment failed: ${INTERRUPTED_TOOL_MESSAGE.slice(0, 60)}`);
    } finally {
      await engine2.close();
    }
  });
});
