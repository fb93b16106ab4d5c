import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import {
  INTERRUPTED_TOOL_MESSAGE,
  NOT_STARTED_TOOL_MESSAGE,
  resumeMessages,
} from '../../../src/core/pool/resume-messages.ts';
import { readTranscript } from '../../../src/core/run-dir/transcript-reader.ts';
import { withTestHooks } from '../../../src/core/pool/test-hooks.ts';
import { loadRunKey } from '../../../src/core/run-dir/run-key.ts';
import { signRunFiles } from '../../../src/core/run-dir/run-signature.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

const emulator = sharedEmulator({ script: 'refactor' });

const FILES = { 'a.ts': 'export const fetchData = 1;\n', 'b.ts': 'import { fetchData } from "./a";\nfetchData;\n' };

function turnsOf(path: string): number[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; turn?: number })
    .filter((r) => r.type === 'turn')
    .map((r) => r.turn!);
}

describe('a worker dying mid-fork', () => {
  it('continues the fork on a fresh worker from its transcript; no turn repeats; siblings finish', async () => {
    const ws = workspace(FILES);
    const engine = await ForkEngine.create(
      withTestHooks(
        {
          baseURL: emulator.current.url,
          apiKey: 'test',
          workspace: ws,
          runDir: workspace({}),
          pool: { maxThreads: 2, concurrentTasksPerWorker: 1 },
        },
        { exitWorker: { forkIndex: 0, afterTurn: 2 } },
      ),
    );
    try {
      const fan = engine.fanOut(bigSnapshot(`crash-${Date.now()}`), [
        'rename fetchData to loadData in a.ts',
        'rename fetchData to loadData in b.ts',
      ]);
      const restarts: [string, number][] = [];
      for await (const e of fan) if (e.type === 'fork-restart') restarts.push([e.forkId, e.turnsDone]);
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed']);
      expect(restarts).toEqual([[forks[0]!.forkId, 2]]); // fork 0 went on from its second turn; its sibling, on another thread, never stopped
      expect(turnsOf(forks[0]!.transcriptPath!)).toEqual([1, 2, 3, 4]);
      expect(forks[0]!.turns).toBe(4);
      expect(forks[0]!.requests.map((r) => r.turn)).toEqual([1, 2, 3, 4]);
      expect(forks[0]!.filesChanged).toEqual(['a.ts']);
      expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('export const loadData = 1;\n');
      expect(readFileSync(join(ws, 'b.ts'), 'utf8')).not.toContain('fetchData');
      expect(summary.requests).toBe(8);
    } finally {
      await engine.close();
    }
  });
});

describe('a worker over its memory limit', () => {
  it('dies; its fork continues on a fresh worker from the transcript', async () => {
    const ws = workspace(FILES);
    const engine = await ForkEngine.create(
      withTestHooks(
        {
          baseURL: emulator.current.url,
          apiKey: 'test',
          workspace: ws,
          runDir: workspace({}),
          pool: { maxThreads: 1, concurrentTasksPerWorker: 1, resourceLimits: { maxOldGenerationSizeMb: 96 } },
        },
        { exitWorker: { forkIndex: 0, afterTurn: 1, how: 'out-of-memory' } },
      ),
    );
    try {
      const fan = engine.fanOut(bigSnapshot(`oom-${Date.now()}`), ['rename fetchData to loadData in a.ts']);
      const restarts: string[] = [];
      for await (const e of fan) if (e.type === 'fork-restart') restarts.push(e.forkId);
      const [fork] = (await fan.settled()).forks;
      expect(restarts).toHaveLength(1);
      expect(fork!.status).toBe('completed');
      expect(turnsOf(fork!.transcriptPath!)).toEqual([1, 2, 3, 4]);
      expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('export const loadData = 1;\n');
    } finally {
      await engine.close();
    }
  });
});

describe('resume from a transcript', () => {
  it('reports an interrupted tool call as interrupted and a never-started one as not run', () => {
    const dir = workspace({});
    const path = join(dir, 't.jsonl');
    const assistant = {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 't1', name: 'write_file', input: { path: 'x', content: 'y' } },
        { type: 'tool_use', id: 't2', name: 'edit_file', input: { path: 'x', old_string: 'y', new_string: 'z' } },
        { type: 'tool_use', id: 't3', name: 'list_dir', input: { path: '.' } },
      ],
    };
    const lines = [
      { v: 1, type: 'start', forkId: 'f1', prefixSha256: 'abc', directive: 'd', at: '' },
      {
        v: 1,
        type: 'turn',
        turn: 1,
        assistant,
        request: {
          turn: 1,
          requestId: null,
          messageId: 'msg_1',
          usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
          stopReason: 'tool_use',
          sentAt: 0,
          startedAt: 0,
          endedAt: 0,
        },
      },
      { v: 1, type: 'tool-start', turn: 1, id: 't1', name: 'write_file', input: {} },
      { v: 1, type: 'tool-end', turn: 1, id: 't1', isError: false, content: 'wrote x' },
      { v: 1, type: 'tool-start', turn: 1, id: 't2', name: 'edit_file', input: {} },
    ];
    writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{"v":1,"type":"tool-e`); // torn last line
    const transcript = readTranscript(path);
    const { messages, turnsDone, interrupted, rerun } = resumeMessages(transcript);
    expect(turnsDone).toBe(1);
    expect(interrupted).toEqual(['t2']); // an edit: its effect is unknown, never repeated behind the model
    expect(rerun).toEqual([]);
    expect(messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'wrote x' },
        { type: 'tool_result', tool_use_id: 't2', content: INTERRUPTED_TOOL_MESSAGE, is_error: true },
        { type: 'tool_result', tool_use_id: 't3', content: NOT_STARTED_TOOL_MESSAGE, is_error: true },
      ],
    });
    writeFileSync(path, 'not json\n{"v":1,"type":"start"}\n');
    expect(() => readTranscript(path)).toThrow(/^transcript \S*t\.jsonl:1: not valid JSON/);
  });
});

describe('engine.resume(runDir)', () => {
  it('finishes the unfinished fork from its last complete turn and never re-runs a completed one', async () => {
    const ws = workspace(FILES);
    const runs = workspace({});
    const first = await ForkEngine.create(
      withTestHooks(
        {
          baseURL: emulator.current.url,
          apiKey: 'test',
          workspace: ws,
          runDir: runs,
          maxWorkerRestarts: 0,
          pool: { maxThreads: 2, concurrentTasksPerWorker: 1 },
        },
        { exitWorker: { forkIndex: 0, afterTurn: 2 } },
      ),
    );
    const fan = first.fanOut(bigSnapshot(`resume-${Date.now()}`), [
      'rename fetchData to loadData in a.ts',
      'rename fetchData to loadData in b.ts',
    ]);
    const before = await fan.settled();
    await first.close();
    expect(before.forks.map((f) => f.status)).toEqual(['failed', 'completed']);
    expect(before.forks[0]!.error?.code).toBe('FORK_WORKER_FAILED');

    let requests = 0;
    const off = emulator.current.on('request-start', () => requests++);
    const second = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      pool: { maxThreads: 1 },
    });
    try {
      const resumed = second.resume(join(runs, fan.id));
      const { forks, summary } = await resumed.settled();
      expect(resumed.id).toBe(fan.id);
      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed']);
      expect(forks[0]!.turns).toBe(4);
      expect(forks[0]!.requests.map((r) => r.turn)).toEqual([1, 2, 3, 4]);
      expect(turnsOf(forks[0]!.transcriptPath!)).toEqual([1, 2, 3, 4]);
      expect(requests).toBe(2); // turns 3 and 4 of fork 0; fork 1 was not sent again
      expect(forks[1]!.finalText).toBe(before.forks[1]!.finalText);
      expect(summary.requests).toBe(8); // the tree's usage includes the turns done before the crash
      expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('export const loadData = 1;\n');
    } finally {
      off();
      await second.close();
    }
  });

  it('refuses to resume on a head that changed, and names a missing manifest', async () => {
    const runs = workspace({});
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(FILES),
      runDir: runs,
      pool: { maxThreads: 1 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`drift-${Date.now()}`), ['read a.ts and report']);
      await fan.settled();
      const snapshotPath = join(runs, fan.id, 'snapshot.json');
      const snapshot = JSON.parse(readFileSync(snapshotPath, 'utf8')) as { system: { text: string }[] };
      snapshot.system[0]!.text += ' changed';
      writeFileSync(snapshotPath, JSON.stringify(snapshot));
      // changed behind forkcache's back: refused before anything is frozen (issue 24, route 2)
      expect(() => engine.resume(join(runs, fan.id))).toThrow(expect.objectContaining({ code: 'RUN_DIR_TAMPERED' }));
      // signed as it is now (as if an older forkcache froze it otherwise): the head check still holds
      signRunFiles(join(runs, fan.id), fan.id, loadRunKey());
      expect(() => engine.resume(join(runs, fan.id))).toThrow(expect.objectContaining({ code: 'FORK_PREFIX_DRIFT' }));
      expect(() => engine.resume(runs)).toThrow(/^fan-out manifest \S*manifest\.json: cannot read \(no such file\)$/);
    } finally {
      await engine.close();
    }
  });
});

describe('appending to a transcript a killed process left torn', () => {
  it('cuts the torn line off first, so the file stays readable', async () => {
    const { JsonlTranscript } = await import('../../../src/core/run-dir/transcript.ts');
    const dir = workspace({});
    const path = join(dir, 't.jsonl');
    writeFileSync(
      path,
      '{"v":1,"type":"start","forkId":"f","prefixSha256":"a","directive":"d","at":""}\n{"v":1,"type":"tu',
    );
    new JsonlTranscript(path).toolStart({ turn: 1, id: 't1', name: 'read_file', input: {} });
    expect(
      readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { type: string }).type),
    ).toEqual(['start', 'tool-start']);
    expect(readTranscript(path).forkId).toBe('f');
  });
});
