import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { forkcache, lastJson } from '../../../cli/run-cli.ts';
import type { FanOutResult } from '../../../../src/core/agent/fork-handle.ts';
import { type LlamaServer, type LlamaServerOptions, startLlamaServer } from '../../../../scripts/llama/llama-server.ts';
import { fanOutOn, hasLlama, loggedTasks, metric, why } from './helpers.ts';

/*
 * Fan-outs against the real llama-server (scripts/llama/setup.sh), tiny random-weight Qwen3
 * model. Its text is noise: each fork makes one request (maxTurns 1: its cut-off turn ends it truncated), so what is
 * checked is what the cache did, and that the ledger says exactly what the server says it did.
 */
let server: LlamaServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function start(options: LlamaServerOptions = {}): Promise<LlamaServer> {
  server = await startLlamaServer(options);
  return server;
}

interface TaskFigures {
  tokens: number;
  ms: number;
  generated: number;
}
const shown = (t: TaskFigures): string => `${t.tokens}/${t.ms.toFixed(2)}/${t.generated}`;

/** The ledger's requests, as the server logs them: prompt tokens evaluated (and their ms), tokens generated. */
function ledgerTasks(result: FanOutResult): TaskFigures[] {
  const records = result.forks.flatMap((f) => f.requests.map((r) => r.usage));
  return records.map((u) => ({
    tokens: u.input_tokens,
    ms: u.timings?.prompt_ms ?? Number.NaN,
    generated: u.output_tokens,
  }));
}

async function expectLedgerIsTheServers(result: FanOutResult, s: LlamaServer): Promise<void> {
  // every request the server ran is one the ledger holds, with the same figures; warm-ups and
  // probes are in the ledger too (under the parent), so compare the forks' and then the totals.
  // The log prints the ms with two decimals, the JSON with its own rounding: 34.125 can read
  // 34.12 in one and 34.13 in the other, so the ms match to the log's last digit
  const logged: TaskFigures[] = loggedTasks(s.log()).map((t) => ({
    tokens: t.promptTokens,
    ms: Number(t.promptMs),
    generated: t.generated,
  }));
  const forks = ledgerTasks(result);
  for (const task of forks) {
    const at = logged.findIndex(
      (l) => l.tokens === task.tokens && l.generated === task.generated && Math.abs(l.ms - task.ms) <= 0.0100001,
    );
    expect(
      at,
      `fork request ${shown(task)} in the server's log (${logged.map(shown).join(' ')})`,
    ).toBeGreaterThanOrEqual(0);
    logged.splice(at, 1);
  }
  const engine = result.summary.engine!;
  expect(engine.requests).toBe(result.summary.requests);
  expect(engine.prefill_tokens).toBe(await metric(s, 'llamacpp:prompt_tokens_total'));
  expect(result.summary.usage.output_tokens).toBe(await metric(s, 'llamacpp:tokens_predicted_total'));
  expect(logged.length, 'the server ran only the ledger’s requests').toBe(engine.requests - forks.length);
}

function expectEveryForkReadThePrefix(result: FanOutResult): void {
  const shared = result.summary.prefix.shared_tokens!;
  expect(shared).toBeGreaterThan(2000);
  for (const fork of result.forks) {
    expect(fork.requests).toHaveLength(1);
    expect(fork.toolCalls).toBe(0);
    expect(['failed', 'cancelled']).not.toContain(fork.status);
    // the warm-up's prompt ends with the assistant turn's opening tokens, which a fork does not share
    expect(fork.requests[0]!.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(shared - 5);
  }
  expect(result.summary.cache.cache_efficiency).toBeLessThanOrEqual(1);
}

/** Prefilled once: nothing of the prefix was computed twice (the probes and the forks' own parts aside). */
function expectPrefilledOnce(result: FanOutResult): void {
  expect(result.summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
  expect(result.summary.engine!.prefill_ratio).toBeLessThan(1.1);
}

describe.skipIf(!hasLlama)(`llama-cpp fan-out (${why})`, () => {
  it('default server (4 slots, idle slots cleared): one prefill, one slot for the forks’ requests in turn, said in the policy line', async () => {
    const s = await start();
    const result = await fanOutOn(s, 4, { slotSavePath: s.slotDir! });
    expect(result.summary.engine?.slots).toMatchObject({
      total: 4,
      used: 1,
      fill: 'one-slot',
      clears_idle: true,
      note: null,
    });
    expect(result.summary.engine?.slots?.policy).toMatch(/^one slot switched: the server clears idle slots/);
    // one request per fork: nothing restored (a fork's state may be saved as the next takes the
    // slot, before its end is known), and every file is deleted at the end
    expect(result.summary.engine?.slots?.switching).toMatchObject({ restores: 0, recomputed: 0, files_left: 0 });
    expect(readdirSync(s.slotDir!)).toEqual([]);
    expectEveryForkReadThePrefix(result);
    expectPrefilledOnce(result);
    expect(result.summary.warnings).toEqual([]);
    await expectLedgerIsTheServers(result, s);
    const forks = loggedTasks(s.log()).slice(-4);
    expect(forks.map((t) => t.slot)).toEqual([0, 0, 0, 0]);
    // each fork after the first reads its predecessor's prompt up to its own directive: it
    // computes fewer tokens than the first fork, whose own part followed the prefix alone
    const [first, ...rest] = result.forks.map((f) => f.requests[0]!.usage.input_tokens).sort((a, b) => b - a);
    for (const computed of rest) expect(computed).toBeLessThan(first!);
  });

  it('default server with slotFill copy: one prefill, copied into each slot before its fork', async () => {
    const s = await start();
    const result = await fanOutOn(s, 5, { slotFill: 'copy' });
    expect(result.summary.engine?.slots).toMatchObject({ total: 4, used: 4, fill: 'copy', clears_idle: true });
    expectEveryForkReadThePrefix(result);
    expectPrefilledOnce(result);
    expect(result.summary.engine!.prompt_ms).toBeGreaterThan(0);
    expect(result.summary.warnings).toEqual([]);
    await expectLedgerIsTheServers(result, s);
    // at most one fork per slot at a time, each pinned: 5 forks took the 4 slots, one of them twice
    const slots = loggedTasks(s.log())
      .slice(-5)
      .map((t) => t.slot);
    expect(new Set(slots).size).toBe(4);
  });

  it('listens on 127.0.0.1 only (the helper’s --host), nothing on other interfaces', async () => {
    const s = await start();
    const port = Number(new URL(s.url).port).toString(16).toUpperCase().padStart(4, '0');
    const listening = ['/proc/net/tcp', '/proc/net/tcp6']
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').slice(1))
      .map((line) => line.trim().split(/\s+/))
      .filter((cols) => cols[1]?.endsWith(`:${port}`) && cols[3] === '0A');
    expect(listening.map((cols) => cols[1])).toEqual([`0100007F:${port}`]);
  });

  it('forkcache demo --provider llama-cpp --base-url: the forks run on the server, pinned and prefilled once', async () => {
    // -np 3 keeps idle slots: a fork's second turn (the loop asks a cut-off turn to continue)
    // reads its own first turn from its slot (a server that clears idle slots recomputes it)
    const s = await start({ parallel: 3 });
    const { stderr, stdout } = await forkcache(
      ['demo', '--provider', 'llama-cpp', '--forks', '3', '--max-tokens', '4', '--base-url', s.baseURL, '--json'],
      { OPENAI_BASE_URL: undefined },
    );
    expect(stderr).toContain(`3 forks on ${s.baseURL} (llama-cpp`);
    const summary = lastJson(stdout);
    expect(summary.engine.slots).toMatchObject({ used: 3, fill: 'copy' });
    expect(summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
    expect(summary.warnings).toEqual([]);
    // the random model edits nothing: the demo says so with its exit code, and the figures stay true
    expect(summary.engine.prefill_ratio).toBeLessThan(1.1);
  });

  it('-np 1: one slot serves every fork in turn, each reading the prefix', async () => {
    const s = await start({ parallel: 1 });
    const result = await fanOutOn(s, 3);
    expect(result.summary.engine?.slots).toMatchObject({ total: 1, used: 1 });
    expectEveryForkReadThePrefix(result);
    expectPrefilledOnce(result);
    await expectLedgerIsTheServers(result, s);
  });

  it('-np 4 keeps idle slots: the KV cache is copied into every slot once, before the forks', async () => {
    const s = await start({ parallel: 4 });
    const result = await fanOutOn(s, 4);
    expect(result.summary.engine?.slots).toMatchObject({ total: 4, used: 4, fill: 'copy', clears_idle: false });
    expectEveryForkReadThePrefix(result);
    expectPrefilledOnce(result);
    await expectLedgerIsTheServers(result, s);
    // the copies hold the fork rules too (computed once, after the prefix): a fork computes its
    // directive and the assistant turn's opening, a small part of what follows the prefix
    const shared = result.summary.prefix.shared_tokens!;
    for (const fork of result.forks) {
      const usage = fork.requests[0]!.usage;
      const own = usage.input_tokens + usage.cache_read_input_tokens - shared;
      expect(own).toBeGreaterThan(150);
      expect(usage.input_tokens, `computed of ${own}`).toBeLessThan(own / 4);
    }
  });

  it('without --slot-save-path: each slot prefills itself (-np 4), or one slot serves all (default), said once', async () => {
    const kept = await start({ parallel: 4, slotSave: false });
    const each = await fanOutOn(kept, 3);
    expect(each.summary.engine?.slots).toMatchObject({ used: 3, fill: 'warm-each', clears_idle: false });
    expect(each.summary.engine?.slots?.note).toMatch(/--slot-save-path/);
    expectEveryForkReadThePrefix(each);
    // one warm-up per slot (what each computes is the server's affair: its host-memory prompt
    // cache sometimes hands a slot the prefix another one computed), the probes, the rules
    expect(each.summary.engine!.requests).toBe(3 + 3 + 3 + 1);
    expect(each.summary.engine!.prefill_ratio).toBeGreaterThan(1);
    await expectLedgerIsTheServers(each, kept);
    await kept.stop();
    const cleared = await start({ slotSave: false });
    const one = await fanOutOn(cleared, 3);
    expect(one.summary.engine?.slots).toMatchObject({ used: 1, fill: 'one-slot', clears_idle: true });
    expectEveryForkReadThePrefix(one);
    expectPrefilledOnce(one);
  });
});
