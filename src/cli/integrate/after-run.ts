import type { ForkEngine } from '../../core/engine/engine.ts';
import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import type { IntegrationRecord } from '../../core/run-dir/integration.ts';
import { integrate } from './integrate.ts';
import type { IntegrationSettings } from '../integration-settings.ts';

/**
 * The integration step at the end of `run` or `resume`, with fix-up turns: each is a resume
 * of the run on the same engine, running only the forks the check implicated, each continuing
 * its own conversation, so its history is read from the prompt cache while it is warm.
 */
export async function integrateAfterRun(
  dir: string,
  settings: IntegrationSettings,
  engine: ForkEngine,
  catalogue: ModelCatalogue,
  log: (line: string) => void,
): Promise<IntegrationRecord> {
  return integrate(dir, {
    settings,
    catalogue,
    log,
    fixup: async (prompts) => {
      const fan = engine.resume(dir, { fixups: prompts });
      // the resume ends every fork of the run again: only the ones given a fix-up turn are news
      for await (const event of fan)
        if (event.type === 'fork-end' && prompts.has(event.forkId)) log(`  fix-up ${event.forkId}: ${event.status}`);
      await fan.settled();
    },
  });
}
