import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import type { EmulatorOptions } from '../../../src/integrations/emulator/options.ts';

/*
 * Traffic captured from the real clients (Claude Code 2.1.332, the Claude Agent SDK 0.3.332,
 * Qwen Code 0.24.4, the Python SDK 1.13; in `claude-code-2.1.337/`, Claude Code 2.1.337 and the
 * Agent SDK 0.3.337) by `scripts/real-clients.sh`, replayed byte for byte
 * against a fresh emulator per scenario, in capture order. Each request must get the status
 * it got live, read and write the cache at the same positions, and (local paths were scrubbed
 * after capture) the same token counts to within a few tokens.
 */

interface Exchange {
  method: string;
  url: string;
  auth: 'x-api-key' | 'bearer';
  headers: Record<string, string>;
  body: unknown;
  status: number;
  cache: {
    read: string | null;
    writes: string[];
    input_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
  } | null;
}
interface Fixture {
  scenario: string;
  command: string;
  script: string;
  exchanges: Exchange[];
}
interface Logged {
  response: { status: number };
  cache: {
    read: { path: string } | null;
    writes: { path: string }[];
    usage: { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
  } | null;
}

const FIXTURES = join(import.meta.dirname, '../../fixtures/clients');
const fixture = (name: string): Fixture => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as Fixture;
/** Each Claude Code build's captures: the flat files are 2.1.332's, the newer builds have a folder. */
const BUILDS = { '2.1.332': '', '2.1.337': 'claude-code-2.1.337/' };
const names = Object.values(BUILDS)
  .flatMap((dir) =>
    readdirSync(join(FIXTURES, dir))
      .filter((f) => f.endsWith('.json'))
      .map((f) => `${dir}${f.slice(0, -5)}`),
  )
  .sort();

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Replay a fixture on a fresh emulator; returns what the emulator logged for each exchange. */
async function replay(f: Fixture, options: EmulatorOptions = {}): Promise<Logged[]> {
  const logDir = mkdtempSync(join(tmpdir(), 'forkcache-clients-'));
  dirs.push(logDir);
  const emu: Emulator = await startEmulator({ latency: 'off', script: f.script, logDir, ...options });
  try {
    for (const x of f.exchanges) {
      const auth = x.auth === 'bearer' ? { authorization: 'Bearer sk-ant-test' } : { 'x-api-key': 'sk-ant-test' };
      const res = await fetch(`${emu.url}${x.url}`, {
        method: x.method,
        headers: { ...x.headers, ...auth },
        ...(x.method === 'GET' ? {} : { body: JSON.stringify(x.body) }),
      });
      await res.text(); // the whole body (or SSE stream): the exchange is logged when it ends
    }
  } finally {
    await emu.close();
  }
  return readdirSync(logDir)
    .sort()
    .map((file) => JSON.parse(readFileSync(join(logDir, file), 'utf8')) as Logged);
}

/** Scrubbing a path changes a few tokens each time the path occurs: 1% (at least 20) of slack. */
const near = (live: number): number => Math.max(20, Math.ceil(live * 0.01));

const readShare = (c: NonNullable<Logged['cache']>): number =>
  c.usage.cache_read_input_tokens /
  (c.usage.input_tokens + c.usage.cache_creation_input_tokens + c.usage.cache_read_input_tokens);

describe('real clients, replayed', () => {
  it.each(names)('%s: every request gets its live status and cache reads/writes', async (name) => {
    const f = fixture(name);
    const logged = await replay(f);
    expect(logged).toHaveLength(f.exchanges.length);
    f.exchanges.forEach((x, i) => {
      const got = logged[i]!;
      expect(got.response.status, `${name} #${i}`).toBe(x.status);
      if (!x.cache) return expect(got.cache).toBeNull();
      const c = got.cache!;
      expect({ read: c.read?.path ?? null, writes: c.writes.map((w) => w.path) }, `${name} #${i}`).toEqual({
        read: x.cache.read,
        writes: x.cache.writes,
      });
      expect(Math.abs(c.usage.cache_read_input_tokens - x.cache.cache_read_input_tokens)).toBeLessThanOrEqual(
        near(x.cache.cache_read_input_tokens),
      );
      expect(Math.abs(c.usage.cache_creation_input_tokens - x.cache.cache_creation_input_tokens)).toBeLessThanOrEqual(
        near(x.cache.cache_creation_input_tokens),
      );
      expect(c.usage.input_tokens).toBe(x.cache.input_tokens);
    });
  });

  it.each(Object.entries(BUILDS))(
    "Claude Code %s's fork children read at least 95% of their first request from the parent's cache",
    async (_, dir) => {
      const logged = await replay(fixture(`${dir}cc-fork-fanout`));
      // Parent, then the two children (their billing block says cc_is_subagent=true), then the parent again.
      const children = fixture(`${dir}cc-fork-fanout`).exchanges.flatMap((x, i) =>
        JSON.stringify(x.body).includes('cc_is_subagent=true') ? [i] : [],
      );
      expect(children).toEqual([1, 2]);
      for (const i of children) expect(readShare(logged[i]!.cache!)).toBeGreaterThanOrEqual(0.95);
    },
  );

  it.each(Object.entries(BUILDS))(
    'Claude Code %s: a 3-turn Read→Bash session in first-party shape reads at least 90% on turns 2 and 3',
    async (_, dir) => {
      const logged = await replay(fixture(`${dir}cc-first-party-read-bash`));
      expect(logged.map((l) => l.response.status)).toEqual([200, 200, 200]);
      expect(readShare(logged[1]!.cache!)).toBeGreaterThanOrEqual(0.9);
      expect(readShare(logged[2]!.cache!)).toBeGreaterThanOrEqual(0.9);
    },
  );

  it.each(Object.entries(BUILDS))(
    'Claude Code %s: --cache-billing-block keeps the old behaviour: the per-request billing header makes every turn miss',
    async (_, dir) => {
      const logged = await replay(fixture(`${dir}cc-first-party-read-bash`), { cacheBillingBlock: true });
      expect(logged.map((l) => l.cache!.usage.cache_read_input_tokens)).toEqual([0, 0, 0]);
      expect(
        logged.every((l) => (l.cache as unknown as { billingBlockIgnored: boolean }).billingBlockIgnored === false),
      ).toBe(true);
    },
  );
});
