import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every file below `dir`. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) =>
    statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name)) : [join(dir, name)],
  );
}

/** What a run wrote under its run directory: every file, and the forks' transcripts joined. */
export function runFiles(runDir: string): { files: string[]; transcript: string } {
  const files = filesUnder(runDir);
  const transcript = files
    .filter((f) => f.endsWith('.jsonl') && f.includes('forks'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  return { files, transcript };
}

/** The example plan's parent with forkcache's real tool declarations. */
export function exampleParent(): Record<string, unknown> {
  return {
    ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
    tools: TOOL_DECLARATIONS,
  };
}

/**
 * An emulator running the `refactor` script for a test file, which searches every request body
 * it receives for `secret`: `sent()` counts the bodies that held it (reset it with `reset()`).
 */
export function watchingEmulator(secret: string): { url(): string; sent(): number; reset(): void } {
  let emulator: Awaited<ReturnType<typeof startEmulator>> | undefined;
  let sent = 0;
  beforeAll(async () => {
    emulator = await startEmulator({
      latency: 'off',
      script: 'refactor',
      faultFor: (body) => ((sent += JSON.stringify(body).includes(secret) ? 1 : 0), 'none'),
    });
  });
  afterAll(() => emulator?.close());
  return { url: () => emulator!.url, sent: () => sent, reset: () => (sent = 0) };
}
