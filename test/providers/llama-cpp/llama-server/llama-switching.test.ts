import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../../src/core/engine/engine.ts';
import type { FanOutResult } from '../../../../src/core/agent/fork-handle.ts';
import type { FanOutEvent } from '../../../../src/core/agent/fork-handle.ts';
import { type LlamaServer, startLlamaServer } from '../../../../scripts/llama/llama-server.ts';
import {
  type ScriptOptions,
  type ScriptedTextServer,
  startScriptedText,
} from '../../../../scripts/llama/scripted-text.ts';
import { choosePolicy, turnMeasures } from '../../../../src/providers/llama-cpp/slot-policy.ts';
import { hasLlama, localParent, loggedTasks, metric, why } from './helpers.ts';
import { cliArgs } from '../../../cli/run-cli.ts';

/*
 * Forks that make several turns, call tools and run a check, on the real llama-server (tiny
 * random-weight model). The model's text is noise, so a pass-through stand-in in front of the
 * server (scripts/llama/scripted-text.ts) replaces only the text the client sees: the server
 * computes every prompt token and generates every token, the ledger reads its usage and timings.
 * No assertion on time: what is checked is the structure that makes the makespan (a slot is
 * held for one request, checks and tools overlap other forks' requests, restores happen), the
 * prefill against the limit from the server's /metrics, and that no slot file is left.
 */
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

interface Run {
  result: FanOutResult;
  events: FanOutEvent[];
  prefill: number;
  predicted: number;
  /** The run's records of what cost a fork its state: recomputes and why, failed saves and restores, retried turns. */
  lost: string;
}

async function runOn(
  server: LlamaServer,
  front: ScriptedTextServer,
  forks: number,
  options: { check?: string; threads?: number; verb?: string } = {},
): Promise<Run> {
  const workspace = mkdtempSync(join(tmpdir(), 'fc-llama-switch-'));
  const engine = await ForkEngine.create({
    provider: 'llama-cpp',
    baseURL: front.baseURL,
    apiKey: 'sk-local',
    workspace,
    maxTokens: 4,
    maxTurns: 6,
    allow: ['read_file', 'bash'],
    sandbox: 'none',
    ...(server.slotDir ? { slotSavePath: server.slotDir } : {}),
    pool: { maxThreads: 1, concurrentTasksPerWorker: options.threads ?? 8 },
    runsDir: join(workspace, 'runs'),
  });
  const prompt0 = await metric(server, 'llamacpp:prompt_tokens_total');
  const predicted0 = await metric(server, 'llamacpp:tokens_predicted_total');
  try {
    const directives = Array.from(
      { length: forks },
      (_, i) => `${options.verb ?? 'rename'} helper to util in f${i}.ts`,
    );
    const fan = engine.fanOut(localParent(`switch-${Date.now()}`, 10), directives, {
      ...(options.check ? { check: { command: options.check, retries: 1 } } : {}),
      // a `check` fork changes no file on purpose: its field is not `file`, whose forks must change theirs
      fields: directives.map((_, i) => (options.verb === 'check' ? { marker: `f${i}` } : { file: `f${i}` })),
    });
    const events: FanOutEvent[] = [];
    const collecting = (async () => {
      for await (const event of fan.events) events.push(event);
    })();
    const result = await fan.settled();
    await collecting;
    return {
      result,
      events,
      lost: lostState(join(workspace, 'runs')),
      prefill: (await metric(server, 'llamacpp:prompt_tokens_total')) - prompt0,
      predicted: (await metric(server, 'llamacpp:tokens_predicted_total')) - predicted0,
    };
  } finally {
    await engine.close();
  }
}

/** The event log's records of a fork's state lost (the message of a failed `recomputed: 0`). */
function lostState(runs: string): string {
  const lost = readdirSync(runs).flatMap((dir) =>
    readFileSync(join(runs, dir, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter((line) =>
        /"type":"(slot-recompute|slot-save-failed|turn-retry)"|"type":"slot-restore".*"ok":false/.test(line),
      ),
  );
  return `what cost a fork its state:\n${lost.join('\n') || '(nothing logged)'}`;
}

const forkcacheFiles = (dir: string | undefined): string[] =>
  dir && existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('forkcache-')) : [];

/** The ledger is the server's: what it computed and generated in this fan-out, by /metrics. */
function expectLedgerIsTheServers(run: Run): void {
  const engine = run.result.summary.engine!;
  expect(engine.prefill_tokens).toBe(run.prefill);
  expect(run.result.summary.usage.output_tokens).toBe(run.predicted);
}

/**
 * The policy's choice is reported with what it measured in the first turns, and is what the
 * decision function gives on those measurements; the summary's line says it.
 */
function expectChoiceReported(run: Run, forks: number): void {
  const slots = run.result.summary.engine!.slots!;
  const choice = slots.choice!;
  expect(choice.measured, 'the policy decided from the first turns').not.toBeNull();
  const measured = choice.measured!;
  expect(measured.requests).toBeGreaterThan(0);
  expect(measured.gaps).toBeGreaterThanOrEqual(Math.min(slots.total, forks));
  expect(measured.model_ms).toBeGreaterThan(0);
  const server = { slots: slots.total, clearsIdle: slots.clears_idle, forks, files: true, fill: 'auto' as const };
  const again = choosePolicy(server, turnMeasures(measured));
  expect({ mode: choice.mode, at_once: choice.at_once, why: choice.why }).toEqual({
    mode: again.mode,
    at_once: again.atOnce,
    why: again.why,
  });
  expect(slots.policy).toContain(choice.why);
  expect(slots.policy).toContain(`(decided after ${measured.requests} requests)`);
}

/** Requests as intervals on the one clock (sent, ended), per fork. */
function requestsOf(run: Run): { fork: string; sent: number; ended: number }[] {
  return run.result.forks.flatMap((f) => f.requests.map((r) => ({ fork: f.forkId, sent: r.sentAt, ended: r.endedAt })));
}

/** Checks as intervals: each ends at its check-end event, `durationMs` before it began. */
function checksOf(run: Run): { fork: string; from: number; to: number }[] {
  return run.events.flatMap((e) =>
    e.type === 'check-end' ? [{ fork: e.forkId, from: e.at - e.check.durationMs, to: e.at }] : [],
  );
}

function expectChecksOverlapOthersRequests(run: Run): void {
  const requests = requestsOf(run);
  const overlapping = checksOf(run).filter((c) =>
    requests.some((r) => r.fork !== c.fork && r.sent >= c.from && r.sent < c.to),
  );
  // with one fork's request at a time, the others' requests ran while checks ran
  expect(overlapping.length, 'checks during which another fork’s request was sent').toBeGreaterThan(0);
}

/** Between two of its turns a fork held nothing: another fork's request was sent in between. */
function expectSlotFreeBetweenTurns(run: Run): void {
  const requests = requestsOf(run);
  const between = run.result.forks.filter((f) =>
    f.requests
      .slice(1)
      .some((later, i) =>
        requests.some((r) => r.fork !== f.forkId && r.sent >= f.requests[i]!.endedAt && r.sent < later.sentAt),
      ),
  );
  expect(between.length).toBeGreaterThan(run.result.forks.length / 2);
}

describe.skipIf(!hasLlama)(`llama-cpp forks with tools and checks (${why})`, () => {
  describe('default server (4 slots, one unified KV cache, idle slots cleared)', () => {
    let server: LlamaServer;
    let front: ScriptedTextServer;
    beforeAll(async () => {
      server = await startLlamaServer();
      // a tool turn, then the report; the two-check forks (`check …`) report at once
      front = await startScriptedText(server.url, {
        toolTurns: (directive) => (directive.startsWith('check') ? 0 : 1),
        tool: () => ({ name: 'bash', input: { command: 'true' } }),
      });
    });
    afterAll(async () => {
      await front?.stop();
      await server?.stop();
    });

    it('8 forks, a tool turn and a 4 s check each: one request per slot hold, the checks overlap other forks’ requests, restores, ≤ 0.75× the limit', async () => {
      const run = await runOn(server, front, 8, { check: 'sleep 4' });
      const { summary } = run.result;
      for (const fork of run.result.forks) {
        expect(fork.status, fork.error?.message).toBe('completed');
        expect(fork.requests).toHaveLength(2);
        expect(fork.toolCalls).toBe(1);
        expect(fork.checks?.map((c) => c.passed)).toEqual([true]);
      }
      expect(summary.engine?.slots).toMatchObject({
        total: 4,
        used: 1,
        fill: 'one-slot',
        clears_idle: true,
        note: null,
      });
      const switching = summary.engine!.slots!.switching!;
      expect(switching, run.lost).toMatchObject({
        on: true,
        recomputed: 0,
        evictions: 0,
        peak_requests: 1,
        files_left: 0,
      });
      // a fork's second turn restores its own state whenever another fork used the slot since
      expect(switching.restores).toBeGreaterThanOrEqual(4);
      expect(switching.saves).toBeGreaterThanOrEqual(switching.restores);
      expect(summary.engine!.slots!.policy).toMatch(/^one slot switched: the server clears idle slots/);
      expect(summary.engine!.slots!.choice).toMatchObject({ mode: 'one-slot-switched', at_once: 1 });
      expectChoiceReported(run, 8);
      expectChecksOverlapOthersRequests(run);
      expectSlotFreeBetweenTurns(run);
      expect(
        loggedTasks(server.log())
          .slice(-16)
          .every((t) => t.slot === 0),
      ).toBe(true);
      expect(summary.engine!.prefill_ratio).toBeLessThanOrEqual(0.75);
      expect(summary.warnings).toEqual([]);
      expectLedgerIsTheServers(run);
      expect(forkcacheFiles(server.slotDir)).toEqual([]);
    });

    it('two turns and two checks per fork (the first check fails): the same structure, ≤ 0.75× the limit', async () => {
      // fails the first time in each fork's own marker, passes the second
      const check = 'sleep 4; test -e {marker}.checked || { touch {marker}.checked; echo not yet; exit 1; }';
      const run = await runOn(server, front, 8, { check, verb: 'check' });
      for (const fork of run.result.forks) {
        expect(fork.status, fork.error?.message).toBe('completed');
        expect(fork.requests).toHaveLength(2);
        expect(fork.checks?.map((c) => c.passed)).toEqual([false, true]);
      }
      const switching = run.result.summary.engine!.slots!.switching!;
      expect(switching, run.lost).toMatchObject({ on: true, recomputed: 0, files_left: 0 });
      expect(switching.restores).toBeGreaterThanOrEqual(4);
      expect(run.result.summary.engine!.slots!.choice).toMatchObject({ mode: 'one-slot-switched', at_once: 1 });
      expectChoiceReported(run, 8);
      expectChecksOverlapOthersRequests(run);
      expectSlotFreeBetweenTurns(run);
      expect(run.result.summary.engine!.prefill_ratio).toBeLessThanOrEqual(0.75);
      expectLedgerIsTheServers(run);
      expect(forkcacheFiles(server.slotDir)).toEqual([]);
    });

    it('Ctrl-C mid-run: the forks are cancelled, the run exits 130, and no slot file is left', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'fc-llama-int-'));
      const parent = localParent(`int-${Date.now()}`, 10);
      writeFileSync(
        join(dir, 'plan.json'),
        JSON.stringify({
          parent,
          directives: Array.from({ length: 4 }, (_, i) => `rename helper to util in g${i}.ts`),
          workspace: '.',
          allow: ['bash'],
          sandbox: 'none',
          check: 'sleep 30',
          limits: { maxTokens: 4 },
        }),
      );
      const child = spawn(
        process.execPath,
        [...cliArgs(), 'run', join(dir, 'plan.json'), '--provider', 'llama-cpp', '--json'],
        {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: {
            ...process.env,
            OPENAI_BASE_URL: front.baseURL,
            OPENAI_API_KEY: 'sk-local',
            FORKCACHE_LLAMA_SLOT_SAVE_PATH: server.slotDir,
          },
        },
      );
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      // a fork's state was saved while another fork took the slot: its file is in the save path
      while (!forkcacheFiles(server.slotDir).some((n) => /-\d+\.bin$/.test(n))) {
        if (child.exitCode !== null) throw new Error(`the run ended early:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGINT');
      expect(await exited, stderr).toBe(130);
      expect(forkcacheFiles(server.slotDir)).toEqual([]);
    });
  });

  describe('-np 4 (idle slots kept)', () => {
    let server: LlamaServer;
    let front: ScriptedTextServer;
    const script: ScriptOptions = { toolTurns: 1, tool: () => ({ name: 'bash', input: { command: 'sleep 1' } }) };
    beforeAll(async () => {
      server = await startLlamaServer({ parallel: 4 });
      front = await startScriptedText(server.url, script);
    });
    afterAll(async () => {
      await front?.stop();
      await server?.stop();
    });

    it('16 forks: four model requests at a time on the four slots, their tools overlapping other forks’ requests', async () => {
      const run = await runOn(server, front, 16, { threads: 16 });
      for (const fork of run.result.forks) {
        expect(fork.status, fork.error?.message).toBe('completed');
        expect(fork.requests).toHaveLength(2);
        expect(fork.toolCalls).toBe(1);
      }
      const slots = run.result.summary.engine!.slots!;
      expect(slots).toMatchObject({ total: 4, used: 4, fill: 'copy', clears_idle: false });
      // the first request runs alone (the baseline of what N at once get through), then four at a
      // time until the policy decides from the first turns: four again, or one on a CPU where the
      // four only split the cores; either way it says which and why
      expect(slots.switching, run.lost).toMatchObject({ on: true, peak_requests: 4, recomputed: 0, files_left: 0 });
      expect(slots.choice!.measured!.gain).not.toBeNull();
      expectChoiceReported(run, 16);
      expect(slots.policy).toMatch(
        slots.choice!.at_once === 4
          ? /^4 slots switched: -np 4 keeps idle slots/
          : /^one slot switched, the prefix copied: -np 4 keeps idle slots/,
      );
      expect(
        new Set(
          loggedTasks(server.log())
            .slice(-32)
            .map((t) => t.slot),
        ),
      ).toEqual(new Set([0, 1, 2, 3]));
      // a tool runs from its turn's end to its tool-call event: other forks' requests were sent meanwhile
      const requests = requestsOf(run);
      const tools = run.events.flatMap((e) => {
        if (e.type !== 'tool-call') return [];
        const turn = run.result.forks.find((f) => f.forkId === e.forkId)!.requests.find((r) => r.turn === e.turn)!;
        return [{ fork: e.forkId, from: turn.endedAt, to: e.at }];
      });
      const overlapped = tools.filter((t) =>
        requests.some((r) => r.fork !== t.fork && r.sent >= t.from && r.sent < t.to),
      );
      expect(overlapped.length).toBeGreaterThan(tools.length / 2);
      expectSlotFreeBetweenTurns(run);
      expect(run.result.summary.engine!.prefill_ratio).toBeLessThanOrEqual(0.75);
      expectLedgerIsTheServers(run);
      expect(forkcacheFiles(server.slotDir)).toEqual([]);
    });
  });
});
