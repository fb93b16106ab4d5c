import { describe, expect, it } from 'vitest';
import type { ToolExchange } from '../../src/emulator/scripts/conversation.ts';
import { pagedRead, runAgain } from '../../src/emulator/scripts/paged-read.ts';
import {
  INTERRUPTED_TOOL_MESSAGE,
  NOT_STARTED_TOOL_MESSAGE,
  READ_ONLY_INTERRUPTED_MESSAGE,
} from '../../src/pool/resume-messages.ts';

const read = (i: number, result: ToolExchange['result']): ToolExchange => ({
  id: `t${i}`,
  name: 'read_file',
  input: { path: 'a.ts' },
  message: i,
  result,
});
const failed = (text: string) => ({ text, isError: true });

describe('the scripted models after a resume (what resume tells them about a stopped call)', () => {
  it('run a call again once when it never ran or only read, never one whose effect is unknown', () => {
    for (const text of [NOT_STARTED_TOOL_MESSAGE, READ_ONLY_INTERRUPTED_MESSAGE]) {
      const first = read(1, failed(text));
      expect(runAgain([first], first)).toBe(true);
      const second = read(2, failed(text));
      expect(runAgain([first, second], second)).toBe(false); // once: no loop on a call that keeps failing
    }
    const unknown = read(1, failed(INTERRUPTED_TOOL_MESSAGE));
    expect(runAgain([unknown], unknown)).toBe(false);
    const other = read(1, failed('a.ts: no such file'));
    expect(runAgain([other], other)).toBe(false);
  });

  it('pagedRead asks for the read again, then reads the retried page', () => {
    const stopped = read(1, failed(NOT_STARTED_TOOL_MESSAGE));
    expect(pagedRead([stopped], 0, 'a.ts')).toEqual({ kind: 'call', input: { path: 'a.ts' } });
    const calls = [stopped, read(2, { text: 'export const a = 1;\n', isError: false })];
    expect(pagedRead(calls, 1, 'a.ts')).toMatchObject({ kind: 'done', text: 'export const a = 1;\n' });
  });
});
