import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { cliArgs, forkcache, lastJson } from './run-cli.ts';

// Issue 15, case 6: requests in flight at a kill -9 were never recorded. Each request is now
// written ahead in the transcript; on resume one left unanswered is reported as "unknown
// outcome" (the endpoint may or may not have billed it), not silently dropped, and (issue 45)
// counted as "billed, unrecorded" with an estimate: the request its fork sent again for that turn.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function transcript(runs: string): string {
  if (!existsSync(runs)) return '';
  const fan = readdirSync(runs).find((d) => existsSync(join(runs, d, 'forks')));
  if (!fan) return '';
  return readdirSync(join(runs, fan, 'forks'))
    .map((f) => readFileSync(join(runs, fan, 'forks', f), 'utf8'))
    .join('');
}

describe('kill -9 while a request is in flight (issue 15, case 6)', () => {
  it('resume reports the unanswered request as unknown outcome', async () => {
    // the second request (the fork's turn 2) waits a minute for its first byte: the process dies meanwhile
    let requests = 0;
    const held = await startEmulator({
      script: 'refactor',
      latency: {
        baseMs: 0,
        prefillMsPerToken: 0,
        cacheReadMsPerToken: 0,
        outputTokensPerSecond: Infinity,
        slowFactor: 1,
        slowExtraMs: 60_000,
      },
      faultFor: () => (++requests === 2 ? 'slow' : 'none'),
    });
    const dir = mkdtempSync(join(tmpdir(), 'fc-inflight-'));
    const runs = join(dir, 'runs');
    writeFileSync(join(dir, 'a.ts'), 'export const a = 1;\n');
    const parent = {
      ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
      tools: TOOL_DECLARATIONS,
    };
    writeFileSync(
      join(dir, 'plan.json'),
      JSON.stringify({ parent, directives: ['read a.ts and report'], workspace: '.', runDir: 'runs' }),
    );
    const env = { ...process.env, ANTHROPIC_API_KEY: 'k-inflight-test', ANTHROPIC_BASE_URL: held.url };
    const child = spawn(process.execPath, [...cliArgs(), 'run', join(dir, 'plan.json'), '--json'], {
      cwd: ROOT,
      stdio: 'ignore',
      env,
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      while (!transcript(runs).includes('"type":"request-start","turn":2')) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGKILL');
      await exited;
    } finally {
      await held.destroy();
    }
    const server = await startEmulator({ script: 'refactor', latency: 'off' });
    try {
      const resumed = await forkcache(['resume', runs, '--json'], {
        ANTHROPIC_API_KEY: 'k-inflight-test',
        ANTHROPIC_BASE_URL: server.url,
      });
      expect(resumed.code).toBe(0);
      const summary = lastJson(resumed.stdout);
      expect(summary.forks.completed).toBe(1);
      expect(summary.requests.unknown_outcome).toBe(1);
      // billed, unrecorded: estimated as the turn-2 request the resume sent again (the same bytes)
      const estimate = summary.requests.billed_unrecorded;
      expect(estimate.requests).toBe(1);
      const input =
        estimate.estimated_input_tokens +
        estimate.estimated_cache_creation_input_tokens +
        estimate.estimated_cache_read_input_tokens;
      // turn 2 carries the parent's prefix and turn 1: more than the plan's parent alone
      expect(input).toBeGreaterThan(summary.prefix.shared_tokens);
      expect(estimate.estimated_output_tokens).toBeGreaterThan(0);
      expect(summary.requests.turns).toBeGreaterThanOrEqual(2);
    } finally {
      await server.close();
    }
  });
});
