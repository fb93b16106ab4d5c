import { createHmac } from 'node:crypto';
import { basename, dirname } from 'node:path';
import type { RunKey } from './run-key.ts';

/*
 * The MACs of a run directory (HMAC-SHA256 with the run key, truncated to 128 bits).
 *
 * Files written once (manifest, snapshot): one MAC each, over the file's bytes, its name and
 * the fan-out id, kept in `signature.json`.
 *
 * Transcripts, appended record by record: a chained MAC in each record, as its last field,
 * `{…,"mac":"KEYID.MAC"}`, where MAC covers the record's bytes without that field and the
 * previous record's MAC (the first one: a seed naming the fan-out and the fork). Appending
 * stays one write of one line; a record cannot be changed, moved to another file, reordered or
 * dropped from the middle without the chain breaking. A line torn by a crash never verifies,
 * and is dropped by the reader as before (jsonl.ts); the writer continues the chain from the
 * last complete record. Not detected: a file cut at a record boundary (its fork resumes from
 * that earlier point), or a whole directory replaced by an older copy of itself.
 */

const MAC_HEX = 32;

/** HMAC of length-prefixed parts (no two part lists give the same input). */
function macOf(key: RunKey, ...parts: Array<string | Buffer>): string {
  const h = createHmac('sha256', key.bytes);
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    h.update(`${bytes.length}:`);
    h.update(bytes);
  }
  return h.digest('hex').slice(0, MAC_HEX);
}

/** The MAC of a run file (`manifest.json`, `snapshot.json`) of fan-out `fanOutId`. */
export function fileMac(key: RunKey, fanOutId: string, name: string, bytes: Buffer): string {
  return macOf(key, 'forkcache run file v1', fanOutId, name, bytes);
}

/** The fan-out and fork a transcript belongs to, from its path (`<fanOutId>/forks/<forkId>.jsonl`). */
function transcriptIdentity(path: string): { fanOutId: string; forkId: string } {
  return { fanOutId: basename(dirname(dirname(path))), forkId: basename(path).replace(/\.jsonl$/, '') };
}

/** The value the chain of a transcript starts from. */
export function chainSeed(key: RunKey, path: string): string {
  const { fanOutId, forkId } = transcriptIdentity(path);
  return macOf(key, 'forkcache transcript v1', fanOutId, forkId);
}

const TAIL = /,"mac":"([0-9a-f]{8})\.([0-9a-f]{32})"\}$/;

/** A line's signature: the key id, the MAC, and the bytes it covers; undefined when it has none. */
export function splitSigned(line: string): { keyId: string; mac: string; body: string } | undefined {
  const m = TAIL.exec(line);
  if (!m) return undefined;
  return { keyId: m[1] as string, mac: m[2] as string, body: `${line.slice(0, m.index)}}` };
}

/** Sign one record's JSON text (an object) after `previous`: the line to write and the new chain value. */
export function signLine(key: RunKey, previous: string, json: string): { line: string; mac: string } {
  const mac = macOf(key, previous, json);
  return { line: `${json.slice(0, -1)},"mac":"${key.id}.${mac}"}`, mac };
}

/** The chain value after `line` (a line this key signed), to continue appending after it. */
export function chainAfter(key: RunKey, previous: string, line: string): string {
  const signed = splitSigned(line);
  return signed && signed.keyId === key.id ? signed.mac : previous;
}

/** Why a transcript's lines do not verify, or undefined when they all do. */
export type LineVerdict =
  | undefined
  | { kind: 'unsigned' | 'other-key' | 'tampered'; line: number; keyId?: string | undefined; signed: boolean };

/**
 * Check the chain of a transcript's complete lines (`line`: 1-based number, `raw`: its text).
 * `signed`: some line carries a MAC of this key (an all-unsigned file is an older run's).
 */
export function verifyLines(
  key: RunKey,
  path: string,
  lines: ReadonlyArray<{ line: number; raw: string }>,
): LineVerdict {
  let chain = chainSeed(key, path);
  const signed = lines.some((l) => splitSigned(l.raw)?.keyId === key.id);
  for (const { line, raw } of lines) {
    const parts = splitSigned(raw);
    if (parts === undefined) return { kind: 'unsigned', line, signed };
    if (parts.keyId !== key.id) return { kind: 'other-key', line, keyId: parts.keyId, signed };
    if (macOf(key, chain, parts.body) !== parts.mac) return { kind: 'tampered', line, signed };
    chain = parts.mac;
  }
  return undefined;
}
