import { ForkcacheError } from '../../core/util/errors.ts';
/*
 * Which messages an `api-request` record's `tail` hashes name. A hash with an
 * `api-request-blob` is that blob's message. A hash without one is a message the session
 * already wrote as its own records: the assistant turn (one record per content block, one
 * `message.id`) or a user turn of tool results. Claude Code's hash is over the message as it
 * was in memory, not as a transcript shows it (a scrubbed fixture cannot recompute it), so a
 * blob-less hash is matched by where it stands: a hash the base request listed is the message
 * it was there; any other is the next message record, after the base request, of the role the
 * turn order expects (after a user turn, the assistant's; after the assistant's, the user's).
 * A blob takes the place of the record it was written for (its role, next in line). Taking the
 * last records instead of matching them put the user's tool results where the assistant turn
 * of two parallel Agent calls belonged ("roles must alternate"; issue 25).
 */

export interface Line {
  line: number;
  value: unknown;
}

export type Message = { role: string; content: unknown };

/** The main chain's message records after line `from` and before `to` as wire messages: assistant blocks grouped by `message.id`, consecutive user records merged. */
export function conversation(lines: readonly Line[], from: number, to: number): Message[] {
  const out: (Message & { id?: unknown })[] = [];
  for (const { line, value } of lines) {
    const r = value as Record<string, unknown>;
    if (line <= from || line >= to || (r['type'] !== 'user' && r['type'] !== 'assistant') || r['isSidechain'] === true)
      continue;
    const m = r['message'] as { id?: unknown; role: string; content: unknown };
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as unknown[]);
    const last = out.at(-1);
    const same = last && last.role === m.role && (m.role === 'user' || last.id === m.id);
    if (same) (last.content as unknown[]).push(...blocks);
    else out.push({ id: m.id, role: m.role, content: [...blocks] });
  }
  return out.map(({ role, content }) => ({ role, content }));
}

interface TailSources {
  /** `api-request-blob` messages by hash. */
  blobs: ReadonlyMap<string, Message>;
  /** The base request's messages by the hash it listed them under. */
  known: ReadonlyMap<string, Message>;
  /** The message records written since the base request (see `conversation`). */
  fresh: readonly Message[];
}

const turnRole = (role: string | undefined): string => (role === 'user' ? 'assistant' : 'user');

/**
 * The tail's messages, in order, after `head` (the messages kept from the base request).
 * @throws Error naming the hash a message could not be found for.
 */
export function tailMessages(tail: readonly string[], head: readonly Message[], sources: TailSources): Message[] {
  const { blobs, known, fresh } = sources;
  let cursor = 0;
  // the last user or assistant turn so far: system turns stand apart from the turn order
  let previous = [...head].reverse().find((m) => m.role !== 'system')?.role;
  const out: Message[] = [];
  for (const hash of tail) {
    let message = blobs.get(hash) ?? known.get(hash);
    if (message) {
      // a blob written for a record (the wire form of a user turn) takes that record's place
      if (blobs.has(hash) && message.role !== 'system' && fresh[cursor]?.role === message.role) cursor++;
    } else {
      const role = turnRole(previous);
      while (cursor < fresh.length && fresh[cursor]!.role !== role) cursor++;
      message = fresh[cursor++];
      if (!message)
        throw new ForkcacheError(
          'TRANSCRIPT_INVALID',
          `tail: ${hash.slice(0, 12)}… has neither a blob nor ${role === 'assistant' ? 'an' : 'a'} ${role} message record`,
        );
    }
    out.push(structuredClone(message));
    if (message.role !== 'system') previous = message.role;
  }
  return out;
}
