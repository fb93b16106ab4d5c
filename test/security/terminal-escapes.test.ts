import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import type { ScriptedModel } from '../../src/integrations/emulator/scripts/types.ts';
import { forkcache, type RunResult } from '../cli/run-cli.ts';
import { repoWith } from '../core/tools/git-fixture.ts';
import { exampleParent } from './helpers.ts';

/*
 * A fork's model, steered by a file it read, writes terminal escapes into everything of its
 * that forkcache prints: its report, a file's name and contents, its error. `ESC[2K` + CR
 * erased the line `run` was printing and forged a verdict in its place; `ESC[2J` cleared the
 * screen. No command may pass a control character of the fork's to the terminal raw: `run`,
 * `resume`, `status`, `diff`, `merge`, `inspect-transcript`, and the errors on stderr.
 */
const FORGED = 'forkcache: all 1 forks completed, exit 0';
const HOSTILE = `\u001b[2K\r${FORGED}\u001b[2J\u009b31m\u202e`;
const REPORT = [
  `Scope: a.ts${HOSTILE}`,
  `Result: not done: ${HOSTILE}`,
  'Key files: a.ts',
  'Files changed: a.ts, notes.txt',
  `Issues: ${HOSTILE}`,
].join('\n');
// every control character but the newline and tab a command's own lines are made of
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;

const hostile: ScriptedModel = {
  name: 'terminal-attack',
  respond({ request }) {
    const wrote = JSON.stringify(request.messages).includes('toolu_attack_');
    if (!wrote)
      return {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_attack_1',
            name: 'write_file',
            input: { path: `notes${HOSTILE}.txt`, content: `${HOSTILE}\n` },
          },
          {
            type: 'tool_use',
            id: 'toolu_attack_2',
            name: 'write_file',
            input: { path: 'a.ts', content: `export const a = '${HOSTILE}';\n` },
          },
        ],
      };
    return { content: [{ type: 'text', text: REPORT }] };
  },
};

let emulator: Awaited<ReturnType<typeof startEmulator>>;
beforeAll(async () => {
  emulator = await startEmulator({ latency: 'off', script: hostile });
});
afterAll(() => emulator.close());

function expectSafe(name: string, result: RunResult): void {
  for (const [stream, text] of [
    ['stdout', result.stdout],
    ['stderr', result.stderr],
  ] as const) {
    const raw = RAW.exec(text);
    expect(
      raw,
      `${name} ${stream}: raw ${JSON.stringify(raw?.[0])} near ${JSON.stringify(text.slice(Math.max(0, (raw?.index ?? 0) - 40), (raw?.index ?? 0) + 40))}`,
    ).toBeNull();
  }
}

describe("no control character of a fork's reaches the terminal", () => {
  it("run, resume, status, diff and merge print the fork's text escaped", async () => {
    const repo = repoWith({ 'a.ts': 'export const a = 1;\n' });
    const runDir = mkdtempSync(join(tmpdir(), 'fc-runs-'));
    const plan = join(mkdtempSync(join(tmpdir(), 'fc-plan-')), 'plan.json');
    writeFileSync(
      plan,
      JSON.stringify({
        parent: exampleParent(),
        directives: ['update a.ts'],
        workspace: repo,
        runDir,
        allow: ['read_file', 'write_file'],
        isolation: 'worktree',
      }),
    );
    const env = { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: emulator.url };
    const ran = await forkcache(['run', plan], env);
    expectSafe('run', ran);
    // the fork's text is there, shown as escapes: nothing was dropped
    expect(ran.stdout + ran.stderr).toContain('\\x1b[2K\\x0d');
    const dir = join(runDir, readdirSync(runDir)[0]!);
    const transcript = readFileSync(join(dir, 'forks', readdirSync(join(dir, 'forks'))[0]!), 'utf8');
    expect(transcript).toContain('\\u001b[2K\\r'); // the attack really reached forkcache

    expectSafe('run --json', await forkcache(['run', plan, '--json'], env));
    for (const args of [
      ['status', dir],
      ['status', dir, '--json'],
      ['resume', dir],
      ['diff', dir],
      ['diff', dir, 'f01'],
    ]) {
      const result = await forkcache(args, env);
      expectSafe(args.join(' '), result);
      expect(result.stdout + result.stderr, args.join(' ')).toMatch(/\\x1b\[2|\\u001b\[2/);
    }
    const diff = await forkcache(['diff', dir, 'f01'], env);
    // the diff stays a readable diff: its own lines and newlines are kept
    expect(diff.stdout).toContain(`+export const a = '\\x1b[2K\\x0d${FORGED}\\x1b[2J\\u009b31m\\u202e';\n`);
    expectSafe('merge', await forkcache(['merge', dir], env));
  });

  it("inspect-transcript escapes a session's text, and so does an error on stderr", async () => {
    const ROOT = fileURLToPath(new URL('../..', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'fc-session-'));
    const session = join(dir, 'session.jsonl');
    copyFileSync(join(ROOT, 'test/fixtures/claude-code/2.1.332/fork-fanout/session.jsonl'), session);
    writeFileSync(
      session,
      readFileSync(session, 'utf8').replaceAll('"model":"claude-opus-5-5"', `"model":${JSON.stringify(`m${HOSTILE}`)}`),
    );
    const shown = await forkcache(['inspect-transcript', session]);
    expectSafe('inspect-transcript', shown);
    expect(shown.stdout).toContain('\\x1b[2K');
    expectSafe('inspect-transcript --json', await forkcache(['inspect-transcript', session, '--json']));
    // an error naming the fork's text: a plan whose directive the file carried
    const plan = join(dir, `plan${HOSTILE}.json`);
    const failed = await forkcache(['run', plan]);
    expect(failed.code).toBe(2);
    expectSafe('an error', failed);
    expect(failed.stderr).toContain('\\x1b[2K');
  });
});
