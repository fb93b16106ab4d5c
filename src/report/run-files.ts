import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ForkcacheError } from '../errors.ts';
import { findModel } from '../models/catalogue.ts';
import { fromParsedUsage, type Usage, type usageInputSchema } from '../ledger/usage.ts';
import { EVENTS_FILE, MANIFEST_FILE, SNAPSHOT_FILE, SUMMARY_FILE, transcriptPath } from '../run-dir/files.ts';
import { recordType } from '../run-dir/jsonl.ts';
import { type ManifestCore, manifestCoreSchema } from '../run-dir/manifest.ts';
import { eventSchemas, type EventSchemas, type RunEvent, type RunEventOf, summarySchema } from '../run-dir/schemas.ts';
import { readTranscript } from '../run-dir/transcript-reader.ts';
import { parseAt, readReportJson, readReportJsonl } from './read-files.ts';

/*
 * One fan-out directory as a report sees it, read with the run directory's readers and
 * schemas (src/run-dir/).
 */

export interface TranscriptFacts {
  path: string;
  prefixSha256: string | undefined;
  finalText: string | undefined;
  status: string | undefined;
}

export interface FanOutFiles {
  dir: string;
  manifest: ManifestCore;
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
  const { lines, runs } = lastRun(readReportJsonl(path, 'fan-out events'), 'fanout-start');
  if (runs === 0)
    throw new ForkcacheError('REPORT_FILE_INVALID', `${path}: no fanout-start record`, { data: { file: path } });
  if (runs > 1)
    notes.push(
      `events.jsonl holds ${runs} runs of this fan-out id (a resume or a rerun appends): the report shows the last one`,
    );
  const events: RunEvent[] = [];
  for (const { line, value } of lines) {
    const type = recordType(value);
    if (type === undefined || !(type in eventSchemas)) continue;
    const parsed = parseAt(eventSchemas[type as keyof EventSchemas], value, `${path}:${line}`);
    events.push({ ...parsed, type, line } as RunEvent);
  }
  return events;
}

/** What a report shows of a transcript, from the run directory's one transcript reader. */
function transcriptFacts(path: string): TranscriptFacts {
  const transcript = readTranscript(path, 'REPORT_FILE_INVALID');
  return {
    path,
    prefixSha256: transcript.prefixSha256,
    finalText: transcript.end?.finalText,
    status: transcript.end?.status,
  };
}

/**
 * Read one fan-out directory. `manifest.json` and `events.jsonl` are required; `summary.json`
 * (written when the fan-out settles), `snapshot.json` and the transcripts are used when
 * present, and their absence is noted. A malformed file of any kind is an error naming it.
 */
export function readReportFiles(dir: string): FanOutFiles {
  const notes: string[] = [];
  const manifestPath = join(dir, MANIFEST_FILE);
  const manifest = parseAt(manifestCoreSchema, readReportJson(manifestPath, 'fan-out manifest'), manifestPath);
  const events = readEvents(join(dir, EVENTS_FILE), notes);
  const summaryPath = join(dir, SUMMARY_FILE);
  let summary: FanOutFiles['summary'];
  if (existsSync(summaryPath))
    summary = parseAt(summarySchema, readReportJson(summaryPath, 'fan-out summary'), summaryPath);
  else notes.push('summary.json is missing (the fan-out did not settle): totals and baselines are not shown');
  const snapshotPath = join(dir, SNAPSHOT_FILE);
  let model: string | undefined;
  if (existsSync(snapshotPath))
    model = parseAt(
      z.looseObject({ model: z.string().min(1) }),
      readReportJson(snapshotPath, 'parent snapshot'),
      snapshotPath,
    ).model;
  else notes.push('snapshot.json is missing: requests are not priced');
  if (model && !findModel(model)) notes.push(`model "${model}" is not in the model table: requests are not priced`);
  const transcripts = new Map<string, TranscriptFacts>();
  const start = events.find((e): e is RunEventOf<'fanout-start'> => e.type === 'fanout-start');
  for (const { forkId } of start?.forks ?? []) {
    const path = transcriptPath(dir, forkId);
    if (existsSync(path)) transcripts.set(forkId, transcriptFacts(path));
  }
  return { dir, manifest, summary, model, events, transcripts, notes };
}
