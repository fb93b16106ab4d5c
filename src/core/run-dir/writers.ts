import { createWriteStream, type WriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENTS_FILE, SUMMARY_FILE } from './files.ts';

/*
 * The run directory's other writers (the manifest's is in manifest.ts, the transcripts' in
 * transcript.ts). The engine calls them; nothing else writes into a run directory.
 */

/**
 * The fan-out's event log (`events.jsonl`), appended one JSON line per record: what reports
 * draw timelines from. Its errors are swallowed: a full disk or a deleted run directory must
 * not crash the run.
 */
export function openEventLog(fanOutDir: string): WriteStream {
  const log = createWriteStream(join(fanOutDir, EVENTS_FILE), { flags: 'a' });
  log.on('error', () => undefined);
  return log;
}

/** `summary.json`, written when the fan-out settles (a report notes its absence). */
export function writeSummary(fanOutDir: string, summary: unknown): void {
  writeFileSync(join(fanOutDir, SUMMARY_FILE), `${JSON.stringify(summary, null, 2)}\n`);
}
