import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findBubblewrap } from '../../src/core/tools/sandbox/bwrap-probe.ts';
import { forkcacheProcess as forkcache } from '../cli/run-cli.ts';
import { exampleParent, runFiles, watchingEmulator } from './helpers.ts';

// A plan's check runs in the fork's workspace, which the fork (and whatever it read) wrote: it
// is as untrusted as bash. A check that hunts for the key — in its own environment, in
// forkcache's /proc entry — must find nothing, or only a redacted value, in every output.

const CANARY = 'sk-ant-canary-check-9d2e7b41c6a0f358';
const HUNT = "env; tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ; exit 1";
const api = watchingEmulator(CANARY);

async function runHuntingCheck(sandbox: 'auto' | 'none') {
  const dir = mkdtempSync(join(tmpdir(), 'fc-checkkey-'));
  writeFileSync(join(dir, 'a.ts'), 'export const fetchData = 1;\n');
  const parent = exampleParent();
  // bash is not allowed: the check runs all the same, in the sandbox of the plan's choice
  writeFileSync(
    join(dir, 'plan.json'),
    JSON.stringify({
      parent,
      directives: [{ directive: 'rename fetchData to loadData in a.ts', file: 'a.ts' }],
      workspace: '.',
      runDir: 'runs',
      sandbox,
      check: HUNT,
      checkRetries: 1,
    }),
  );
  const run = await forkcache(['run', join(dir, 'plan.json'), '--json'], {
    ANTHROPIC_API_KEY: CANARY,
    ANTHROPIC_BASE_URL: api.url(),
  });
  return { run, ...runFiles(join(dir, 'runs')) };
}

describe("a plan's check cannot hand out the API key", () => {
  it.runIf(findBubblewrap() !== undefined)(
    "in the bubblewrap sandbox: neither its environment nor forkcache's /proc holds the key",
    async () => {
      api.reset();
      const { run, files, transcript } = await runHuntingCheck('auto');
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!).fork_results[0].status).toBe('check_failed');
      expect(transcript).toMatch(/"type":"check"/);
      expect(transcript).toMatch(/PATH=/); // the command did print its environment
      expect(transcript).not.toMatch(/ANTHROPIC_API_KEY/);
      for (const text of [run.stdout, run.stderr, ...files.map((f) => readFileSync(f, 'utf8'))])
        expect(text).not.toContain(CANARY);
      expect(api.sent()).toBe(0); // the check's output went back to the fork, and held no key
    },
  );

  it('without a sandbox: the key read from /proc is redacted from the check output before anyone sees it', async () => {
    api.reset();
    const { run, files, transcript } = await runHuntingCheck('none');
    expect(run.code).toBe(1);
    if ((process.getuid?.() ?? 1) === 0)
      expect(transcript).toContain('ANTHROPIC_API_KEY=[REDACTED]'); // it read it
    // not root: the check runs in a PID namespace of its own, where forkcache's /proc is not there
    else expect(transcript).not.toMatch(/ANTHROPIC_API_KEY=/);
    for (const text of [run.stdout, run.stderr, ...files.map((f) => readFileSync(f, 'utf8'))])
      expect(text).not.toContain(CANARY);
    expect(api.sent()).toBe(0);
  });
});
