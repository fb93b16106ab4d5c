import { describe, expect, it } from 'vitest';
import type { FanOutEvent, ForkResult } from '../../src/agent/fork-handle.ts';
import { colorEnabled, ProgressBoard } from '../../src/cli/progress-board.ts';

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
  it('writes one plain line per fork start and end when the stream is not a TTY', () => {
    const { stream, text } = fakeStream(false);
    const board = new ProgressBoard({ model: 'claude-sonnet-4-6', stream, env: {} });
    for (const event of [...events('fo-f01', 'completed'), ...events('fo-f02', 'failed')]) board.onEvent(event);
    board.stop();
    expect(text()).toBe(
      [
        'fo-f01 started',
        'fo-f01 completed after 1 turns, 1 tool calls, cache hit 60%',
        'fo-f02 started',
        'fo-f02 failed after 1 turns, 1 tool calls, cache hit 60%',
        '',
      ].join('\n'),
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
    expect(colored).toMatch(/1\/1 forks done .* cost \$0\.0002/);
    const plain = render({ NO_COLOR: '1' });
    expect(plain).toContain('fo-f01               completed turn   1');
    expect(plain).not.toMatch(SGR);
  });

  it('reads NO_COLOR as the convention says: set and non-empty', () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
  });
});
