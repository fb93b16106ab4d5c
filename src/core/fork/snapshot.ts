import { createHash } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import { findJsonShapeProblem } from '../util/json-shape.ts';
import { ForkcacheError } from '../util/errors.ts';
import { MAX_CACHE_MARKERS } from '../wire/cache.ts';
import { parseOrThrow } from '../util/validation.ts';
import { checkHistory, markerPaths } from './history.ts';
import { snapshotInputSchema } from './snapshot-schema.ts';
import { deepFreeze } from '../util/deep-freeze.ts';

/**
 * Settings of the parent's request that a child keeps, in the fixed order they are serialized:
 * the generation settings that are part of the cache key (changing any of them invalidates the
 * messages part of the cache), the calling session's `metadata`, and what changes what the model
 * reads or which cache it reads: `context_management` (edits the API makes to the context before
 * the model sees it; Claude Code's own fork children send the parent's unchanged) and `speed`
 * (a change of it is a cache miss, `model_changed`). Values keep the parent's bytes.
 */
export const CACHE_SETTING_KEYS = [
  'tool_choice',
  'thinking',
  'output_config',
  'temperature',
  'top_p',
  'top_k',
  'metadata',
  'context_management',
  'speed',
] as const;

/**
 * The parent's last request, by value: what a fork child inherits (the "cache-safe params").
 * Captured once, deep-cloned, deeply frozen. Nested objects keep the parent's own key order,
 * so a child's bytes match what the parent sent and the parent's warm cache entries hit.
 */
export interface ParentSnapshot {
  readonly model: string;
  /** The rendered system prompt exactly as sent; never re-rendered. */
  readonly system?: string | readonly Anthropic.TextBlockParam[];
  /** The tool array exactly as sent, same order. */
  readonly tools?: readonly Anthropic.ToolUnion[];
  readonly tool_choice?: Anthropic.ToolChoice;
  readonly thinking?: Anthropic.ThinkingConfigParam;
  readonly output_config?: Anthropic.OutputConfig;
  /** Sampling settings, kept only where the parent sent them (API versions before 2026-10-21). */
  readonly temperature?: number;
  readonly top_p?: number;
  readonly top_k?: number;
  readonly metadata?: Anthropic.Metadata;
  /** Context edits the API applies before the model reads (Claude Code: `clear_thinking_…`), as the parent sent them. */
  readonly context_management?: Readonly<Record<string, unknown>> | null;
  /** `standard` or `fast`: another speed is another cache (`model_changed`). */
  readonly speed?: string | null;
  readonly messages: readonly Anthropic.MessageParam[];
  /** Changes whenever the system prompt or the tool array changes (16 hex chars of sha256). */
  readonly version: string;
  /** `fallback`: there was no parent request; forks run without sharing a parent's cache. */
  readonly source: 'parent' | 'fallback';
}

/** Deep clone through JSON: drops `undefined`, keeps key order; the wire sees the same. */
function cloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function snapshotVersion(system: unknown, tools: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([system ?? null, tools ?? []]))
    .digest('hex')
    .slice(0, 16);
}

/**
 * Capture a parent request (a `MessageCreateParams`-shaped object) as a frozen snapshot.
 * Per-request fields (`max_tokens`, `stream`, `stop_sequences`, …) are dropped: they are not
 * part of the cached prefix and each child sets its own.
 *
 * @throws ForkcacheError `SNAPSHOT_INVALID`, naming the path (`messages[3].content[1].tool_use_id: …`).
 */
export function captureSnapshot(request: unknown): ParentSnapshot {
  const problem = findJsonShapeProblem(request);
  if (problem)
    throw new ForkcacheError('SNAPSHOT_INVALID', `snapshot: ${problem.path}: ${problem.message}`, {
      data: { path: problem.path },
    });
  parseOrThrow(snapshotInputSchema, request, 'SNAPSHOT_INVALID', 'snapshot');
  const input = cloneJson(request as Record<string, unknown>);
  const messages = input['messages'] as Anthropic.MessageParam[];
  checkHistory(messages, { allowDanglingAtEnd: true });
  const out: Record<string, unknown> = { model: input['model'] };
  if (input['system'] !== undefined) out['system'] = input['system'];
  if (input['tools'] !== undefined) out['tools'] = input['tools'];
  for (const key of CACHE_SETTING_KEYS) if (input[key] !== undefined) out[key] = input[key];
  out['messages'] = messages;
  out['version'] = snapshotVersion(input['system'], input['tools']);
  out['source'] = 'parent';
  checkToolNames(out['tools'] as { name: string }[] | undefined);
  checkMarkerCount(out as unknown as ParentSnapshot);
  return deepFreeze(out as unknown as ParentSnapshot);
}

function checkToolNames(tools: readonly { name: string }[] | undefined): void {
  const seen = new Map<string, number>();
  tools?.forEach((tool, i) => {
    const first = seen.get(tool.name);
    if (first !== undefined) {
      throw new ForkcacheError(
        'SNAPSHOT_INVALID',
        `snapshot: tools[${i}].name: duplicate tool name "${tool.name}" (also tools[${first}])`,
        {
          data: { path: `tools[${i}].name` },
        },
      );
    }
    seen.set(tool.name, i);
  });
}

/** The API's rule, checked early: a parent with more than 4 markers could never have been sent. */
function checkMarkerCount(snapshot: ParentSnapshot): void {
  const paths = markerPaths(snapshot);
  if (paths.length > MAX_CACHE_MARKERS) {
    throw new ForkcacheError(
      'SNAPSHOT_INVALID',
      `snapshot: cache_control: a maximum of 4 blocks with cache_control may be provided. Found ${paths.length} (${paths.join(', ')})`,
      { data: { path: 'cache_control', markers: paths } },
    );
  }
}

interface FallbackOptions {
  model: string;
  /** The fork agent's own fallback system prompt (see `FORK_FALLBACK_SYSTEM_PROMPT`). */
  system: string | Anthropic.TextBlockParam[];
  /** The tool registry's declarations. */
  tools: readonly Anthropic.ToolUnion[];
}

/**
 * Graceful degradation for the first turn: no parent request exists yet, so a fork runs on
 * the fork agent's own system prompt and the registry's tools. It works, without sharing a
 * parent's cache (siblings still share this head with each other).
 */
export function fallbackSnapshot(options: FallbackOptions): ParentSnapshot {
  const snapshot = captureSnapshot({
    model: options.model,
    system: options.system,
    tools: options.tools,
    messages: [],
  });
  return deepFreeze({ ...snapshot, source: 'fallback' as const });
}

/** The parent's snapshot when there is one, else the fallback (with `source: 'fallback'`). */
export function snapshotOrFallback(snapshot: ParentSnapshot | undefined, fallback: FallbackOptions): ParentSnapshot {
  return snapshot ?? fallbackSnapshot(fallback);
}
