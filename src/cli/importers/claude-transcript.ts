import { ForkcacheError } from '../../core/util/errors.ts';
import { captureSnapshot, type ParentSnapshot } from '../../core/fork/snapshot.ts';
import { readJsonl } from '../../core/run-dir/jsonl.ts';
import { importQwenChat, isQwenChat } from './qwen-transcript.ts';
import { rebuildWireRequest } from './claude-wire.ts';
import type { Line } from './claude-tail.ts';
import { fromMessages, KNOWN_TYPES } from './claude-messages.ts';
import { routeNote, sessionRoute, type SessionRoute } from './claude-route.ts';

/*
 * A Claude Code session transcript (`~/.claude/projects/<project>/<session>.jsonl`): one JSON
 * record per line. `user` and `assistant` records carry an API message in `message`
 * ({ role, content, model?, usage? }) with `uuid`, `parentUuid`, `sessionId`, `isSidechain`,
 * `timestamp`; other types (`summary`, `system` notices, file-history snapshots, ...) are not
 * part of the conversation.
 */

const CODES = { missing: 'TRANSCRIPT_INVALID', invalid: 'TRANSCRIPT_INVALID' } as const;

interface ImportedParent {
  snapshot: ParentSnapshot;
  /** What was used, dropped or substituted, for the user to read. */
  notes: string[];
  /** `wire`: rebuilt from the api-request records; `messages`: approximated from the message records; `qwen`: a Qwen Code chat. */
  source: 'wire' | 'messages' | 'qwen';
  /**
   * The tokens the session's cache should hold for this prefix (up to its last marker): the
   * last main-chain assistant record's cache read + cache write, when it reports usage.
   */
  expectedCachedTokens: number | undefined;
  /**
   * The `max_tokens` forks need, when the parent's own setting requires one: a thinking budget
   * (`thinking.budget_tokens`, part of the cached prefix) must stay below `max_tokens`, so the
   * session's own `max_tokens` is kept (a Claude Code session on claude-haiku-4-5 sends a
   * 31,999-token budget with 32,000; forks sent the default 8,192 and every one got a 400).
   */
  maxTokens?: number | undefined;
  /** Where the session's requests went (its last `api-request-route` record), when it says. */
  route?: SessionRoute | undefined;
}

function expectedCache(lines: readonly Line[]): number | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const r = lines[i]!.value as {
      type?: unknown;
      isSidechain?: unknown;
      message?: { usage?: Record<string, unknown> };
    };
    if (r.type !== 'assistant' || r.isSidechain === true) continue;
    const u = r.message?.usage;
    if (!u) return undefined;
    const n = Number(u['cache_read_input_tokens'] ?? 0) + Number(u['cache_creation_input_tokens'] ?? 0);
    return Number.isFinite(n) && n > 0 ? n : undefined;
  }
  return undefined;
}

/**
 * Rebuild a parent snapshot from a Claude Code session transcript: the system prompt and
 * tools when a record carries them (top-level `system` / `tools`), the messages in file
 * order with sidechain records dropped and same-role records merged, and the history
 * restarted at a compaction boundary (what the model saw after `/compact`). Claude Code does
 * not store its system prompt or tool definitions in transcripts: without them the fork
 * agent's own prompt and forkcache's tools are used, and the notes say so. The model is the
 * last assistant record's, unless `options.model` is given.
 *
 * @throws ForkcacheError `TRANSCRIPT_INVALID`, naming the file and line.
 */
export function importClaudeTranscript(path: string, options: { model?: string | undefined } = {}): ImportedParent {
  const notes: string[] = [];
  const lines = readJsonl(path, 'Claude Code session', CODES);
  const first = lines[0]?.value as Record<string, unknown> | undefined;
  if (first?.['type'] === 'fork-context-ref') {
    throw new ForkcacheError(
      'TRANSCRIPT_INVALID',
      `${path}: this is a fork child of session ${String(first['parentSessionId'])}; import the parent (the session's own .jsonl)`,
      { data: { file: path, line: 1 } },
    );
  }
  const unknown = new Map<string, number>();
  for (const { value } of lines) {
    const type = String((value as { type?: unknown }).type);
    if (!KNOWN_TYPES.has(type)) unknown.set(type, (unknown.get(type) ?? 0) + 1);
  }
  if (unknown.size > 0)
    notes.push(
      `skipped ${[...unknown.values()].reduce((a, b) => a + b, 0)} record(s) of type(s) not known here: ${[...unknown].map(([t, n]) => `${t} (${n})`).join(', ')}`,
    );
  if (isQwenChat(lines)) return { ...importQwenChat(path, lines, options), source: 'qwen' };
  const expectedCachedTokens = expectedCache(lines);
  const route = sessionRoute(path, lines);
  if (route) notes.push(routeNote(route));
  const wire = rebuildWireRequest(path, lines);
  if (wire) return { ...fromWire(path, wire, options.model, notes, expectedCachedTokens), route };
  notes.push(
    'no api-request records (a Claude Code older than 2.1.3xx): the parent is approximated from the message records (assistant blocks grouped by message.id); reminders rendered from attachments are missing, so the prefix will differ from what the session cached',
  );
  const snapshot = fromMessages(path, lines, options, notes);
  return { snapshot, notes, source: 'messages', expectedCachedTokens, route };
}

function fromWire(
  path: string,
  wire: ReturnType<typeof rebuildWireRequest> & object,
  model: string | undefined,
  notes: string[],
  expectedCachedTokens: number | undefined,
): ImportedParent {
  const request = model ? { ...wire.request, model } : wire.request;
  if (model && model !== wire.request['model'])
    notes.push(
      `model ${model} instead of the session's ${String(wire.request['model'])}: the forks cannot read its cache`,
    );
  // Every param that changes what the model reads is kept (context_management too, as Claude Code's own forks do).
  try {
    const snapshot = captureSnapshot(request);
    const budget = (snapshot.thinking as { budget_tokens?: unknown } | undefined)?.budget_tokens;
    const maxTokens = typeof budget === 'number' && wire.maxTokens !== undefined ? wire.maxTokens : undefined;
    if (maxTokens !== undefined)
      notes.push(`max_tokens ${maxTokens}, the session's own: its thinking budget (${budget}) must stay below it`);
    return {
      snapshot,
      notes: [...notes, ...wire.notes],
      source: 'wire',
      expectedCachedTokens,
      ...(maxTokens === undefined ? {} : { maxTokens }),
    };
  } catch (err) {
    if ((err as ForkcacheError).code !== 'SNAPSHOT_INVALID') throw err;
    throw new ForkcacheError(
      'TRANSCRIPT_INVALID',
      `${path}:${wire.line}: api-request record: cannot use this request as a parent: ${(err as Error).message.replace(/^snapshot: /, '')}`,
      { cause: err, data: { file: path, line: wire.line } },
    );
  }
}
