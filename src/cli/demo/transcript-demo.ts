import { join } from 'node:path';
import { startEmulator } from '../../integrations/emulator/start.ts';
import { ForkEngine } from '../../core/engine/engine.ts';
import type { FanOutResult } from '../../core/agent/fork-handle.ts';
import type { WarmStrategy } from '../../core/settings/engine-settings.ts';
import type { LatencyName } from '../../integrations/emulator/latency.ts';
import { BUILTIN_CATALOGUE, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { CacheContinuity } from '../importers/cache-continuity.ts';
import { importClaudeTranscript } from '../importers/claude-transcript.ts';
import { ProgressBoard } from '../board/progress-board.ts';
import { DEMO_NEW_NAME, DEMO_OLD_NAME, filesMentioning, prepareDemoWorkspace } from './workspace.ts';

/*
 * `forkcache demo --parent-from-claude-transcript FILE`: the demo's fan-out (one fork per file
 * of the sample repository) over a parent imported from a session transcript, on the embedded
 * emulator with the `claude-code` script (it answers the children of a Claude Code-shaped
 * parent). A fresh emulator never served the session, so the first child writes the prefix
 * and the rest read it; against the session's own endpoint, use `run`.
 */
export async function runTranscriptDemo(options: {
  transcript: string;
  model?: string | undefined;
  forks: number;
  warm: WarmStrategy;
  latency: LatencyName;
  seed: number;
  plain: boolean;
  log: (line: string) => void;
  catalogue?: ModelCatalogue | undefined;
}): Promise<{ workspace: string; result: FanOutResult; model: string }> {
  const imported = importClaudeTranscript(options.transcript, { model: options.model });
  for (const note of imported.notes) options.log(`parent: ${note}`);
  const workspace = prepareDemoWorkspace(options.forks);
  const directives = filesMentioning(workspace, DEMO_OLD_NAME)
    .slice(0, options.forks)
    .map((f) => `rename ${DEMO_OLD_NAME} to ${DEMO_NEW_NAME} in ${f}`);
  const catalogue = options.catalogue ?? BUILTIN_CATALOGUE;
  const emulator = await startEmulator({
    latency: options.latency,
    seed: options.seed,
    script: 'claude-code',
    modelTable: catalogue,
  });
  options.log(
    `forkcache demo: ${directives.length} forks of a parent imported from ${options.transcript}, on the local emulator`,
  );
  try {
    const engine = await ForkEngine.create({
      modelTable: catalogue,
      baseURL: emulator.url,
      apiKey: 'demo',
      workspace,
      runsDir: join(workspace, '.forkcache', 'runs'),
      warm: options.warm,
      pool: { maxThreads: 2 },
    });
    try {
      const fan = engine.fanOut(imported.snapshot, directives, {
        meta: { emulator: { script: 'claude-code', latency: options.latency } },
      });
      const board = new ProgressBoard({ model: imported.snapshot.model, plain: options.plain, catalogue });
      board.plan(fan);
      const continuity = new CacheContinuity(imported.expectedCachedTokens);
      for await (const event of fan) {
        board.onEvent(event);
        continuity.onEvent(event as Parameters<CacheContinuity['onEvent']>[0]);
      }
      board.stop();
      options.log(`${continuity.line()} (a fresh emulator: the first fork wrote it)`);
      return { workspace, result: await fan.settled(), model: imported.snapshot.model };
    } finally {
      await engine.close();
    }
  } finally {
    await emulator.close();
  }
}
