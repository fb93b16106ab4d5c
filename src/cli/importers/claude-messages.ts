import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { FORK_FALLBACK_SYSTEM_PROMPT } from '../../core/fork/fallback.ts';
import { captureSnapshot, type ParentSnapshot } from '../../core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../../core/tools/declarations.ts';
import { formatZodIssues } from '../../core/util/validation.ts';
import { ROUTE_RECORD_TYPE } from './claude-route.ts';
import { malformed, WIRE_RECORD_TYPES } from './claude-wire.ts';
import type { Line } from './claude-tail.ts';

/*
 * The parent approximated from a session's message records, for a Claude Code that wrote no
 * api-request records. Claude Code writes an assistant turn as one record per content block
 * and each tool result as its own user record, so consecutive records of one role are merged
 * back into one message.
 */

const blockSchema = z.looseObject({ type: z.string().min(1) });
const messageRecord = z.looseObject({
  message: z.looseObject({
    role: z.enum(['user', 'assistant']),
    content: z.union([z.string(), z.array(blockSchema)], { error: 'expected a string or an array of content blocks' }),
    model: z.string().optional(),
  }),
});
const systemField = z.union([z.string(), z.array(z.looseObject({ type: z.literal('text'), text: z.string() }))]);
const toolsField = z.array(z.looseObject({ name: z.string().min(1) }));

type Block = Record<string, unknown> & { type: string };

interface Merged {
  role: 'user' | 'assistant';
  blocks: Block[];
  /** The transcript line of each block, for errors that name a block. */
  lines: number[];
  /** The API message id (`message.id`) of an assistant turn. */
  id?: unknown;
}

/** Record types Claude Code writes that are not conversation messages: skipped without a note. */
export const KNOWN_TYPES = new Set([
  'user',
  'assistant',
  'system',
  'summary',
  'file-history-snapshot',
  'attachment',
  'queue-operation',
  'last-prompt',
  'atis-latch',
  'cost-state',
  'tools-used',
  'custom-title',
  ...WIRE_RECORD_TYPES,
  ROUTE_RECORD_TYPE,
]);

/**
 * The uuids on the `parentUuid` chain that ends at the last main-chain message: a session
 * edited or retried in place leaves abandoned branches in the file, which are not the
 * history the session continued from. Undefined when the records carry no uuids (then the
 * file order is used).
 */
function mainChain(lines: readonly Line[]): Set<string> | undefined {
  const byUuid = new Map<string, Record<string, unknown>>();
  let leaf: Record<string, unknown> | undefined;
  for (const { value } of lines) {
    const r = value as Record<string, unknown>;
    if (typeof r['uuid'] === 'string') byUuid.set(r['uuid'], r);
    if ((r['type'] === 'user' || r['type'] === 'assistant') && r['isSidechain'] !== true) {
      if (typeof r['uuid'] !== 'string') return undefined;
      leaf = r;
    }
  }
  const chain = new Set<string>();
  for (
    let r = leaf;
    r && typeof r['uuid'] === 'string' && !chain.has(r['uuid']);
    r = byUuid.get(String(r['parentUuid'] ?? r['logicalParentUuid']))
  )
    chain.add(r['uuid']);
  return leaf ? chain : undefined;
}

function fail(path: string, line: number | string, message: string): never {
  throw new ForkcacheError('TRANSCRIPT_INVALID', `${path}:${line}: ${message}`, { data: { file: path, line } });
}

function parseAtLine<S extends z.ZodType>(
  schema: S,
  value: unknown,
  path: string,
  line: number,
  type: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) malformed(path, line, type, formatZodIssues(result.error.issues));
  return result.data;
}

/**
 * The content as blocks. Text blocks with no visible text are dropped (the API refuses them),
 * and `cache_control` is removed: the frozen head places its own markers, at most four.
 */
function toBlocks(content: string | Block[]): Block[] {
  const blocks: Block[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  return blocks
    .filter((b) => !(b.type === 'text' && typeof b['text'] === 'string' && b['text'].trim() === ''))
    .map(({ cache_control: _dropped, ...rest }) => rest as Block);
}

/** The transcript lines behind a snapshot error's `messages[i].content[j]` path. */
function linesOf(path: unknown, merged: Merged[]): string | undefined {
  const match = /^messages\[(\d+)\](?:\.content\[(\d+)\])?/.exec(String(path ?? ''));
  const message = match ? merged[Number(match[1])] : undefined;
  if (!message) return undefined;
  const block = match?.[2] === undefined ? undefined : message.lines[Number(match[2])];
  if (block !== undefined) return String(block);
  const first = message.lines[0];
  const last = message.lines.at(-1);
  return first === last ? String(first) : `${first}-${last}`;
}

/**
 * The parent from the message records: the messages on the main chain in file order, sidechain
 * records dropped and same-role records merged, restarted at a compaction boundary. `notes`
 * gets what was dropped or substituted.
 *
 * @throws ForkcacheError `TRANSCRIPT_INVALID`, naming the file and line.
 */
export function fromMessages(
  path: string,
  lines: readonly Line[],
  options: { model?: string | undefined },
  notes: string[],
): ParentSnapshot {
  let merged: Merged[] = [];
  let system: z.output<typeof systemField> | undefined;
  let tools: z.output<typeof toolsField> | undefined;
  let model: string | undefined;
  let sidechain = 0;
  let regrouped = 0;
  const chain = mainChain(lines);
  let offChain = 0;
  for (const { line, value } of lines) {
    const record = value as Record<string, unknown>;
    const type = record['type'];
    // Only a record of a type not known here may carry a system prompt or tool definitions (a
    // hand-written session-meta); `tools-used` lists tool names, not definitions.
    if (typeof type !== 'string' || !KNOWN_TYPES.has(type)) {
      if (record['system'] !== undefined) system = parseAtLine(systemField, record['system'], path, line, String(type));
      if (record['tools'] !== undefined) tools = parseAtLine(toolsField, record['tools'], path, line, String(type));
    }
    if (type === 'system' && record['subtype'] === 'compact_boundary') {
      notes.push(
        `line ${line}: compaction boundary: the ${merged.length} message(s) before it are not part of the parent`,
      );
      merged = [];
      continue;
    }
    if (type !== 'user' && type !== 'assistant') continue;
    if (record['isSidechain'] === true) {
      sidechain += 1;
      continue;
    }
    if (chain && !chain.has(String(record['uuid']))) {
      offChain += 1;
      continue;
    }
    const { message } = parseAtLine(messageRecord, record, path, line, type);
    if (message.role !== type) fail(path, line, `a "${type}" record holds a message with role "${message.role}"`);
    if (type === 'assistant' && message.model && message.model !== '<synthetic>') model = message.model;
    const blocks = toBlocks(message.content as string | Block[]);
    if (blocks.length === 0) continue;
    // Parallel tool calls of one API message may be written interleaved with their results
    // (tool_use, tool_result, tool_use, tool_result): a block of the assistant message before
    // the trailing results rejoins it (grouped by message.id), so the turn is not split.
    const id = (message as { id?: unknown }).id;
    const before = merged.at(-2);
    if (
      type === 'assistant' &&
      id !== undefined &&
      before?.role === 'assistant' &&
      before.id === id &&
      merged.at(-1)?.role === 'user'
    ) {
      before.blocks.push(...blocks);
      before.lines.push(...blocks.map(() => line));
      regrouped += 1;
      continue;
    }
    const last = merged.at(-1);
    if (last && last.role === message.role) {
      last.blocks.push(...blocks);
      last.lines.push(...blocks.map(() => line));
    } else merged.push({ role: message.role, blocks, lines: blocks.map(() => line), id });
  }
  if (regrouped > 0)
    notes.push(
      `${regrouped} assistant record(s) written between tool results rejoined their message (same message.id)`,
    );
  if (merged.length === 0) fail(path, lines.length, 'no user or assistant messages on the main chain');
  if (sidechain > 0) notes.push(`${sidechain} sidechain record(s) (sub-agents) dropped`);
  if (offChain > 0)
    notes.push(
      `${offChain} message record(s) off the parentUuid chain of the last message dropped (abandoned branches)`,
    );
  const chosenModel = options.model ?? model;
  if (!chosenModel) fail(path, lines.length, 'no assistant record names a model: give the plan a "model"');
  if (system === undefined) notes.push("no system prompt in the transcript: the fork agent's own prompt is used");
  if (tools === undefined)
    notes.push(
      `no tool definitions in the transcript: forkcache's tools are used (${TOOL_DECLARATIONS.map((t) => t.name).join(', ')})`,
    );
  const request = {
    model: chosenModel,
    system: system ?? FORK_FALLBACK_SYSTEM_PROMPT,
    tools: tools ?? TOOL_DECLARATIONS,
    messages: merged.map((m) => ({ role: m.role, content: m.blocks })) as unknown as Anthropic.MessageParam[],
  };
  try {
    return captureSnapshot(request);
  } catch (err) {
    if ((err as ForkcacheError).code !== 'SNAPSHOT_INVALID') throw err;
    // History errors name one `path`; schema errors a list of `issues`: the first one locates it.
    const data = ((err as ForkcacheError).data ?? {}) as { path?: unknown; issues?: { path?: unknown }[] };
    const where = linesOf(data.path ?? data.issues?.[0]?.path, merged);
    const message = (err as Error).message.replace(/^snapshot: /, '');
    throw new ForkcacheError(
      'TRANSCRIPT_INVALID',
      `${path}${where ? `:${where}` : ''}: cannot use this history as a parent: ${message}`,
      { cause: err, data: { file: path } },
    );
  }
}
