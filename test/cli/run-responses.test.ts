import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allCompleted, forkcache, lastJson } from './run-cli.ts';

/*
 * `forkcache run` over OpenAI's Responses API on the embedded emulator's OpenAI mode: the plan's
 * `openaiWire`/`responsesTtl` and `--openai-wire`; `forkcache resume` of that run re-freezes the
 * same head; a Responses wire with another provider is bad input naming the field.
 */

/** The example plan in a temp directory, with its run directory there too, and `extra` fields. */
function plan(extra: Record<string, unknown>): { path: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fc-plan-'));
  cpSync('examples/plan/parent.json', join(dir, 'parent.json'));
  const example = JSON.parse(readFileSync('examples/plan/plan.json', 'utf8')) as Record<string, unknown>;
  const path = join(dir, 'plan.json');
  writeFileSync(
    path,
    JSON.stringify({
      ...example,
      workspace: join(process.cwd(), 'examples', 'sample-repo'),
      runsDir: 'runs',
      ...extra,
    }),
  );
  return { path, dir };
}

const NO_KEYS = { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined };

interface Usage {
  cache_creation_input_tokens: number;
  output_tokens: number;
  cache_creation?: Record<string, number>;
}

describe('forkcache run on the Responses wire', () => {
  it('runs the plan over /v1/responses (--openai-wire over the plan), warms with a prewarm, writes for the TTL asked; resume finds the same head', async () => {
    // the plan says chat with a 12-hour TTL; the flag switches the wire
    const { path, dir } = plan({ provider: 'openai', responsesTtl: '12h' });
    // the dry run estimates the wire the run will speak: its prefix is the bytes the run sends
    const dry = await forkcache(['run', path, '--openai-wire', 'responses', '--dry-run', '--json'], NO_KEYS);
    expect(dry.code).toBe(0);
    const estimated = lastJson(dry.stdout);
    expect(estimated.wire).toEqual({ api: 'responses', ttl: '12h' });
    const run = await forkcache(['run', path, '--openai-wire', 'responses', '--json'], NO_KEYS);
    expect(run.stderr).toMatch(/embedded emulator .*openai mode/);
    expect(run.code).toBe(0);
    const summary = lastJson(run.stdout);
    expect(summary.forks).toEqual(allCompleted(3));
    expect(summary.cache.cache_efficiency).toBe(1);
    expect(summary.cache.warmups).toBe(1);
    expect(summary.prefix.drift_events).toBe(0);
    expect(estimated.prefix.sha256).toBe(summary.prefix.sha256);

    const runDir = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
    const manifest = JSON.parse(readFileSync(join(runDir, 'manifest.json'), 'utf8'));
    expect(manifest.engine).toMatchObject({ openaiWire: 'responses', responsesTtl: '12h' });
    const events = readFileSync(join(runDir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; usage?: Usage });
    const warmup = events.find((e) => e.type === 'warmup-end')!.usage!;
    // the prewarm generated nothing, and wrote the shared prefix for 12 hours
    expect(warmup.output_tokens).toBe(0);
    expect(warmup.cache_creation_input_tokens).toBe(summary.prefix.shared_tokens);
    expect(warmup.cache_creation?.['ttl_12h_input_tokens']).toBe(warmup.cache_creation_input_tokens);
    expect(warmup.cache_creation?.['ttl_30m_input_tokens'] ?? 0).toBe(0);

    // resume (nothing left to run) re-freezes the head from the manifest: the same bytes, no drift
    const again = await forkcache(['resume', runDir, '--json'], NO_KEYS);
    expect(again.stderr).not.toMatch(/FORK_PREFIX_DRIFT|freezes to/);
    expect(again.code).toBe(0);
    const resumed = lastJson(again.stdout);
    expect(resumed.forks.completed).toBe(3);
    expect(resumed.prefix.sha256).toBe(summary.prefix.sha256);
  });

  it('--dry-run estimates the wire the run will use: the Responses prefix, a prewarm without output, writes priced for their TTL', async () => {
    const dry = async (extra: Record<string, unknown>, ...flags: string[]) => {
      const out = await forkcache(
        ['run', plan({ provider: 'openai', ...extra }).path, '--dry-run', '--json', ...flags],
        NO_KEYS,
      );
      expect(out.code).toBe(0);
      return lastJson(out.stdout) as {
        prefix: { sha256: string };
        wire: { api: string; ttl?: string };
        estimate: { warmups: number; requests: number; tokens: Record<string, number>; cost: Record<string, number> };
        text: { assumed: string[] };
      };
    };
    const chat = await dry({});
    const short = await dry({ openaiWire: 'responses', responsesTtl: '30m' });
    const long = await dry({ openaiWire: 'responses', responsesTtl: '12h' });
    expect(chat.wire).toEqual({ api: 'chat' });
    expect(short.wire).toEqual({ api: 'responses', ttl: '30m' });
    expect(long.wire).toEqual({ api: 'responses', ttl: '12h' });
    // the plan's wire, not Chat Completions': another head, so other bytes (and the TTL is in them)
    expect(short.prefix.sha256).not.toBe(chat.prefix.sha256);
    expect(long.prefix.sha256).not.toBe(short.prefix.sha256);
    // a warm-up either way (a Chat fan-out warms first too); on Chat it generates one token, a prewarm none
    expect(chat.estimate.warmups).toBe(1);
    expect(short.estimate.warmups).toBe(1);
    expect(chat.text.assumed.join('\n')).toMatch(/one Chat Completions request of one output token/);
    expect(short.text.assumed.join('\n')).toMatch(
      /Responses API prewarm \(prompt_cache_options\.prewarm: no output paid\)/,
    );
    expect(long.text.assumed.join('\n')).toMatch(/every write lives 12 hours, priced at the long/);
    // the same requests and tokens for 30 minutes and 12 hours; the 12-hour writes cost more
    expect(long.estimate.tokens).toEqual(short.estimate.tokens);
    expect(long.estimate.cost.cacheWrite).toBeGreaterThan(short.estimate.cost.cacheWrite!);
    expect(long.estimate.cost.cacheRead).toBe(short.estimate.cost.cacheRead);
    // the other Chat Completions providers are estimated in their own wire format too (before: an INTERNAL error)
    for (const provider of ['dashscope', 'deepseek']) {
      const out = await forkcache(['run', plan({ provider }).path, '--dry-run', '--json'], NO_KEYS);
      expect(out.stderr).not.toMatch(/tail blocks/);
      expect(out.code).toBe(0);
      expect(lastJson(out.stdout).estimate.warmups).toBe(1);
    }
    // llama.cpp warms its server's slots its own way (its adapter's `ownWarmUp`): the estimate
    // keeps the plan's `warm` and counts no Chat warm-up request
    const llama = await forkcache(['run', plan({ provider: 'llama-cpp' }).path, '--dry-run', '--json'], NO_KEYS);
    expect(llama.code, llama.stderr).toBe(0);
    expect(lastJson(llama.stdout).estimate.warmups).toBe(0);
  });

  it('refuses the Responses wire with another provider, and a TTL without it, naming the field (exit 2)', async () => {
    const anthropic = await forkcache(['run', plan({ openaiWire: 'responses' }).path], NO_KEYS);
    expect(anthropic.code).toBe(2);
    expect(anthropic.stderr).toMatch(
      /openaiWire: responses is OpenAI's Responses API; provider anthropic speaks the Messages API/,
    );

    const flag = await forkcache(['run', plan({ provider: 'dashscope' }).path, '--openai-wire', 'responses'], NO_KEYS);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(
      /--openai-wire: responses is OpenAI's Responses API; provider dashscope speaks Chat Completions/,
    );

    const ttl = await forkcache(['run', plan({ provider: 'openai', responsesTtl: '30m' }).path], NO_KEYS);
    expect(ttl.code).toBe(2);
    expect(ttl.stderr).toMatch(/responsesTtl: only with openaiWire responses/);

    const bad = await forkcache(['run', plan({ provider: 'openai' }).path, '--openai-wire', 'completions'], NO_KEYS);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--openai-wire: expected chat, responses/);
  });
});
