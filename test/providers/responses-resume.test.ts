import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../src/core/engine/engine.ts';
import { engineOptionsOf } from '../../src/core/engine/manifest-engine.ts';
import { readManifest } from '../../src/core/run-dir/manifest.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../core/engine/helpers.ts';

/*
 * A fan-out over OpenAI's Responses API, cancelled mid-run and resumed the way `forkcache
 * resume` does it (an engine built from the manifest's settings): the head re-freezes to the
 * same bytes (the Responses wire and the TTL it was frozen with are in the manifest), so the
 * resumed forks finish with no drift.
 */

const emulator = sharedEmulator({ api: 'openai', script: 'refactor' });

const FILES = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`f${i}.ts`, `export const fetchData = ${i};\n`]));
const DIRECTIVES = Object.keys(FILES).map((f) => `rename fetchData to loadData in ${f}`);

function endpoint() {
  return { provider: 'openai' as const, baseURL: `${emulator.current.url}/v1`, apiKey: 'test' };
}

async function cancelledRun(tag: string, ttl: '12h' | 'auto') {
  const runs = workspace({});
  const first = await ForkEngine.create({
    ...endpoint(),
    openaiWire: 'responses',
    responsesTtl: ttl,
    workspace: workspace(FILES),
    runsDir: runs,
    pool: { maxThreads: 1 },
    concurrency: 2,
  });
  try {
    const fan = first.fanOut(bigSnapshot(tag), DIRECTIVES);
    let turns = 0;
    for await (const e of fan) if (e.type === 'turn-end' && ++turns === 3) fan.cancel();
    const cancelled = await fan.settled();
    expect(cancelled.forks.some((f) => f.status === 'cancelled')).toBe(true);
    return { dir: join(runs, fan.id), runs, sha256: fan.prefix.sha256 };
  } finally {
    await first.close();
  }
}

describe('a Responses fan-out cancelled mid-run', () => {
  it('resumes from its manifest on the same head, the same TTL, and completes with no drift', async () => {
    const { dir, runs, sha256 } = await cancelledRun(`resp-resume-${Date.now()}:`, '12h');
    const manifest = readManifest(dir);
    expect(manifest.engine.openaiWire).toBe('responses');
    expect(manifest.engine.responsesTtl).toBe('12h');
    const second = await ForkEngine.create({ ...endpoint(), ...engineOptionsOf(manifest.engine), runsDir: runs });
    try {
      const fan = second.resume(dir);
      expect(fan.prefix.sha256).toBe(sha256);
      expect(fan.prefix.responses).toEqual({ mode: 'implicit', ttl: '12h' });
      const resumed = await fan.settled();
      expect(resumed.forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
      expect(resumed.summary.prefix.drift_events).toBe(0);
      expect(resumed.summary.cache.cache_efficiency).toBe(1);
      // every resumed request spoke the Responses API and wrote for 12 hours only
      const requests = resumed.forks.flatMap((f) => f.requests);
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.every((r) => r.messageId?.startsWith('resp_'))).toBe(true);
      expect(requests.every((r) => r.usage.cache_creation?.ttl_30m_input_tokens === undefined)).toBe(true);
      for (let i = 0; i < DIRECTIVES.length; i++) {
        expect(readFileSync(join(second.options.workspace, `f${i}.ts`), 'utf8')).toBe(
          `export const loadData = ${i};\n`,
        );
      }
    } finally {
      await second.close();
    }
  });

  it('records the TTL `auto` chose, and resumes on it', async () => {
    const { dir, runs, sha256 } = await cancelledRun(`resp-resume-auto-${Date.now()}:`, 'auto');
    const manifest = readManifest(dir);
    // four forks of at most 20 turns, two at a time: well under 30 minutes
    expect(manifest.engine.responsesTtl).toBe('30m');
    const second = await ForkEngine.create({ ...endpoint(), ...engineOptionsOf(manifest.engine), runsDir: runs });
    try {
      const fan = second.resume(dir);
      expect(fan.prefix.sha256).toBe(sha256);
      const resumed = await fan.settled();
      expect(resumed.forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
      expect(resumed.summary.prefix.drift_events).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('is refused, naming openaiWire, by an engine on Chat Completions', async () => {
    const { dir, runs } = await cancelledRun(`resp-resume-chat-${Date.now()}:`, 'auto');
    const { workspace: ws } = readManifest(dir).engine;
    const chat = await ForkEngine.create({ ...endpoint(), workspace: ws, runsDir: runs });
    try {
      expect(() => chat.resume(dir)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', data: { field: 'openaiWire' } }),
      );
    } finally {
      await chat.close();
    }
  });
});
