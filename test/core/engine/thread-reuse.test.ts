import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { closeParkedPools } from '../../../src/core/pool/thread-pool.ts';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { bigSnapshot, workspace } from './helpers.ts';

/*
 * A closed engine's threads serve the next engine made with the same options
 * (src/core/pool/thread-pool.ts). The next engine may be another tenant's: what its forks send
 * must be its own, never what the threads kept of the engine before (an SDK client, a key).
 */

const KEYS = { a: 'sk-tenant-a-0000-aaaa', b: 'sk-tenant-b-0000-bbbb' } as const;

const open: { emu?: Emulator } = {};
afterAll(async () => {
  await open.emu?.close();
  await closeParkedPools();
});

describe('an engine on the threads of another one, closed before it', () => {
  it('sends its own key and headers with every request, never the other engine’s', async () => {
    await closeParkedPools(); // the second engine takes the first one's threads, no other
    const logDir = mkdtempSync(join(tmpdir(), 'fc-thread-reuse-'));
    open.emu = await startEmulator({ latency: 'off', logDir });
    const ws = workspace();
    const snapshot = bigSnapshot('thread-reuse'); // the same head: the threads' caches are keyed by it
    // the emulator's log files are numbered in the order the requests came in
    const sent = (): Record<string, string>[] =>
      readdirSync(logDir)
        .filter((name) => name.endsWith('.json'))
        .sort()
        .map(
          (name) =>
            (JSON.parse(readFileSync(join(logDir, name), 'utf8')) as { request: { headers: Record<string, string> } })
              .request.headers,
        );
    const byTenant: Record<string, Record<string, string>[]> = {};
    for (const tenant of ['a', 'b'] as const) {
      const before = sent().length;
      const engine = await ForkEngine.create({
        baseURL: open.emu.url,
        apiKey: KEYS[tenant],
        headers: { 'x-tenant': tenant },
        workspace: ws,
      });
      try {
        const { forks } = await engine.fanOut(snapshot, ['read a.ts and report', 'read b.ts and report']).settled();
        expect(forks.map((fork) => fork.status)).toEqual(['completed', 'completed']);
      } finally {
        await engine.close();
      }
      byTenant[tenant] = sent().slice(before);
    }
    for (const tenant of ['a', 'b'] as const) {
      // the warm-up and both forks' turns, each sent by the engine it belongs to
      expect(byTenant[tenant]!.length).toBeGreaterThanOrEqual(3);
      // the log masks a key to its last four characters: enough to tell the two apart (SDK 1.x sends it as a bearer token)
      for (const headers of byTenant[tenant]!)
        expect([headers['x-tenant'], headers['authorization']], JSON.stringify(headers)).toEqual([
          tenant,
          `Bearer ****${KEYS[tenant].slice(-4)}`,
        ]);
    }
  });
});
