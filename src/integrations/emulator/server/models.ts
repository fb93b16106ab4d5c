import type { ModelInfo } from '@anthropic-ai/sdk/resources/models';
import { findModel, type ModelEntry } from '../../../core/models/catalogue.ts';
import { statusAt } from '../../../core/models/status.ts';
import { ApiError, invalidRequest } from '../api-error.ts';
import type { EmulatorCore } from './core.ts';

/**
 * `GET /v1/models` and `GET /v1/models/{id}`, answered from the emulator's model catalogue at
 * its clock's date, in the shape of the SDK's `ModelInfo` (`@anthropic-ai/sdk` 1.14).
 */

type Lifecycle = ModelInfo['lifecycle'];
const LIFECYCLES: readonly Lifecycle[] = ['active', 'deprecated', 'retired'];
/** The API's default: retired models are listed only when asked for by name. */
const DEFAULT_LIFECYCLES: readonly Lifecycle[] = ['active', 'deprecated'];
const LINES = ['haiku', 'sonnet', 'opus', 'fable', 'mythos'] as const;
// The SDK documents an epoch value for "release date unknown"; the catalogue records none.
const UNKNOWN_RELEASE = '1970-01-01T00:00:00Z';

function lifecycleAt(core: EmulatorCore, entry: ModelEntry): Lifecycle {
  const status = statusAt(entry, core.clock.now());
  return status === 'current' || status === 'legacy' ? 'active' : status;
}

/** `claude-opus-5-5` → `Claude Opus 5.5`, `claude-3-5-haiku` → `Claude 3.5 Haiku`. */
export function displayName(id: string): string {
  return id
    .split('-')
    .reduce<string[]>((words, part) => {
      const last = words[words.length - 1];
      if (/^\d+$/.test(part) && last !== undefined && /^\d+(\.\d+)*$/.test(last))
        words[words.length - 1] = `${last}.${part}`;
      else words.push(part.charAt(0).toUpperCase() + part.slice(1));
      return words;
    }, [])
    .join(' ');
}

function modelInfo(core: EmulatorCore, entry: ModelEntry): ModelInfo {
  const lifecycle = lifecycleAt(core, entry);
  const line = LINES.find((name) => entry.id.split('-').includes(name)) ?? null;
  return {
    type: 'model',
    id: entry.id,
    display_name: displayName(entry.id),
    created_at: UNKNOWN_RELEASE,
    lifecycle,
    line,
    // The catalogue keeps when a model ends, not when it was deprecated.
    deprecated_at: null,
    retires_at: lifecycle !== 'active' && entry.endOfLife !== null ? `${entry.endOfLife}T00:00:00Z` : null,
    max_input_tokens: entry.contextWindow,
    max_tokens: entry.maxOutputTokens,
    // Null (which the type allows) rather than a guess: the catalogue knows a few request
    // constraints, not the full capability map the API reports.
    capabilities: null,
  };
}

function notFound(id: string): ApiError {
  return new ApiError('EMULATOR_UNKNOWN_MODEL', 'not_found_error', `model: ${id}`, { model: id });
}

/**
 * `GET /v1/models/{id}`: an alias or dated id answers with the canonical id. Unknown and
 * retired ids are a 404, as `POST /v1/messages` answers them.
 */
export function retrieveModel(core: EmulatorCore, id: string): ModelInfo {
  const entry = findModel(id, core.modelTable);
  if (!entry || lifecycleAt(core, entry) === 'retired') throw notFound(id);
  return modelInfo(core, entry);
}

function limitOf(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null) return 20;
  const limit = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= 1000)) throw invalidRequest(`limit: expected an integer from 1 to 1000 (got "${raw}")`);
  return limit;
}

/** `lifecycle[]=retired` (the SDK's bracket form) or `lifecycle=retired`, repeated. */
function lifecyclesOf(query: URLSearchParams): readonly Lifecycle[] {
  const given = [...query.getAll('lifecycle[]'), ...query.getAll('lifecycle')];
  if (given.length === 0) return DEFAULT_LIFECYCLES;
  for (const value of given) {
    if (!(LIFECYCLES as readonly string[]).includes(value))
      throw invalidRequest(`lifecycle: expected active, deprecated or retired (got "${value}")`);
  }
  return given as Lifecycle[];
}

interface ModelsPage {
  data: ModelInfo[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/**
 * `GET /v1/models`: newest first (the catalogue's order), `limit` per page, paged forwards by
 * `after_id` or backwards by `before_id`, as the SDK's `Page` follows them.
 */
export function listModels(core: EmulatorCore, query: URLSearchParams): ModelsPage {
  const limit = limitOf(query);
  const lifecycles = lifecyclesOf(query);
  const all = core.modelTable.models
    .map((entry) => modelInfo(core, entry))
    .filter((m) => lifecycles.includes(m.lifecycle));
  const afterId = query.get('after_id');
  const beforeId = query.get('before_id');
  if (afterId !== null && beforeId !== null) throw invalidRequest('after_id, before_id: give at most one of them');
  const cursor = (name: string, id: string): number => {
    const index = all.findIndex((m) => m.id === id);
    if (index < 0) throw invalidRequest(`${name}: "${id}" is not a model id of this list`);
    return index;
  };
  let data: ModelInfo[];
  let hasMore: boolean;
  if (beforeId !== null) {
    const end = cursor('before_id', beforeId);
    data = all.slice(Math.max(0, end - limit), end);
    hasMore = end - limit > 0;
  } else {
    const start = afterId === null ? 0 : cursor('after_id', afterId) + 1;
    data = all.slice(start, start + limit);
    hasMore = start + limit < all.length;
  }
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
}
