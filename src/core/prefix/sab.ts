import { createHash } from 'node:crypto';
import { ForkcacheError, type ErrorData } from '../util/errors.ts';

/**
 * Layout of the SharedArrayBuffer that holds a frozen head (little-endian):
 *
 *   0  u32  magic "FKCP"
 *   4  u16  format version
 *   6  u16  flags (bit 0: the head ends inside the boundary message's content array;
 *                 bit 1: it ends right after a complete message, Chat Completions only)
 *   8  u32  head byte length
 *  12  i32  attach counter: hash verifications so far, across threads (Atomics; not hashed)
 *  16  32B  sha256 of the head bytes
 *  48  ...  the head bytes, never written after freeze
 */
const SAB_MAGIC = 0x50434b46; // "FKCP" read as little-endian u32
const SAB_FORMAT_VERSION = 1;
export const SAB_OFFSET_MAGIC = 0;
const SAB_OFFSET_VERSION = 4;
export const SAB_OFFSET_FLAGS = 6;
export const SAB_OFFSET_LENGTH = 8;
const SAB_OFFSET_ATTACHES = 12;
const SAB_OFFSET_SHA256 = 16;
export const SAB_HEADER_BYTES = 48;
const SAB_FLAG_CONTENT_OPEN = 1;
const SAB_FLAG_MESSAGE_CLOSED = 2;

/**
 * Where the head stops: inside the boundary message's content array (`content-open`, a child
 * continues with `,{block}` or `]}`), or right after `"messages":[` (`messages-open`: nothing
 * of the history is shared), or (Chat Completions, where tool results are messages of their
 * own) right after a complete message (`message-closed`: a child continues with `,{message}`).
 */
export const HEAD_ENDS = ['content-open', 'messages-open', 'message-closed'] as const;
export type HeadEnd = (typeof HEAD_ENDS)[number];

/** True for a head end this layout defines (a head stored elsewhere, e.g. in Redis, is read back through it). */
export function isHeadEnd(value: unknown): value is HeadEnd {
  return (HEAD_ENDS as readonly unknown[]).includes(value);
}

function flagsOf(headEnd: HeadEnd): number {
  return headEnd === 'content-open'
    ? SAB_FLAG_CONTENT_OPEN
    : headEnd === 'message-closed'
      ? SAB_FLAG_MESSAGE_CLOSED
      : 0;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Copy the head into a new SharedArrayBuffer with its header. */
export function writeFrozenSab(head: Uint8Array, headEnd: HeadEnd): { sab: SharedArrayBuffer; sha256: string } {
  const sab = new SharedArrayBuffer(SAB_HEADER_BYTES + head.byteLength);
  const view = new DataView(sab);
  const digest = createHash('sha256').update(head).digest();
  view.setUint32(SAB_OFFSET_MAGIC, SAB_MAGIC, true);
  view.setUint16(SAB_OFFSET_VERSION, SAB_FORMAT_VERSION, true);
  view.setUint16(SAB_OFFSET_FLAGS, flagsOf(headEnd), true);
  view.setUint32(SAB_OFFSET_LENGTH, head.byteLength, true);
  new Uint8Array(sab, SAB_OFFSET_SHA256, 32).set(digest);
  new Uint8Array(sab, SAB_HEADER_BYTES).set(head);
  return { sab, sha256: digest.toString('hex') };
}

/** A verified, read-only-by-contract view of a frozen head (a SAB view cannot be frozen). */
export interface AttachedPrefix {
  readonly sha256: string;
  readonly head: Uint8Array;
  readonly byteLength: number;
  readonly headEnd: HeadEnd;
}

function corrupt(message: string, data?: ErrorData['FORK_PREFIX_CORRUPT']): ForkcacheError {
  return new ForkcacheError('FORK_PREFIX_CORRUPT', `frozen prefix: ${message}`, { data });
}

/** Read and check the header; does not hash the body. */
export function readFrozenHeader(sab: SharedArrayBuffer): { sha256: string; byteLength: number; headEnd: HeadEnd } {
  if (!(sab instanceof SharedArrayBuffer)) throw corrupt('expected a SharedArrayBuffer');
  if (sab.byteLength < SAB_HEADER_BYTES) throw corrupt(`buffer of ${sab.byteLength} bytes is shorter than the header`);
  const view = new DataView(sab);
  if (view.getUint32(SAB_OFFSET_MAGIC, true) !== SAB_MAGIC) throw corrupt('bad magic');
  const version = view.getUint16(SAB_OFFSET_VERSION, true);
  if (version !== SAB_FORMAT_VERSION)
    throw corrupt(`format version ${version}, expected ${SAB_FORMAT_VERSION}`, { version });
  const byteLength = view.getUint32(SAB_OFFSET_LENGTH, true);
  if (SAB_HEADER_BYTES + byteLength !== sab.byteLength)
    throw corrupt(`length ${byteLength} does not match the buffer`, { byteLength });
  const flags = view.getUint16(SAB_OFFSET_FLAGS, true);
  const sha256 = Buffer.from(sab, SAB_OFFSET_SHA256, 32).toString('hex');
  return {
    sha256,
    byteLength,
    headEnd:
      flags & SAB_FLAG_CONTENT_OPEN
        ? 'content-open'
        : flags & SAB_FLAG_MESSAGE_CLOSED
          ? 'message-closed'
          : 'messages-open',
  };
}

/** How many times any thread has verified this buffer's hash. */
export function attachCount(sab: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(sab, SAB_OFFSET_ATTACHES, 1), 0);
}

// Per-thread cache: a worker verifies the hash once per prefix, not once per task. Each task
// delivers a new SharedArrayBuffer object over the same memory, so the key is the hash.
const verified = new Map<string, AttachedPrefix>();
const MAX_VERIFIED = 64;

interface AttachOptions {
  /** `always` re-hashes even when this thread verified the prefix before. */
  verify?: 'once' | 'always';
}

/**
 * Attach to a frozen head in any thread: check the header, hash the bytes once, expose views.
 * @throws ForkcacheError `FORK_PREFIX_CORRUPT` when the header or the hash does not match.
 */
export function attachFrozenPrefix(sab: SharedArrayBuffer, options: AttachOptions = {}): AttachedPrefix {
  const header = readFrozenHeader(sab);
  const cached = verified.get(header.sha256);
  if (
    cached &&
    options.verify !== 'always' &&
    cached.byteLength === header.byteLength &&
    cached.headEnd === header.headEnd
  )
    return cached;
  const head = new Uint8Array(sab, SAB_HEADER_BYTES, header.byteLength);
  const actual = sha256Hex(head);
  if (actual !== header.sha256)
    throw corrupt('sha256 of the head does not match its header', { expected: header.sha256, actual });
  Atomics.add(new Int32Array(sab, SAB_OFFSET_ATTACHES, 1), 0, 1);
  const attached: AttachedPrefix = Object.freeze({ ...header, head });
  if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!);
  verified.set(header.sha256, attached);
  return attached;
}
