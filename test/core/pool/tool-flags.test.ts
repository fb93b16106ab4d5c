import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveEngineOptions } from '../../../src/core/engine/options.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { ForkcacheError } from '../../../src/core/util/errors.ts';
import type { StartPoint } from '../../../src/core/pool/fork-attempts.ts';
import { type DispatchContext, runForkInWorker } from '../../../src/core/pool/fork-dispatch.ts';
import { tsxLoaderUrl } from '../../../src/core/pool/worker-file.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { TOOL_FLAG_NAMES, type ToolFlags, toolFlagsOf } from '../../../src/core/tools/tool-flags.ts';
import { fixture } from '../../helpers.ts';
import type { TaskFlags } from '../../fixtures/workers/task-flags-worker.ts';

// The tool flags (src/core/tools/tool-flags.ts) travel one typed path to the forks' tools. These
// tests walk every flag of the list, so a flag added there is checked here without a line of
// its own: each alone on, and none, so that a flag dropped or copied under another's name shows.

const CASES: Partial<ToolFlags>[] = [{}, ...TOOL_FLAG_NAMES.map((name) => ({ [name]: true }))];
const local = { baseURL: 'http://127.0.0.1:1', apiKey: 'k' };

const pool = new Piscina({
  filename: fileURLToPath(new URL('../../fixtures/workers/task-flags-worker.ts', import.meta.url)),
  execArgv: ['--import', tsxLoaderUrl()], // a .ts fixture: the loader, never the suite's build
  minThreads: 1,
  maxThreads: 1,
});

afterAll(async () => {
  await pool.destroy();
});

describe('the tool flags on their way to the tools', () => {
  it("every flag the engine resolves reaches the fork's task and its executor in a real worker thread", async () => {
    const prefix = freeze(captureSnapshot(fixture('parent-request.json')));
    const start: StartPoint = {
      child: { tailBlocks: [], messages: [] },
      turnsDone: 0,
      previous: {
        requests: [],
        failedAttempts: [],
        unknownOutcome: 0,
        unknownTurns: [],
        toolCalls: 0,
        filesChanged: [],
        checks: [],
      },
      interrupted: [],
      rerun: [],
    };
    for (const flags of CASES) {
      const options = resolveEngineOptions({ ...local, ...flags });
      const ctx: DispatchContext = {
        deps: { options, pool },
        prefix,
        gate: { acquire: () => Promise.reject(new ForkcacheError('INTERNAL', 'this fork sends no request')) },
        forkId: 'fo001-flags-f01',
        index: 0,
        base: start.child,
        workspace: options.workspace,
        transcriptPath: undefined,
        abort: new AbortController(),
        onEvent: () => {},
        onAsk: () => Promise.resolve({ allow: false }),
      };
      // the stand-in worker answers with the flags it saw where a fork's outcome would be
      const seen = (await runForkInWorker(ctx, start, 0)) as unknown as TaskFlags;
      expect(seen).toEqual({ task: toolFlagsOf(flags), executor: toolFlagsOf(flags) });
    }
  });

  it('the executor holds every flag its options turn on, and only those', () => {
    for (const flags of CASES) {
      const tools = createToolExecutor({ workspace: process.cwd(), ...flags });
      expect(tools.flags).toEqual(toolFlagsOf(flags));
    }
    // anything but `true` is refused, not taken for off or on
    for (const name of TOOL_FLAG_NAMES)
      expect(() => createToolExecutor({ workspace: process.cwd(), [name]: 'yes' } as never)).toThrow(
        new RegExp(`^createToolExecutor: ${name}: `),
      );
  });
});
