import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { findModel } from '../../core/models/catalogue.ts';
import { fromParsedUsage, type Usage, type usageInputSchema } from '../../core/ledger/usage.ts';
import { EVENTS_FILE, MANIFEST_FILE, SNAPSHOT_FILE, SUMMARY_FILE, transcriptPath } from '../../core/run-dir/files.ts';
import { recordType } from '../../core/run-dir/jsonl.ts';
import { splitPasses } from '../../core/run-dir/passes.ts';
import { type ManifestCore, manifestCoreSchema } from '../../core/run-dir/manifest.ts';
import {
  eventSchemas,
  type EventSchemas,
  type RunEvent,
  type RunEventOf,
  summarySchema,
} from '../../core/run-dir/schemas.ts';
import { readTranscript } from '../../core/run-dir/transcript-reader.ts';
import { parseAt, readReportJson, readReportJsonl } from './read-files.ts';

/*
 * One run directory as a report sees it, read with the run directory's readers and
 * schemas (src/core/run-dir/).
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
  /** Records of every pass in events.jsonl (a resume appends to it), on one timeline. */
  events: RunEvent[];
  /** Where each pass begins on that timeline (one for a run never resumed). */
  passes: PassMark[];
  /** By fork id; absent when a fork never reached a worker (e.g. cancelled while queued). */
  transcripts: Map<string, TranscriptFacts>;
  /** What was missing or odd but did not stop the report. */
  notes: string[];
}

/** A pass's start on the report's timeline (ms since the first pass began) and on the clock. */
export interface PassMark {
  index: number;
  startMs: number;
  startedAt: number;
}

/** Usage as the ledger normalises it; a bad TTL split names the file and line. */
export function usageAt(raw: z.output<typeof usageInputSchema>, where: string): Usage {
  return fromParsedUsage(raw, `${where}: usage`, 'REPORT_FILE_INVALID');
}

/**
 * Every pass of the fan-out (the run and each resume) as one timeline: each pass is
 * laid right after the one before (the hours between a Ctrl-C and a resume are left out; each
 * record keeps its `shift` so prices use the real date), and a fork that ended in an earlier
 * pass is not ended again by the resume's replay of its result.
 */
function readEvents(path: string, notes: string[]): { events: RunEvent[]; passes: PassMark[] } {
  const passes = splitPasses(readReportJsonl(path, 'fan-out events'));
  if (passes.length === 0)
    throw new ForkcacheError('REPORT_FILE_INVALID', `${path}: no fanout-start record`, { data: { file: path } });
  if (passes.length > 1)
    notes.push(
      `${passes.length} passes (the run and ${passes.length - 1} resume${passes.length > 2 ? 's' : ''}), combined: the timeline leaves out the time between them; a dashed line marks where each resume began`,
    );
  const events: RunEvent[] = [];
  const marks: PassMark[] = [];
  const ended = new Set<string>();
  const first = passes[0]!.startedAt;
  let offset = first;
  for (const pass of passes) {
    const shift = offset - pass.startedAt;
    marks.push({ index: pass.index, startMs: offset - first, startedAt: pass.startedAt });
    const startedHere = new Set(
      pass.lines
        .filter((l) => recordType(l.value) === 'fork-start')
        .map((l) => (l.value as { forkId?: unknown }).forkId),
    );
    const endedHere: string[] = [];
    for (const { line, value } of pass.lines) {
      const type = recordType(value);
      if (type === undefined || !(type in eventSchemas)) continue;
      const parsed = parseAt(eventSchemas[type as keyof EventSchemas], value, `${path}:${line}`) as Record<
        string,
        unknown
      >;
      const forkId = parsed['forkId'] as string | undefined;
      if (type === 'fork-end' && forkId !== undefined) {
        if (ended.has(forkId) && !startedHere.has(forkId)) continue; // finished before: the resume only replays it
        endedHere.push(forkId);
      }
      events.push(shifted({ ...parsed, type, line, pass: pass.index }, shift) as RunEvent);
    }
    for (const id of endedHere) ended.add(id);
    offset += pass.endedAt - pass.startedAt;
  }
  return { events, passes: marks };
}

/** A record's times moved by `shift` ms (its request's too), remembering the shift. */
function shifted(event: Record<string, unknown>, shift: number): Record<string, unknown> {
  if (shift === 0) return event;
  const out: Record<string, unknown> = { ...event, shift };
  if (typeof out['at'] === 'number') out['at'] = out['at'] + shift;
  const request = out['request'] as Record<string, unknown> | undefined;
  if (request)
    out['request'] = {
      ...request,
      ...Object.fromEntries(
        (['sentAt', 'startedAt', 'endedAt'] as const).map((k) => [k, (request[k] as number) + shift]),
      ),
    };
  return out;
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
 * Read one run directory. `manifest.json` and `events.jsonl` are required; `summary.json`
 * (written when the fan-out settles), `snapshot.json` and the transcripts are used when
 * present, and their absence is noted. A malformed file of any kind is an error naming it.
 */
export function readReportFiles(dir: string): FanOutFiles {
  const notes: string[] = [];
  const manifestPath = join(dir, MANIFEST_FILE);
  const manifest = parseAt(manifestCoreSchema, readReportJson(manifestPath, 'fan-out manifest'), manifestPath);
  const { events, passes } = readEvents(join(dir, EVENTS_FILE), notes);
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
  return { dir, manifest, summary, model, events, passes, transcripts, notes };
}
