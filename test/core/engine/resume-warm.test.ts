import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { BUILTIN_SCRIPTS } from '../../../src/integrations/emulator/scripts/registry.ts';
import type { ScriptedModel, ScriptInput } from '../../../src/integrations/emulator/scripts/types.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

// Resume releases the siblings on the shared prefix, not behind the largest pending request.
// A resumed fork's next request carries its whole history (here fork 0 read a big file); under
// `first-child` the first request to arrive warmed the prefix and every sibling waited for its
// response to begin. Now a request of the prefix alone goes first, and the siblings go once it
// is readable. The emulator's scripted model logs each request as it arrives, and holds fork
// 0's big request until every sibling's request has arrived: only a resume that released them
// on the prefix gets past that hold (the order is decided by events, no clock).

const BIG = Array.from({ length: 600 }, (_, i) => `export const v${i} = fetchData(${i}); // ${'x'.repeat(40)}`).join(
  '\n',
);
const FILES = {
  'big.ts': `${BIG}\n`,
  'a.ts': 'export const a = fetchData(1);\n',
  'b.ts': 'export const b = fetchData(2);\n',
  'c.ts': 'export const c = fetchData(3);\n',
};
const DIRECTIVES = ['big.ts', 'a.ts', 'b.ts', 'c.ts'].map((f) => `rename fetchData to loadData in ${f}`);

interface Arrival {
  maxTokens: number;
  bytes: number;
  /** The file of the fork's directive, or null for a request of the shared prefix alone. */
  file: string | null;
}

const fileOf = (messages: unknown): string | null =>
  /rename fetchData to loadData in ([a-z]+\.ts)/.exec(JSON.stringify(messages))?.[1] ?? null;

/** Each messages request as it arrives (the emulator asks `faultFor` of every one first). */
const arrivals: Arrival[] = [];
function logArrival(body: unknown): undefined {
  const request = body as { max_tokens: number; messages: unknown };
  arrivals.push({
    maxTokens: request.max_tokens,
    bytes: Buffer.byteLength(JSON.stringify(body)),
    file: fileOf(request.messages),
  });
  return undefined;
}

/** The refactor model, whose answer `holding` can delay (the response begins only after it). */
let holding: ((file: string | null) => Promise<void> | undefined) | undefined;
const heldRefactor: ScriptedModel = {
  name: 'held-refactor',
  async respond(input: ScriptInput) {
    await holding?.(fileOf(input.request.messages));
    return BUILTIN_SCRIPTS['refactor']!.respond(input);
  },
};

const emulator = sharedEmulator({
  scripts: { 'held-refactor': heldRefactor },
  script: 'held-refactor',
  faultFor: logArrival,
});

describe('resume warms the shared prefix first', () => {
  it("writes the prefix alone, then releases every sibling while the big fork's response has not begun", async () => {
    const ws = workspace(FILES);
    const runs = workspace({});
    const snapshot = bigSnapshot(`resume-warm-${Date.now()}`);
    // every fork stops after two turns (read, then edit): all four go on in the next session
    const first = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      runDir: runs,
      maxTurns: 2,
      pool: { maxThreads: 1 },
    });
    const fan = first.fanOut(snapshot, DIRECTIVES);
    const before = await fan.settled();
    await first.close();
    expect(before.forks.map((f) => [f.status, f.turns])).toEqual(DIRECTIVES.map(() => ['failed', 2]));

    arrivals.length = 0;
    // fork 0's request waits for all its siblings' requests: they must not wait for its response
    let siblingsIn!: () => void;
    const allSiblings = new Promise<void>((resolve) => (siblingsIn = resolve));
    const prewarmed = (): boolean => arrivals[0]?.file === null;
    holding = (file) => {
      const siblings = arrivals.filter((x) => x.file !== null && x.file !== 'big.ts').length;
      if (siblings === 3) siblingsIn();
      // without a prefix warm-up first nothing is held: the order below says what went wrong
      return file === 'big.ts' && prewarmed() ? allSiblings : undefined;
    };
    const second = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      pool: { maxThreads: 1 },
    });
    try {
      const { forks } = await second.resume(join(runs, fan.id)).settled();
      expect(forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
      // the first request of the session writes the shared prefix alone, and nothing else comes before it
      expect(arrivals[0]).toMatchObject({ file: null, maxTokens: 0 });
      const big = arrivals.find((a) => a.file === 'big.ts')!;
      expect(arrivals[0]!.bytes).toBeLessThan(big.bytes);
      // every fork's next request came after it, and the siblings' before fork 0's answer
      const firstOf = (file: string): number => arrivals.findIndex((a) => a.file === file);
      for (const file of ['big.ts', 'a.ts', 'b.ts', 'c.ts']) expect(firstOf(file)).toBeGreaterThan(0);
    } finally {
      holding = undefined;
      await second.close();
    }
  });
});
