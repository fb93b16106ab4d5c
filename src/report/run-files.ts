import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ForkcacheError } from '../errors.ts';
import { findModel } from '../models/catalogue.ts';
import { fromParsedUsage, type Usage, usageInputSchema } from '../ledger/usage.ts';
import { parseAt, readJsonFile, readJsonl, recordType } from './read-files.ts';

/*
 * The files of one fan-out directory, as the engine writes them (engine.ts, fan-out.ts,
 * transcript.ts). Schemas are loose objects: only the fields a report draws are checked, and
 * unknown fields and unknown record types pass, because the formats will gain both.
 */

const ms = z.number().finite();
const count = z.number().int().nonnegative();

const manifestSchema = z.looseObject({
  fanoutId: z.string().min(1),
  prefix: z.looseObject({ sha256: z.string().min(1), bytes: count, layout: z.string().optional(), ttl: z.string().optional(), headEnd: z.string().optional() }),
  directives: z.array(z.string()),
});

const summarySchema = z.looseObject({
  forks: z.looseObject({ total: count, completed: count, failed: count, cancelled: count }),
  cache: z.looseObject({
    fanout_input_tokens: count,
    fanout_cache_read_input_tokens: count,
    fanout_hit_ratio: z.number(),
    max_fanout_reads: count,
    cache_efficiency: z.number(),
    by_fanout: z.array(z.looseObject({ key: z.string().optional(), shared_prefix_tokens: count, uncached_at_start: count })).default([]),
  }),
  // Null when a request's model could not be priced (an id the catalogue does not know).
  cost_usd: z.looseObject({ actual: z.number().nullable(), no_cache: z.number().nullable(), fresh_agents: z.number().nullable() }),
  unpriced: z.looseObject({ requests: count, models: z.array(z.string()) }).optional(),
  warnings: z.array(z.string()).optional(),
  model_table_date: z.string().optional(),
  savings: z.looseObject({ vs_no_cache: z.number().nullable(), vs_fresh_agents: z.number().nullable() }),
  prefix: z.looseObject({ shared_tokens: count.nullable(), drift_events: count, source: z.string().optional(), approx_tokens: count.optional() }),
  warmups: count.optional(),
});

const requestSchema = z.looseObject({ turn: count, usage: usageInputSchema, sentAt: ms, startedAt: ms, endedAt: ms, stopReason: z.string().nullish() });

/** The event records a report knows; anything else in events.jsonl is skipped. */
const eventSchemas = {
  'fanout-start': z.looseObject({ at: ms, forks: z.array(z.looseObject({ forkId: z.string(), directive: z.string() })).default([]) }),
  'fanout-end': z.looseObject({ at: ms }),
  'warmup-start': z.looseObject({ at: ms }),
  'warmup-end': z.looseObject({ at: ms, usage: usageInputSchema.optional() }),
  'fork-start': z.looseObject({ forkId: z.string(), at: ms }),
  'turn-start': z.looseObject({ forkId: z.string(), turn: count, at: ms }),
  'response-start': z.looseObject({ forkId: z.string(), turn: count, at: ms }),
  'turn-end': z.looseObject({ forkId: z.string(), turn: count, at: ms, request: requestSchema }),
  'tool-call': z.looseObject({ forkId: z.string(), turn: count, at: ms, name: z.string(), isError: z.boolean().default(false), path: z.string().nullish() }),
  'fork-restart': z.looseObject({ forkId: z.string(), at: ms, attempt: count.optional() }),
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

type EventSchemas = typeof eventSchemas;
export type RunEvent = { [K in keyof EventSchemas]: { type: K; line: number } & z.output<EventSchemas[K]> }[keyof EventSchemas];
export type RunEventOf<K extends RunEvent['type']> = Extract<RunEvent, { type: K }>;

const transcriptSchemas = {
  start: z.looseObject({ forkId: z.string(), prefixSha256: z.string(), directive: z.string() }),
  end: z.looseObject({ status: z.string(), turns: count, toolCalls: count, finalText: z.string() }),
} as const;

export interface TranscriptFacts {
  path: string;
  prefixSha256: string | undefined;
  finalText: string | undefined;
  status: string | undefined;
}

export interface FanOutFiles {
  dir: string;
  manifest: z.output<typeof manifestSchema>;
  /** Undefined when the run did not finish (the engine writes it last). */
  summary: z.output<typeof summarySchema> | undefined;
  /** The parent's model, from snapshot.json (prices the requests). */
  model: string | undefined;
  /** Records of the last run in events.jsonl (an id reused by a later run appends to it). */
  events: RunEvent[];
  /** By fork id; absent when a fork never reached a worker (e.g. cancelled while queued). */
  transcripts: Map<string, TranscriptFacts>;
  /** What was missing or odd but did not stop the report. */
  notes: string[];
}

/** Usage as the ledger normalises it; a bad TTL split names the file and line. */
export function usageAt(raw: z.output<typeof usageInputSchema>, where: string): Usage {
  return fromParsedUsage(raw, `${where}: usage`, 'REPORT_FILE_INVALID');
}

/** Keep only the records after the last `marker` record (a file appended to by a rerun). */
function lastRun<T extends { value: unknown }>(lines: T[], marker: string): { lines: T[]; runs: number } {
  const starts = lines.flatMap((l, i) => (recordType(l.value) === marker ? [i] : []));
  return { lines: lines.slice(starts.at(-1) ?? 0), runs: starts.length };
}

function readEvents(path: string, notes: string[]): RunEvent[] {
  const { lines, runs } = lastRun(readJsonl(path), 'fanout-start');
  if (runs === 0) throw new ForkcacheError('REPORT_FILE_INVALID', `${path}: no fanout-start record`, { data: { file: path } });
  if (runs > 1) notes.push(`events.jsonl holds ${runs} runs of this fan-out id (a resume or a rerun appends): the report shows the last one`);
  const events: RunEvent[] = [];
  for (const { line, value } of lines) {
    const type = recordType(value);
    if (type === undefined || !(type in eventSchemas)) continue;
    const parsed = parseAt(eventSchemas[type as keyof EventSchemas], value, `${path}:${line}`);
    events.push({ ...parsed, type, line } as RunEvent);
  }
  return events;
}

function readTranscript(path: string): TranscriptFacts {
  const { lines } = lastRun(readJsonl(path), 'start');
  const facts: TranscriptFacts = { path, prefixSha256: undefined, finalText: undefined, status: undefined };
  for (const { line, value } of lines) {
    const type = recordType(value);
    if (type === 'start') facts.prefixSha256 = parseAt(transcriptSchemas.start, value, `${path}:${line}`).prefixSha256;
    else if (type === 'end') {
      const end = parseAt(transcriptSchemas.end, value, `${path}:${line}`);
      facts.finalText = end.finalText;
      facts.status = end.status;
    }
  }
  return facts;
}

/**
 * Read one fan-out directory. `manifest.json` and `events.jsonl` are required; `summary.json`
 * (written when the fan-out settles), `snapshot.json` and the transcripts are used when
 * present, and their absence is noted. A malformed file of any kind is an error naming it.
 */
export function readFanOutDir(dir: string): FanOutFiles {
  const notes: string[] = [];
  const manifestPath = join(dir, 'manifest.json');
  const manifest = parseAt(manifestSchema, readJsonFile(manifestPath), manifestPath);
  const events = readEvents(join(dir, 'events.jsonl'), notes);
  const summaryPath = join(dir, 'summary.json');
  let summary: FanOutFiles['summary'];
  if (existsSync(summaryPath)) summary = parseAt(summarySchema, readJsonFile(summaryPath), summaryPath);
  else notes.push('summary.json is missing (the fan-out did not settle): totals and baselines are not shown');
  const snapshotPath = join(dir, 'snapshot.json');
  let model: string | undefined;
  if (existsSync(snapshotPath)) model = parseAt(z.looseObject({ model: z.string().min(1) }), readJsonFile(snapshotPath), snapshotPath).model;
  else notes.push('snapshot.json is missing: requests are not priced');
  if (model && !findModel(model)) notes.push(`model "${model}" is not in the model table: requests are not priced`);
  const transcripts = new Map<string, TranscriptFacts>();
  const start = events.find((e): e is RunEventOf<'fanout-start'> => e.type === 'fanout-start');
  for (const { forkId } of start?.forks ?? []) {
    const path = join(dir, 'forks', `${forkId}.jsonl`);
    if (existsSync(path)) transcripts.set(forkId, readTranscript(path));
  }
  return { dir, manifest, summary, model, events, transcripts, notes };
}
