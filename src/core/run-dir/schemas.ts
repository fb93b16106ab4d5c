import { z } from 'zod';
import { usageInputSchema } from '../ledger/usage.ts';

/*
 * Schemas of the run directory's records as readers check them (the manifest's is in
 * manifest.ts, the transcripts' in transcript-reader.ts). Loose objects: only the fields
 * readers rely on are checked, and unknown fields and unknown record types pass, because the
 * formats will gain both. The engine writes these records (fan-out.ts, writers.ts).
 */

const ms = z.number().finite();
const count = z.number().int().nonnegative();

export const summarySchema = z.looseObject({
  forks: z.looseObject({ total: count, completed: count, failed: count, cancelled: count }),
  cache: z.looseObject({
    fanout_input_tokens: count,
    fanout_cache_read_input_tokens: count,
    fanout_hit_ratio: z.number(),
    max_fanout_reads: count,
    cache_efficiency: z.number(),
    by_fanout: z
      .array(z.looseObject({ key: z.string().optional(), shared_prefix_tokens: count, uncached_at_start: count }))
      .default([]),
  }),
  // Null when a request's model could not be priced (an id the catalogue does not know).
  cost_usd: z.looseObject({
    actual: z.number().nullable(),
    no_cache: z.number().nullable(),
    fresh_agents: z.number().nullable(),
  }),
  unpriced: z.looseObject({ requests: count, models: z.array(z.string()) }).optional(),
  warnings: z.array(z.string()).optional(),
  model_table_date: z.string().optional(),
  savings: z.looseObject({ vs_no_cache: z.number().nullable(), vs_fresh_agents: z.number().nullable() }),
  prefix: z.looseObject({
    shared_tokens: count.nullable(),
    drift_events: count,
    source: z.string().optional(),
    approx_tokens: count.optional(),
  }),
  warmups: count.optional(),
});

const requestSchema = z.looseObject({
  turn: count,
  usage: usageInputSchema,
  sentAt: ms,
  startedAt: ms,
  endedAt: ms,
  stopReason: z.string().nullish(),
});

/** The event records a report knows; anything else in events.jsonl is skipped. */
export const eventSchemas = {
  'fanout-start': z.looseObject({
    at: ms,
    forks: z.array(z.looseObject({ forkId: z.string(), directive: z.string() })).default([]),
  }),
  'fanout-end': z.looseObject({ at: ms }),
  'warmup-start': z.looseObject({ at: ms }),
  'warmup-end': z.looseObject({ at: ms, usage: usageInputSchema.optional() }),
  'fork-start': z.looseObject({ forkId: z.string(), at: ms }),
  'turn-start': z.looseObject({ forkId: z.string(), turn: count, at: ms }),
  'response-start': z.looseObject({ forkId: z.string(), turn: count, at: ms }),
  'turn-end': z.looseObject({ forkId: z.string(), turn: count, at: ms, request: requestSchema }),
  'tool-call': z.looseObject({
    forkId: z.string(),
    turn: count,
    at: ms,
    name: z.string(),
    isError: z.boolean().default(false),
    path: z.string().nullish(),
  }),
  'fork-restart': z.looseObject({ forkId: z.string(), at: ms, attempt: count.optional() }),
  // the rate-limit budget in use, sampled by the admission scheduler (the report draws it)
  budget: z.looseObject({
    at: ms,
    waiting: count.default(0),
    classes: z.array(
      z.looseObject({
        modelClass: z.string(),
        limits: z.looseObject({ rpm: z.number().nullish(), itpm: z.number().nullish(), otpm: z.number().nullish() }),
        used: z.looseObject({ rpm: z.number(), itpm: z.number(), otpm: z.number() }),
      }),
    ),
  }),
  'fork-end': z.looseObject({
    forkId: z.string(),
    at: ms,
    status: z.string(),
    turns: count.default(0),
    toolCalls: count.default(0),
    filesChanged: z.array(z.string()).default([]),
    error: z.looseObject({ code: z.string(), message: z.string() }).nullish(),
  }),
} as const;

export type EventSchemas = typeof eventSchemas;
export type RunEvent = {
  /** `shift`: ms added to the record's times to lay its pass after the one before (a resumed run's timeline). */
  [K in keyof EventSchemas]: { type: K; line: number; pass?: number; shift?: number } & z.output<EventSchemas[K]>;
}[keyof EventSchemas];
export type RunEventOf<K extends RunEvent['type']> = Extract<RunEvent, { type: K }>;
