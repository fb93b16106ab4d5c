import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { splitSigned } from '../../src/core/run-dir/run-mac.ts';
import { findBubblewrap } from '../../src/core/tools/sandbox/bwrap-probe.ts';
import { exampleParent, forkcache, lastJson } from './run-cli.ts';

// Issue 24, route 2, as `forkcache resume` meets it: a manifest rewritten to allow bash with
// sandbox none on `/` is refused; an older, unsigned run needs --trust-unsigned; and resume
// prints the sandbox it really uses (it said "bubblewrap is not installed" for any `none`).

/** A finished one-fork run with bash allowed, in a fresh directory: its runs directory. */
async function finishedRun(sandbox: 'auto' | 'none'): Promise<{ runs: string; fan: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'fc-trust-'));
  const parent = exampleParent();
  writeFileSync(
    join(dir, 'plan.json'),
    JSON.stringify({
      parent,
      directives: ['run `true` and report'],
      allow: ['bash'],
      sandbox,
      emulator: { script: 'refactor', latency: 'off' },
    }),
  );
  const run = await forkcache(['run', join(dir, 'plan.json'), '--json']);
  expect(run.code, run.stderr).toBe(0);
  const runs = join(dir, '.forkcache', 'runs');
  return { runs, fan: join(runs, readdirSync(runs)[0]!) };
}

let auto: { runs: string; fan: string };
beforeAll(async () => {
  auto = await finishedRun('auto');
});

describe('forkcache resume trusts only what this machine signed', () => {
  it('refuses a manifest rewritten to run bash unsandboxed on /, exit 2, nothing resumed', async () => {
    const { runs, fan } = await finishedRun('auto');
    const manifest = JSON.parse(readFileSync(join(fan, 'manifest.json'), 'utf8')) as {
      engine: Record<string, unknown>;
    };
    Object.assign(manifest.engine, { sandbox: 'none', workspace: '/' });
    writeFileSync(join(fan, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const resumed = await forkcache(['resume', runs]);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toMatch(
      /manifest\.json does not match its signature: it was changed after forkcache wrote it/,
    );
    expect(resumed.stderr).not.toMatch(/bash (sandbox|is NOT)/); // refused before the manifest's settings were used
  });

  it('refuses an unsigned run, saying how to proceed; --trust-unsigned resumes and signs it', async () => {
    const { runs, fan } = await finishedRun('auto');
    rmSync(join(fan, 'signature.json'));
    for (const f of readdirSync(join(fan, 'forks'))) {
      const path = join(fan, 'forks', f);
      const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
      writeFileSync(path, `${lines.map((l) => splitSigned(l)?.body ?? l).join('\n')}\n`);
    }
    const refused = await forkcache(['resume', runs]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/carries no signature.*resume it with --trust-unsigned/);
    const trusted = await forkcache(['resume', runs, '--trust-unsigned']);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toMatch(/note: --trust-unsigned: .*unsigned; now signed with this machine's key/);
    expect((await forkcache(['resume', runs])).code).toBe(0); // signed now
  });

  it.runIf(findBubblewrap() !== undefined)(
    'prints the bubblewrap sandbox it really uses, and what it holds',
    async () => {
      const resumed = await forkcache(['resume', auto.runs, '--json']);
      expect(resumed.code).toBe(0);
      expect(resumed.stderr).toMatch(/^bash sandbox: bubblewrap: .*no capabilities.*no network/m);
      expect(resumed.stderr).not.toMatch(/NOT sandboxed/);
      // the summary carries it too (for the board and --json readers)
      expect(lastJson(resumed.stdout).sandbox).toMatchObject({ kind: 'bwrap', network: false });
    },
  );

  it('says why bash is not sandboxed when the run chose none (not "bubblewrap is not installed")', async () => {
    const { runs } = await finishedRun('none');
    const resumed = await forkcache(['resume', runs]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/note: bash is NOT sandboxed \(sandbox: "none" was chosen\)/);
    if (findBubblewrap() !== undefined) expect(resumed.stderr).not.toMatch(/not installed/);
  });
});
