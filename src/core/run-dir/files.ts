import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/*
 * The files of one run directory (`RUNS_DIR/<fanOutId>/`). The names live here only; the
 * engine writes them, resume, the report and the distributed hosts read them.
 */
export const MANIFEST_FILE = 'manifest.json';
export const SNAPSHOT_FILE = 'snapshot.json';
export const SUMMARY_FILE = 'summary.json';
export const EVENTS_FILE = 'events.jsonl';
export const FORKS_DIR = 'forks';
/** The MACs of the manifest and the snapshot (run-mac.ts); transcripts carry theirs per record. */
export const SIGNATURE_FILE = 'signature.json';
/** The files `resume` trusts besides the transcripts: signed when written. */
export const SIGNED_FILES = [MANIFEST_FILE, SNAPSHOT_FILE] as const;

/** A fork's JSONL transcript in its run directory. */
export function transcriptPath(fanOutDir: string, forkId: string): string {
  return join(fanOutDir, FORKS_DIR, `${forkId}.jsonl`);
}

/** The runs directory a transcript lies in (`RUNS_DIR/<fanOutId>/forks/<forkId>.jsonl`), if any. */
export function runsDirOf(transcript: string | undefined): string | undefined {
  return transcript === undefined ? undefined : dirname(dirname(dirname(transcript)));
}

/** A run directory is one with a manifest. */
export function isFanOutDir(dir: string): boolean {
  return existsSync(join(dir, MANIFEST_FILE));
}
