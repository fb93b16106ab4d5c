import { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { formatZodIssues } from '../../core/util/validation.ts';
import { conversation, tailMessages, type Line, type Message } from './claude-tail.ts';

/*
 * Claude Code (2.1.3xx) writes what it sent to the API into its transcripts, so the parent's
 * last request can be rebuilt exactly instead of guessed from the conversation records:
 *   - `api-request-shape` { shapeHash, shape: { system, tools } }: system without the billing
 *     block (as the API caches it) and the full tool definitions;
 *   - `api-request-blob` { hash, message }: the wire form of a message (user side, system turns);
 *   - `api-request` { id, shapeHash, params, base?, keep, tail, cacheControl }: the message list
 *     delta-encoded (the first `keep` messages of request `base`, then the messages named by the
 *     `tail` hashes) and the marker paths into `system` / `messages`.
 * Tail hashes without a blob are the messages the session added since `base` (the assistant
 * turn, written as one record per content block, and its tool results): they are taken, in
 * order, from the message records between the two requests, grouped by `message.id`.
 */

interface WireRebuild {
  request: Record<string, unknown>;
  /** The transcript line of the `api-request` record rebuilt. */
  line: number;
  notes: string[];
  /** The session's own `max_tokens` (not part of the prefix; a fork may need it, see `forkMaxTokens`). */
  maxTokens: number | undefined;
}

const shapeRecord = z.looseObject({
  shapeHash: z.string(),
  shape: z.looseObject({
    system: z.array(z.looseObject({ type: z.string() })),
    tools: z.array(z.looseObject({ name: z.string() })),
  }),
});
const blobRecord = z.looseObject({
  hash: z.string(),
  message: z.looseObject({ role: z.string(), content: z.unknown() }),
});
const requestRecord = z.looseObject({
  id: z.string(),
  shapeHash: z.string(),
  params: z.looseObject({ model: z.string() }),
  base: z.string().optional(),
  keep: z.number().int().nonnegative(),
  tail: z.array(z.string()),
  cacheControl: z
    .array(z.looseObject({ path: z.array(z.union([z.string(), z.number()])), value: z.unknown() }))
    .default([]),
});

export const WIRE_RECORD_TYPES = ['api-request-shape', 'api-request-blob', 'api-request'] as const;
const SCHEMAS = {
  'api-request-shape': shapeRecord,
  'api-request-blob': blobRecord,
  'api-request': requestRecord,
} as const;

export function malformed(path: string, line: number, type: string, message: string): never {
  throw new ForkcacheError('TRANSCRIPT_INVALID', `${path}:${line}: ${type} record: ${message}`, {
    data: { file: path, line, type },
  });
}

function setAt(root: Record<string, unknown>, path: readonly (string | number)[], value: unknown): boolean {
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    node = (node as Record<string | number, unknown> | undefined)?.[key];
    if (typeof node === 'string' && key === 'content') return false;
  }
  const target = (node as Record<string | number, unknown> | undefined)?.[path.at(-1)!];
  if (typeof target !== 'object' || target === null) return false;
  (target as Record<string, unknown>)['cache_control'] = value;
  return true;
}

/**
 * Rebuild the last `api-request` of a transcript as the wire request it describes, or
 * `undefined` when the transcript has none (an older Claude Code).
 * @throws ForkcacheError `TRANSCRIPT_INVALID` naming file, line and record type.
 */
export function rebuildWireRequest(path: string, lines: readonly Line[]): WireRebuild | undefined {
  const shapes = new Map<string, z.output<typeof shapeRecord>>();
  const blobs = new Map<string, Message>();
  const requests = new Map<string, { line: number; record: z.output<typeof requestRecord> }>();
  let last: { line: number; record: z.output<typeof requestRecord> } | undefined;
  for (const { line, value } of lines) {
    const type = (value as { type?: unknown }).type as (typeof WIRE_RECORD_TYPES)[number];
    if (!WIRE_RECORD_TYPES.includes(type)) continue;
    const parsed = SCHEMAS[type].safeParse(value);
    if (!parsed.success) malformed(path, line, type, formatZodIssues(parsed.error.issues));
    const record = parsed.data as Record<string, unknown>;
    if (type === 'api-request-shape') shapes.set(record['shapeHash'] as string, record as z.output<typeof shapeRecord>);
    else if (type === 'api-request-blob') blobs.set(record['hash'] as string, record['message'] as Message);
    else {
      last = { line, record: record as z.output<typeof requestRecord> };
      requests.set(last.record.id, last);
    }
  }
  if (!last) return undefined;
  // Side queries (titles, summaries) may be logged too: the main thread's requests share the
  // querySource of the request behind the last main-chain assistant record (its requestRef).
  const ref = [...lines]
    .reverse()
    .map((l) => l.value as Record<string, unknown>)
    .find((r) => r['type'] === 'assistant' && r['isSidechain'] !== true && typeof r['requestRef'] === 'string');
  const main = ref ? requests.get(String(ref['requestRef'])) : undefined;
  if (main)
    last = [...requests.values()]
      .filter((q) => q.record['querySource'] === main.record['querySource'])
      .reduce((a, b) => (b.line > a.line ? b : a));
  const notes: string[] = [];
  // A request's messages, and the hash each was listed under (for the requests built on it).
  const messagesOf = (
    req: { line: number; record: z.output<typeof requestRecord> },
    depth: number,
  ): { messages: Message[]; hashes: (string | undefined)[] } => {
    const { record, line } = req;
    let head: Message[] = [];
    let headHashes: (string | undefined)[] = [];
    const known = new Map<string, Message>();
    let from = 0;
    if (record.base !== undefined) {
      const base = requests.get(record.base);
      if (!base || depth > 10_000)
        malformed(path, line, 'api-request', `base: no earlier api-request "${record.base}"`);
      const built = messagesOf(base, depth + 1);
      built.hashes.forEach((h, i) => h !== undefined && known.set(h, built.messages[i]!));
      head = built.messages.slice(0, record.keep);
      headHashes = built.hashes.slice(0, record.keep);
      from = base.line;
    }
    try {
      const tail = tailMessages(record.tail, head, { blobs, known, fresh: conversation(lines, from, line) });
      return { messages: [...head, ...tail], hashes: [...headHashes, ...record.tail] };
    } catch (err) {
      return malformed(path, line, 'api-request', (err as Error).message);
    }
  };
  const { record, line } = last;
  const shape = shapes.get(record.shapeHash);
  if (!shape) malformed(path, line, 'api-request', `shapeHash: no api-request-shape "${record.shapeHash}"`);
  const body = { system: structuredClone(shape.shape.system), messages: messagesOf(last, 0).messages };
  for (const { path: at, value } of record.cacheControl) {
    if (!setAt(body as unknown as Record<string, unknown>, at, value))
      notes.push(`marker at ${at.join('.')}: no such block; dropped`);
  }
  // Claude Code sends a system turn that has one unmarked text block as a string.
  for (const m of body.messages) {
    const blocks = m.content as { type: string; text?: string; cache_control?: unknown }[];
    if (
      m.role === 'system' &&
      Array.isArray(blocks) &&
      blocks.length === 1 &&
      blocks[0]!.type === 'text' &&
      blocks[0]!.cache_control === undefined
    )
      m.content = blocks[0]!.text;
  }
  const { model, thinking, context_management, output_config, max_tokens } = record.params as Record<string, unknown>;
  const request: Record<string, unknown> = {
    model,
    system: body.system,
    tools: shape.shape.tools,
    messages: body.messages,
  };
  if (thinking !== undefined) request['thinking'] = thinking;
  if (context_management !== undefined) request['context_management'] = context_management;
  if (output_config !== undefined) request['output_config'] = output_config;
  notes.push(
    `rebuilt from the api-request record at line ${line} (${body.messages.length} messages, ${record.cacheControl.length} markers, ${shape.shape.tools.length} tools)`,
  );
  return { request, line, notes, maxTokens: typeof max_tokens === 'number' ? max_tokens : undefined };
}
