import { appendFileSync, existsSync, mkdirSync, readFileSync, truncateSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TranscriptSink } from '../loop/transcript-sink.ts';
import type { WireError } from '../util/errors.ts';
import type { CheckRecord, ForkOutcome, LoopPrompt } from '../loop/types.ts';
import { chainAfter, chainSeed, signLine } from './run-mac.ts';
import type { RunKey } from './run-key.ts';

/** One line of a fork's JSONL transcript. `v` is the format version. */
export type TranscriptRecord =
  | { v: 1; type: 'start'; forkId: string; prefixSha256: string; directive: string; at: string }
  | { v: 1; type: 'request-start'; turn: number; attempt: number }
  | { v: 1; type: 'attempt'; turn: number; attempt: number; status: 'billed' | 'not-billed'; request?: unknown }
  | { v: 1; type: 'turn'; turn: number; assistant: unknown; request: unknown }
  | { v: 1; type: 'tool-start'; turn: number; id: string; name: string; input: unknown }
  | { v: 1; type: 'tool-end'; turn: number; id: string; isError: boolean; content: string }
  /** A user turn the loop added after turn `turn`: a continuation, a failed check's output, a retry. */
  | ({ v: 1; type: 'prompt'; turn: number } & LoopPrompt)
  /** The plan's check ran after the fork reported done on turn `turn`. */
  | ({ v: 1; type: 'check' } & CheckRecord)
  | {
      v: 1;
      type: 'end';
      status: ForkOutcome['status'];
      turns: number;
      toolCalls: number;
      finalText: string;
      error?: WireError;
      /** The distributed job this run of the fork served: a host never runs that job again (a replay). */
      job?: string;
    };

/**
 * A process killed mid-write leaves a last line without its newline; the reader skips it (the
 * torn-line rule of jsonl.ts). Cut it off before appending, or the next record would be glued
 * to it. Returns the last complete line ('' for none): the signature chain goes on from it.
 */
function dropTornTail(path: string): string {
  if (!existsSync(path)) return '';
  const text = readFileSync(path);
  let end = text.length;
  if (end > 0 && text[end - 1] !== 0x0a) {
    end = text.lastIndexOf(0x0a) + 1;
    truncateSync(path, end);
  }
  const complete = text.subarray(0, end).toString('utf8').trimEnd();
  return complete.slice(complete.lastIndexOf('\n') + 1);
}

/**
 * A fork's transcript as a JSONL file, appended synchronously record by record: after every
 * turn, and before and after each tool call, so a crash leaves a file that says exactly how
 * far the fork got (an unmatched `tool-start` is an interrupted tool call). With a run key,
 * every record carries its chained MAC (run-mac.ts): `resume` trusts only what verifies.
 */
export class JsonlTranscript implements TranscriptSink {
  readonly path: string;
  readonly #key: RunKey | undefined;
  readonly #job: string | undefined;
  #chain: string;

  /** `job`: the distributed job being served, named in the `end` record. */
  constructor(path: string, key?: RunKey, job?: string) {
    this.path = path;
    this.#key = key;
    this.#job = job;
    mkdirSync(dirname(path), { recursive: true });
    const last = dropTornTail(path);
    this.#chain = key === undefined ? '' : chainAfter(key, chainSeed(key, path), last);
  }

  write(record: TranscriptRecord): void {
    const json = JSON.stringify(record);
    if (this.#key === undefined) return appendFileSync(this.path, `${json}\n`);
    const signed = signLine(this.#key, this.#chain, json);
    appendFileSync(this.path, `${signed.line}\n`);
    this.#chain = signed.mac; // only once the line is on disk: a failed append changes nothing
  }

  start(forkId: string, prefixSha256: string, directive: string): void {
    this.write({ v: 1, type: 'start', forkId, prefixSha256, directive, at: new Date().toISOString() });
  }

  requestStart(record: { turn: number; attempt: number }): void {
    this.write({ v: 1, type: 'request-start', ...record });
  }

  attemptFailed(record: { turn: number; attempt: number; request: unknown }): void {
    const { request, ...rest } = record;
    this.write(
      request === undefined
        ? { v: 1, type: 'attempt', status: 'not-billed', ...rest }
        : { v: 1, type: 'attempt', status: 'billed', ...rest, request },
    );
  }

  turn(record: { turn: number; assistant: unknown; request: unknown }): void {
    this.write({ v: 1, type: 'turn', ...record });
  }

  toolStart(record: { turn: number; id: string; name: string; input: unknown }): void {
    this.write({ v: 1, type: 'tool-start', ...record });
  }

  toolEnd(record: { turn: number; id: string; isError: boolean; content: string }): void {
    this.write({ v: 1, type: 'tool-end', ...record });
  }

  prompt(record: { turn: number } & LoopPrompt): void {
    this.write({ v: 1, type: 'prompt', ...record });
  }

  check(record: CheckRecord): void {
    this.write({ v: 1, type: 'check', ...record });
  }

  end(outcome: ForkOutcome): void {
    this.write({
      v: 1,
      type: 'end',
      status: outcome.status,
      turns: outcome.turns,
      toolCalls: outcome.toolCalls,
      finalText: outcome.finalText,
      ...(outcome.error ? { error: outcome.error } : {}),
      ...(this.#job !== undefined ? { job: this.#job } : {}),
    });
  }
}
