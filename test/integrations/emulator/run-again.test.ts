import { describe, expect, it } from 'vitest';
import type { ToolExchange } from '../../../src/integrations/emulator/scripts/conversation.ts';
import { pagedRead, runAgain } from '../../../src/integrations/emulator/scripts/paged-read.ts';
import { renameTurn } from '../../../src/integrations/emulator/scripts/refactor-rename.ts';
import type { MessagesRequest } from '../../../src/integrations/emulator/types.ts';
import {
  INTERRUPTED_TOOL_MESSAGE,
  NOT_STARTED_TOOL_MESSAGE,
  READ_ONLY_INTERRUPTED_MESSAGE,
} from '../../../src/core/pool/resume-messages.ts';

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

  it('the rename model starts over from a fresh read after a write whose effect is unknown', () => {
    const request = {
      tools: ['read_file', 'edit_file', 'write_file'].map((name) => ({ name })),
    } as unknown as MessagesRequest;
    const exchange = (i: number, name: string, input: Record<string, unknown>, result: ToolExchange['result']) => ({
      id: `t${i}`,
      name,
      input,
      message: i,
      result,
    });
    const edit = { path: 'a.ts', old_string: 'fetchData', new_string: 'loadData', replace_all: true };
    const stopped = [
      exchange(1, 'read_file', { path: 'a.ts' }, { text: 'export const fetchData = 1;\n', isError: false }),
      exchange(2, 'edit_file', edit, failed(INTERRUPTED_TOOL_MESSAGE)),
    ];
    const next = renameTurn(request, stopped, 'fetchData', 'loadData', 'a.ts');
    expect(next.content).toEqual([
      expect.objectContaining({ type: 'tool_use', name: 'read_file', input: { path: 'a.ts' } }),
    ]);
    // the edit had landed: the fresh read shows it, and there is nothing left to change
    const reread = [
      ...stopped,
      exchange(3, 'read_file', { path: 'a.ts' }, { text: 'export const loadData = 1;\n', isError: false }),
    ];
    const done = renameTurn(request, reread, 'fetchData', 'loadData', 'a.ts');
    const text = (done.content[0] as { text: string }).text;
    expect(text).toMatch(/^Result: no occurrences of fetchData in a\.ts; nothing to change$/m);
  });
});
