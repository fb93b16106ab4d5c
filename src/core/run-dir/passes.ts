import { join } from 'node:path';
import { EVENTS_FILE } from './files.ts';
import { type JsonlLine, readJsonl, recordType } from './jsonl.ts';

/**
 * A fan-out's passes: the first run and each `resume` of it. The engine never reuses a
 * run directory for another run (`#freshId`), so every `fanout-start` in its events.jsonl
 * after the first is a resume of the same fan-out, appended to the same file.
 */
interface RunPass<T extends JsonlLine = JsonlLine> {
  /** 1 for the first run, 2 for the first resume… */
  index: number;
  /** The pass's records, its `fanout-start` first. */
  lines: T[];
  /** Engine-clock times of its first and last record. */
  startedAt: number;
  endedAt: number;
  /** Whether it settled (wrote `fanout-end`): a pass killed outright did not. */
  settled: boolean;
}

const atOf = (line: JsonlLine): number | undefined => {
  const at = (line.value as { at?: unknown }).at;
  return typeof at === 'number' ? at : undefined;
};

/** Split a fan-out's event records at each `fanout-start` (records before the first are dropped). */
export function splitPasses<T extends JsonlLine>(lines: readonly T[]): RunPass<T>[] {
  const passes: RunPass<T>[] = [];
  for (const line of lines) {
    if (recordType(line.value) === 'fanout-start')
      passes.push({ index: passes.length + 1, lines: [], startedAt: atOf(line) ?? 0, endedAt: 0, settled: false });
    const current = passes.at(-1);
    if (!current) continue;
    current.lines.push(line);
    const at = atOf(line);
    if (at !== undefined) current.endedAt = Math.max(current.endedAt, at);
    if (recordType(line.value) === 'fanout-end') current.settled = true;
  }
  for (const s of passes) s.endedAt = Math.max(s.endedAt, s.startedAt);
  return passes;
}

/** The passes of the fan-out in `fanOutDir` (its events.jsonl). */
export function readPasses(fanOutDir: string): RunPass[] {
  return splitPasses(readJsonl(join(fanOutDir, EVENTS_FILE), 'fan-out events'));
}

/** `pass 1`, `passes 1–3`: what a total covers. */
export function passesLabel(count: number): string {
  return count <= 1 ? 'pass 1' : `passes 1–${count}`;
}
