import { describe, expect, it } from 'vitest';
import type { FanOutEvent, ForkResult } from '../../src/core/agent/fork-handle.ts';
import { colorEnabled, ProgressBoard } from '../../src/cli/board/progress-board.ts';
import { emulatedTty } from './board/fake-tty.ts';

/** A stream that records what is written; a TTY or not. */
function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  let out = '';
  const stream = {
    isTTY,
    columns: 160,
    rows: 40,
    write: (chunk: string) => ((out += chunk), true),
    on: () => stream,
    once: () => stream,
    removeListener: () => stream,
  };
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => out };
}

const usage = { input_tokens: 10, cache_creation_input_tokens: 30, cache_read_input_tokens: 60, output_tokens: 5 };

function events(forkId: string, status: ForkResult['status']): FanOutEvent[] {
  const request = {
    turn: 1,
    requestId: null,
    messageId: 'msg_1',
    usage,
    stopReason: 'end_turn',
    sentAt: 1,
    startedAt: 2,
    endedAt: 3,
  };
  return [
    { type: 'fork-start', forkId, at: 0 },
    { type: 'turn-start', forkId, turn: 1, at: 1 },
    { type: 'tool-call', forkId, turn: 1, at: 2, name: 'read_file', id: 'toolu_1', isError: false },
    { type: 'turn-end', forkId, turn: 1, at: 3, request },
    { type: 'fork-end', forkId, at: 4, status, result: { turns: 1, toolCalls: 1 } as ForkResult },
  ];
}

// eslint-disable-next-line no-control-regex -- the escape character is what the test looks for
const SGR = /\x1b\[[0-9;]*m/;

describe('progress board', () => {
  it('writes one plain line per fork start and end when the stream is not a TTY, with the file it works on', () => {
    const { stream, text } = fakeStream(false);
    const board = new ProgressBoard({ model: 'claude-sonnet-4-6', stream, env: {} });
    board.plan({ id: 'fo', forks: [{ forkId: 'fo-f01', directive: 'rename a to b in src/x.ts' }] });
    for (const event of [...events('fo-f01', 'completed'), ...events('fo-f02', 'failed')]) board.onEvent(event);
    board.stop();
    expect(text()).toBe(
      [
        'fo-f01 started',
        'fo-f01 completed after 1 turns, 1 tool calls, cache hit 60%  src/x.ts',
        'fo-f02 started',
        'fo-f02 failed after 1 turns, 1 tool calls, cache hit 60%',
        '',
      ].join('\n'),
    );
  });

  it('plain lines carry a progress line every tenth of a large run', () => {
    const { stream, text } = fakeStream(false);
    let now = 0;
    const board = new ProgressBoard({ model: 'claude-sonnet-4-6', stream, env: {}, now: () => now });
    const ids = Array.from({ length: 40 }, (_, i) => `fo-f${String(i + 1).padStart(2, '0')}`);
    board.plan({ id: 'fo', forks: ids.map((id) => ({ forkId: id, directive: 'x' })) });
    for (const id of ids)
      for (const event of events(id, 'completed')) {
        now += 100;
        board.onEvent(event);
      }
    board.stop();
    const progress = text()
      .split('\n')
      .filter((l) => l.startsWith('progress: '));
    expect(progress).toHaveLength(10);
    expect(progress[0]).toMatch(
      /^progress: 4\/40 forks ended \(4 done\) · 0 running · 36 queued · elapsed 0:02 · ETA /,
    );
  });

  it('writes the same plain lines on a TTY with --json (plain), and no colour', () => {
    const { stream, text } = fakeStream(true);
    const board = new ProgressBoard({ model: 'claude-sonnet-4-6', stream, plain: true, env: {} });
    for (const event of events('fo-f01', 'completed')) board.onEvent(event);
    board.stop();
    expect(text()).toBe('fo-f01 started\nfo-f01 completed after 1 turns, 1 tool calls, cache hit 60%\n');
  });

  it('colours the live board on a TTY, and emits no colour at all when NO_COLOR is set', () => {
    const render = (env: Record<string, string>): string => {
      const { stream, text } = fakeStream(true);
      const board = new ProgressBoard({ model: 'claude-sonnet-4-6', stream, env });
      for (const event of events('fo-f01', 'completed')) board.onEvent(event);
      board.stop();
      return text();
    };
    const colored = render({});
    expect(colored).toContain('\x1b[32mcompleted');
    const plain = render({ NO_COLOR: '1' });
    expect(plain).toContain('fo-f01  completed  1 turns  1 tools');
    expect(plain).not.toMatch(SGR);
  });

  it('reads NO_COLOR as the convention says: set and non-empty', () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
  });
});

describe('the live board on a terminal', () => {
  const model = 'claude-sonnet-4-6';
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `fo1-ab-f${String(i + 1).padStart(3, '0')}`);

  it('counts every planned fork from the first frame (the old board counted forks as they started: 0/32, then 64)', async () => {
    const tty = emulatedTty(160, 40);
    const board = new ProgressBoard({ model, stream: tty.stream, env: { NO_COLOR: '1' }, frameMs: 0, tickMs: 0 });
    board.plan({ id: 'fo1-ab', forks: ids(80).map((id) => ({ forkId: id, directive: `rename x in src/${id}.ts` })) });
    board.onEvent({ type: 'fork-start', forkId: 'fo1-ab-f001', at: 0 });
    board.redraw();
    const screen = await tty.lines();
    expect(screen.find((l) => l.includes('forks ended'))).toMatch(
      /^fo1-ab {2}0\/80 forks ended \(0 done\) · 1 running · 79 queued/,
    );
    expect(screen.at(-1)).toBe('+79 queued, 0 done, 0 not done');
    board.stop();
  });

  it('holds at 500 forks in 40 rows: running rows cut to fit, each finished fork once above, nothing left at the end', async () => {
    const tty = emulatedTty(120, 40);
    let now = 0;
    const board = new ProgressBoard({ model, stream: tty.stream, env: {}, frameMs: 0, tickMs: 0, now: () => now });
    const all = ids(500);
    board.plan({ id: 'fo1-ab', forks: all.map((id) => ({ forkId: id, directive: `rename x in src/${id}.ts` })) });
    for (let i = 0; i < all.length; i += 50) {
      const batch = all.slice(i, i + 50);
      for (const id of batch) board.onEvent({ type: 'fork-start', forkId: id, at: (now += 10) });
      board.redraw();
      const screen = await tty.lines();
      expect(screen.slice(-40).filter((l) => / forks ended /.test(l))).toHaveLength(1);
      expect(screen.at(-1)).toMatch(/^\+\d+ more running, \+\d+ queued/);
      if (i === 0) tty.resize(90, 40); // narrower mid-run: the terminal re-flows the frame's long lines
      for (const id of batch) for (const e of events(id, 'completed').slice(1)) board.onEvent({ ...e, at: (now += 1) });
      board.redraw();
    }
    board.stop();
    const lines = await tty.lines();
    expect(lines.filter((l) => !l.startsWith('fo1-ab-f'))).toEqual([]);
    expect(lines).toHaveLength(500);
    expect(new Set(lines.map((l) => l.split(' ')[0])).size).toBe(500);
  });

  it('shows the parent while it works, and the rate-limit budget only once limits are known', async () => {
    const tty = emulatedTty(160, 40);
    let now = 0;
    const view = { mode: 'on', waiting: 0, sleepers: 0, stopped: undefined, classes: [] as unknown[] };
    const board = new ProgressBoard({
      model,
      stream: tty.stream,
      env: {},
      frameMs: 0,
      tickMs: 0,
      now: () => now,
      budget: () => view as never,
    });
    board.parent('turn 1: the model is writing its answer');
    now += 27_000;
    board.redraw();
    expect((await tty.lines()).at(-1)).toBe('parent   turn 1: the model is writing its answer (0:27)');
    board.plan({ id: 'fo', forks: [{ forkId: 'fo-f01', directive: 'x' }] });
    const cls = { modelClass: 'sonnet', used: { rpm: 0, itpm: 0, otpm: 0 }, inFlight: 0, blockedMs: 0 };
    view.classes = [{ ...cls, limits: {} }];
    board.redraw();
    expect((await tty.lines()).some((l) => l.includes('RPM'))).toBe(false); // the emulator: no limits, no `RPM 0/?`
    view.classes = [{ ...cls, limits: { rpm: 50 } }];
    board.redraw();
    expect((await tty.lines()).some((l) => l.includes('RPM 0/50'))).toBe(true);
    board.stop();
  });
});

describe("the board and a fork's hostile text", () => {
  // a tool name, an error message and a directive label carrying what erased and forged lines
  const HOSTILE = '\u001b[2K\rforkcache: all 1 forks completed, exit 0\u001b[2J\u009b31m\u202e';

  it('on a terminal: nothing is erased or cleared, the forged line never stands alone', async () => {
    const tty = emulatedTty(200, 30);
    const board = new ProgressBoard({ model: 'claude-sonnet-4-6', stream: tty.stream, env: {}, frameMs: 0, tickMs: 0 });
    board.log('kept above');
    board.plan({ id: 'fo', forks: [{ forkId: 'fo-f01', directive: `fix ${HOSTILE}` }] });
    board.onEvent({ type: 'fork-start', forkId: 'fo-f01', at: 0 });
    board.onEvent({ type: 'tool-call', forkId: 'fo-f01', turn: 1, at: 2, name: HOSTILE, id: 't1', isError: false });
    board.redraw();
    const error = { code: 'GIT_FAILED', message: HOSTILE };
    board.onEvent({
      type: 'fork-end',
      forkId: 'fo-f01',
      at: 4,
      status: 'failed',
      result: { turns: 1, toolCalls: 1, error } as ForkResult,
    });
    board.log(`note: ${HOSTILE}`);
    board.stop();
    const lines = await tty.lines();
    expect(lines[0]).toBe('kept above'); // ESC[2J would have cleared it
    expect(lines.some((l) => l.includes('\\x1b[2K\\x0dforkcache: all 1 forks completed'))).toBe(true);
    expect(lines.filter((l) => l.startsWith('forkcache: all'))).toEqual([]);
  });

  it('in plain lines: every control character of the fork escaped', () => {
    const { stream, text } = fakeStream(false);
    const board = new ProgressBoard({ model: 'claude-sonnet-4-6', stream, env: {} });
    board.plan({ id: 'fo', forks: [{ forkId: 'fo-f01', directive: HOSTILE }] });
    board.onEvent({ type: 'fork-start', forkId: 'fo-f01', at: 0 });
    board.onEvent({
      type: 'fork-end',
      forkId: 'fo-f01',
      at: 4,
      status: 'failed',
      result: { turns: 1, toolCalls: 0 } as ForkResult,
    });
    board.parent(HOSTILE);
    board.log(HOSTILE);
    board.stop();
    // eslint-disable-next-line no-control-regex
    expect(text()).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(text()).toContain('\\x1b[2K');
  });
});

describe('the board of a resumed run', () => {
  const model = 'claude-sonnet-4-6';
  const request = (turn: number) => ({
    turn,
    requestId: null,
    messageId: `msg_${turn}`,
    usage,
    stopReason: 'tool_use',
    sentAt: 1,
    startedAt: 2,
    endedAt: 3,
  });

  it("shows a fork finished in an earlier session with its transcript's totals, and a resumed one with every session's", async () => {
    const tty = emulatedTty(160, 20);
    const board = new ProgressBoard({ model, stream: tty.stream, env: {}, frameMs: 0, tickMs: 0, now: () => 0 });
    board.plan({
      id: 'fo1-ab',
      forks: [
        { forkId: 'fo1-ab-f01', directive: 'rename x in src/a.ts' },
        { forkId: 'fo1-ab-f02', directive: 'rename x in src/b.ts' },
      ],
    });
    // f01 finished before: it ends at once, without starting, with its two turns from the transcript
    board.onEvent({
      type: 'fork-end',
      forkId: 'fo1-ab-f01',
      at: 1,
      status: 'completed',
      result: { turns: 2, toolCalls: 1, requests: [request(1), request(2)] } as unknown as ForkResult,
    });
    // f02 did one turn before, one now
    for (const e of events('fo1-ab-f02', 'completed').slice(0, 4)) board.onEvent(e);
    board.onEvent({
      type: 'fork-end',
      forkId: 'fo1-ab-f02',
      at: 5,
      status: 'completed',
      result: { turns: 2, toolCalls: 2, requests: [request(1), request(2)] } as unknown as ForkResult,
    });
    board.stop();
    const lines = (await tty.lines()).filter((l) => l.startsWith('fo1-ab-f0'));
    expect(lines).toHaveLength(2);
    // two turns of 105 tokens each, priced: never `0 tok $0.0000`
    for (const line of lines) {
      expect(line).toContain('  210 tok  ');
      expect(line).not.toContain('$0.0000');
      expect(line).toMatch(/\$0\.\d{4}/);
    }
  });
});
