import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
});
afterEach(() => sandbox.cleanup());

const withBash = (limits = {}) => executorIn(sandbox, { allow: ['read_file', 'bash'], limits });

describe('bash', () => {
  it('is refused unless the fork is allowed it', async () => {
    const { code, content } = errorOf(await executorIn(sandbox).execute('bash', { command: 'echo hi' }));
    expect(code).toBe('TOOL_NOT_ALLOWED');
    expect(content).toMatch(/^tool bash is not allowed for this fork/);
  });

  it('runs in the workspace realpath and returns stdout, then stderr', async () => {
    await sandbox.put('f.txt', 'content');
    const tools = withBash();
    expect(okContent(await tools.execute('bash', { command: 'pwd' }))).toBe(`${realpathSync(sandbox.workspace)}\n`);
    expect(okContent(await tools.execute('bash', { command: 'cat f.txt; echo oops >&2' }))).toBe(
      'content\n[stderr]\noops\n',
    );
    expect(okContent(await tools.execute('bash', { command: 'true' }))).toBe('(no output)');
  });

  it('returns a failing exit code as an error result with the output', async () => {
    const { code, content } = errorOf(await withBash().execute('bash', { command: 'echo partial; exit 3' }));
    expect(code).toBe('TOOL_COMMAND_FAILED');
    expect(content).toBe('command exited with code 3\npartial\n');
  });

  it('kills a command at the timeout, children included', async () => {
    // `sleep` runs as a child of bash and holds the output pipe: only a group kill ends the call early.
    const { code, content } = errorOf(
      await withBash({ bashTimeoutMs: 200 }).execute('bash', { command: 'echo started; sleep 20; echo done' }),
    );
    expect(code).toBe('TOOL_COMMAND_FAILED');
    // what it printed before the kill is kept; on a loaded machine bash may not have run its
    // first line within 200 ms (CI as nobody, two suites and a busy loop: no output)
    expect(content).toMatch(/^command timed out after 200 ms and was killed\n(started\n|\(no output\))$/);
  });

  it('caps output', async () => {
    const out = okContent(
      await withBash({ maxBashOutputBytes: 1000 }).execute('bash', {
        command: 'head -c 100000 /dev/zero | tr "\\0" x',
      }),
    );
    expect(out).toBe(`${'x'.repeat(1000)}\n[truncated: 99000 more bytes]`);
  });

  it('does not hand the host environment (API keys) to the command', async () => {
    process.env['FORKCACHE_TEST_SECRET'] = 'sk-should-not-leak';
    try {
      const out = okContent(await withBash().execute('bash', { command: 'env' }));
      expect(out).not.toContain('sk-should-not-leak');
      expect(out).toContain('PATH=');
    } finally {
      delete process.env['FORKCACHE_TEST_SECRET'];
    }
    const custom = executorIn(sandbox, {
      allow: ['bash'],
      bashEnv: { GREETING: 'hi', PATH: process.env['PATH'] ?? '' },
    });
    expect(okContent(await custom.execute('bash', { command: 'echo "$GREETING"' }))).toBe('hi\n');
  });

  it("runs none of the host user's shell start-up files, in either sandbox", async () => {
    // Node's stdio pipes are sockets: bash took itself for a remote shell and ran ~/.bashrc,
    // so the host's rc file (its exports, a `pyenv rehash` stuck on a stale lock) ran in every
    // command. The attacker here is the rc file's content reaching the fork's environment.
    const home = `${sandbox.base}/home`;
    await sandbox.put('../home/.bashrc', 'export FROM_RC=leaked; echo rc-ran >> "$HOME/ran"\n');
    await sandbox.put('../home/.bash_profile', 'export FROM_PROFILE=leaked\n');
    await sandbox.put('../home/.profile', 'export FROM_PROFILE=leaked\n');
    for (const sandboxKind of ['none', 'auto'] as const) {
      const tools = executorIn(sandbox, {
        allow: ['bash'],
        sandbox: sandboxKind,
        bashEnv: { HOME: home, PATH: process.env['PATH'] ?? '' },
      });
      const out = okContent(await tools.execute('bash', { command: 'echo "[$FROM_RC][$FROM_PROFILE]"' }));
      expect(out, sandboxKind).toBe('[][]\n');
    }
    expect(existsSync(`${home}/ran`)).toBe(false);
  });

  it("runs the BASH_ENV file it is given for the command, not before forkcache's launcher, in either sandbox", async () => {
    // bash runs the file BASH_ENV names before its first line: what it printed came before the
    // launcher's ready byte, which forkcache never saw, and every call ended at its timeout
    await sandbox.put('env.sh', 'echo from-bash-env; export FROM_BASH_ENV=set\n');
    for (const sandboxKind of ['none', 'auto'] as const) {
      const tools = executorIn(sandbox, {
        allow: ['bash'],
        sandbox: sandboxKind,
        limits: { bashTimeoutMs: 60_000 },
        bashEnv: { PATH: process.env['PATH'] ?? '', BASH_ENV: join(realpathSync(sandbox.workspace), 'env.sh') },
      });
      const out = okContent(
        await tools.execute('bash', { command: 'echo "[$FROM_BASH_ENV][${FORKCACHE_BASH_ENV-unset}]"' }),
      );
      expect(out, sandboxKind).toBe('from-bash-env\n[set][unset]\n');
    }
  });

  it('rejects with the abort reason when aborted before or during the command', async () => {
    const tools = withBash();
    const reason = new Error('stop');
    await expect(tools.execute('bash', { command: 'echo x' }, { signal: AbortSignal.abort(reason) })).rejects.toBe(
      reason,
    );
    const controller = new AbortController();
    const running = tools.execute('bash', { command: 'sleep 20' }, { signal: controller.signal });
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
  });
});
