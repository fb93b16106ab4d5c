import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { ManualClock } from '../../../src/core/util/clock.ts';
import type { EmulatorOptions } from '../../../src/integrations/emulator/options.ts';
import type { Emulator } from '../../../src/integrations/emulator/start.ts';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { captureSnapshot, type ParentSnapshot } from '../../../src/core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../../../src/core/tools/declarations.ts';
import { fixture } from '../../helpers.ts';

/** A workspace with a few files, in a new temp directory. */
export function workspace(
  files: Record<string, string> = { 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 2;\n' },
): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-ws-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** The fixture parent with the real tool declarations and a system prompt long enough to be cacheable (> 1,024 tokens). */
export function bigSnapshot(tag = ''): ParentSnapshot {
  const request = fixture<Record<string, any>>('parent-request.json');
  request['model'] = 'claude-sonnet-4-6';
  request['system'][0].text = `${tag}${'You are a careful engineer. '.repeat(400)}`;
  request['tools'] = TOOL_DECLARATIONS;
  return captureSnapshot(request);
}

/**
 * Drive a ManualClock until `done` settles: whenever something sleeps on the clock (the
 * emulator's time to first token, output pacing), jump to the next deadline. `ready` lets a
 * test hold time still until a condition holds (e.g. N requests are parked at once).
 * No wall-clock waiting: each step yields to the event loop only.
 */
export async function driveClock<T>(
  clock: ManualClock,
  done: Promise<T>,
  ready: () => boolean = () => true,
): Promise<T> {
  let finished = false;
  const result = done.finally(() => (finished = true));
  while (!finished) {
    await new Promise((resolve) => setImmediate(resolve));
    if (clock.pending > 0 && ready()) clock.advanceToNext();
  }
  return result;
}

/**
 * One emulator for a test file: started before its tests, closed after them. Read `.current`
 * inside tests (it exists only once `beforeAll` ran).
 */
export function sharedEmulator(options: EmulatorOptions = {}): { readonly current: Emulator } {
  let emulator: Emulator | undefined;
  beforeAll(async () => {
    emulator = await startEmulator({ latency: 'off', ...options });
  });
  afterAll(async () => {
    await emulator?.close();
  });
  return {
    get current(): Emulator {
      if (!emulator) throw new Error('sharedEmulator: used outside a test');
      return emulator;
    },
  };
}
