import { z } from 'zod';
import { ForkcacheError } from '../util/errors.ts';
import { formatPath } from '../util/validation.ts';
import { findModel, type ModelEntry, type ModelCatalogue } from '../models/catalogue.ts';
import { fromParsedUsage, usageInputSchema, type Usage, type UsageInput } from './usage.ts';

/**
 * What a request was for. `parent`: a turn of a main agent. `warmup`: the `max_tokens: 0`
 * pre-warm an agent sends before fanning out (recorded under that agent's `forkId`).
 * `fork`: a turn of a fork child. `fresh`: a turn of an ordinary (non-fork) sub-agent.
 */
export type RequestKind = 'parent' | 'warmup' | 'fork' | 'fresh';

/** One request as the engine reports it to `UsageLedger.record`. */
export interface LedgerRecordInput {
  /** The agent that sent the request (for `warmup`: the agent that is fanning out). */
  forkId: string;
  /** The agent that started `forkId`; needed on an agent's first record, checked on later ones. */
  parentId?: string;
  kind: RequestKind;
  /** The agent's turn number (0 = its first request). */
  turn: number;
  model: string;
  usage: UsageInput;
  /** Tokens of the frozen shared prefix this request starts with (fan-out requests). */
  sharedPrefixTokens?: number;
  /**
   * Of `sharedPrefixTokens`, how many were already cached when the fan-out started. Optional:
   * when absent the ledger derives it from the parent's last request (see fan-out-cache.ts).
   */
  cachedPrefixTokens?: number;
  /** Input tokens this child would send as a fresh agent (fallback system + tools + directive). */
  freshInputTokens?: number;
  /** Of `freshInputTokens`, the fallback system prompt + tools every fresh agent of the fan-out shares. */
  freshHeadTokens?: number;
  /** The frozen prefix's id: groups fan-out requests when one agent fans out more than once. */
  prefixId?: string;
  /** Start of the request, epoch milliseconds (from the injected clock). */
  at: number;
  /**
   * `failed`: an attempt whose response began and then failed (billed, then retried). It counts
   * in every total; the fan-out metrics take a fork's first successful request.
   */
  attempt?: 'failed';
}

/** A validated record, as stored. `seq` is the order of arrival. */
export interface LedgerRecord {
  seq: number;
  forkId: string;
  parentId?: string;
  kind: RequestKind;
  turn: number;
  /** Canonical model id from the catalogue, or the id as sent when the catalogue does not know it. */
  model: string;
  usage: Usage;
  sharedPrefixTokens?: number;
  cachedPrefixTokens?: number;
  freshInputTokens?: number;
  freshHeadTokens?: number;
  prefixId?: string;
  at: number;
  attempt?: 'failed';
}

const tokens = z.number().int().nonnegative();

const recordSchema = z.strictObject({
  forkId: z.string().min(1),
  parentId: z.string().min(1).optional(),
  kind: z.enum(['parent', 'warmup', 'fork', 'fresh']),
  turn: tokens,
  model: z.string().min(1),
  usage: usageInputSchema,
  sharedPrefixTokens: tokens.optional(),
  cachedPrefixTokens: tokens.optional(),
  freshInputTokens: tokens.optional(),
  freshHeadTokens: tokens.optional(),
  prefixId: z.string().min(1).optional(),
  at: z.number().finite().nonnegative(),
  attempt: z.literal('failed').optional(),
});

function invalid(field: string, message: string): ForkcacheError {
  return new ForkcacheError('LEDGER_INVALID_RECORD', `ledger record ${field}: ${message}`, { data: { field } });
}

/**
 * Validate a record and resolve its model (undefined: an id the catalogue cannot price). Every failure is a `LEDGER_INVALID_RECORD` whose
 * message and `data.field` name the offending field (`usage.input_tokens`, `model`, ...).
 */
export function parseRecord(
  input: unknown,
  seq: number,
  table: ModelCatalogue,
): { record: LedgerRecord; info: ModelEntry | undefined } {
  const result = recordSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue ? formatPath(issue.path) : '(root)';
    throw invalid(path, issue?.message ?? 'invalid');
  }
  const raw = result.data;
  // An id the catalogue does not know is recorded as it is: its tokens count, its cost is null.
  const info = findModel(raw.model, table);
  const usage = fromParsedUsage(raw.usage, 'usage', 'LEDGER_INVALID_RECORD');
  if (raw.cachedPrefixTokens !== undefined && raw.cachedPrefixTokens > (raw.sharedPrefixTokens ?? 0)) {
    throw invalid(
      'cachedPrefixTokens',
      `${raw.cachedPrefixTokens} exceeds sharedPrefixTokens (${raw.sharedPrefixTokens ?? 'absent'})`,
    );
  }
  const record: LedgerRecord = {
    seq,
    forkId: raw.forkId,
    kind: raw.kind,
    turn: raw.turn,
    model: info?.id ?? raw.model,
    usage,
    at: raw.at,
  };
  // exactOptionalPropertyTypes: copy optional fields only when present.
  if (raw.parentId !== undefined) record.parentId = raw.parentId;
  if (raw.sharedPrefixTokens !== undefined) record.sharedPrefixTokens = raw.sharedPrefixTokens;
  if (raw.cachedPrefixTokens !== undefined) record.cachedPrefixTokens = raw.cachedPrefixTokens;
  if (raw.freshInputTokens !== undefined) record.freshInputTokens = raw.freshInputTokens;
  if (raw.freshHeadTokens !== undefined) record.freshHeadTokens = raw.freshHeadTokens;
  if (raw.prefixId !== undefined) record.prefixId = raw.prefixId;
  if (raw.attempt !== undefined) record.attempt = raw.attempt;
  return { record, info };
}
