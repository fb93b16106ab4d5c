import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharedHostService } from '../../security/host-service.ts';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { findBubblewrap } from '../../../src/core/tools/sandbox/bwrap-probe.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

// Issue 24, route 4: the sandbox has no network unless the run allows it (`network: true` in
// the plan, the engine option): the setting reaches every fork's sandbox, the manifest (so a
// resume keeps it) and the summary.

const emulator = sharedEmulator({ script: 'refactor' });
const service = sharedHostService();

describe.runIf(findBubblewrap() !== undefined)('network: true (needs bubblewrap)', () => {
  for (const network of [false, true]) {
    it(`network: ${network} reaches the forks' sandbox, the manifest and the summary`, async () => {
      const ws = workspace();
      const engine = await ForkEngine.create({
        baseURL: emulator.current.url,
        apiKey: 'test',
        workspace: ws,
        runDir: join(ws, 'runs'),
        allow: ['bash'],
        network,
        pool: { maxThreads: 1 },
      });
      try {
        const fan = engine.fanOut(bigSnapshot(`net-${network}-${Math.random()}`), [
          `run \`curl -s -m 10 http://127.0.0.1:${service.port}/ || echo NO-NETWORK\` and report`,
        ]);
        const { forks, summary } = await fan.settled();
        const transcript = readFileSync(forks[0]!.transcriptPath!, 'utf8');
        expect(transcript).toContain(network ? 'host service' : 'NO-NETWORK');
        expect(summary.sandbox).toMatchObject({ kind: 'bwrap', network });
        const manifest = JSON.parse(readFileSync(join(ws, 'runs', fan.id, 'manifest.json'), 'utf8'));
        expect(manifest.engine.network).toBe(network);
      } finally {
        await engine.close();
      }
    });
  }
});
