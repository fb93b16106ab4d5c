import { describe, expect, it } from 'vitest';
import { tailMessages, type Message } from '../../src/cli/importers/claude-tail.ts';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const system = (text: string): Message => ({ role: 'system', content: [{ type: 'text', text }] });
const texts = (messages: Message[]) => messages.map((m) => `${m.role}:${(m.content as { text: string }[])[0]!.text}`);

describe('matching blob-less tail hashes to message records', () => {
  it('a blob-less hash after a user turn is the assistant record, the blob takes the user record it was written for', () => {
    const out = tailMessages(['h-asst', 'h-results'], [user('go')], {
      blobs: new Map([['h-results', user('results (wire form)')]]),
      known: new Map(),
      fresh: [assistant('two Agent calls'), user('results (record)')],
    });
    expect(texts(out)).toEqual(['assistant:two Agent calls', 'user:results (wire form)']);
  });

  it('system turns stand apart: after [user, system] the next blob-less hash is still the assistant turn', () => {
    const out = tailMessages(['a', 'u', 's'], [user('go'), system('env')], {
      blobs: new Map([['s', system('reminder')]]),
      known: new Map(),
      fresh: [assistant('call'), user('result')],
    });
    expect(texts(out)).toEqual(['assistant:call', 'user:result', 'system:reminder']);
  });

  it('a hash the base request listed is the message it was there, not a new record', () => {
    const out = tailMessages(['old', 'new'], [], {
      blobs: new Map(),
      known: new Map([['old', user('listed before')]]),
      fresh: [assistant('new answer')],
    });
    expect(texts(out)).toEqual(['user:listed before', 'assistant:new answer']);
  });

  it('a hash with neither a blob nor a record of the expected role is an error naming it', () => {
    expect(() =>
      tailMessages(['0123456789abcdef-missing'], [user('go')], { blobs: new Map(), known: new Map(), fresh: [] }),
    ).toThrow('tail: 0123456789ab… has neither a blob nor an assistant message record');
  });
});
