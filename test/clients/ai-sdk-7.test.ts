// The real AI SDK 7 runs as a child process (node:child_process) under Node 22: the slow tier.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ForkToolOutput } from '../../src/ai-sdk.ts';
import { findForkDirective, lastUserText } from '../../src/integrations/emulator/scripts/conversation.ts';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import type { LedgerRecord } from '../../src/core/ledger/records.ts';
import { type RunResult, runProgram } from '../cli/run-cli.ts';
import { expectBackgroundTen, expectForkedTwenty } from '../examples/ai-sdk-output.ts';
import { isRepair, typedOutputModel } from '../integrations/ai-sdk/typed-model.ts';
import { builtSources } from '../setup/built-sources.ts';
import { aiSdk7, node22Bin, node22Modules, pinnedNode22 } from './helpers.ts';

if (!aiSdk7.ok) console.warn(`test/clients: ${aiSdk7.why}`);

const ROOT = resolve(import.meta.dirname, '../..');
const AI_PACKAGES = ['ai', '@ai-sdk/anthropic', '@ai-sdk/openai', '@ai-sdk/openai-compatible', 'zod'].filter((name) =>
  existsSync(join(node22Modules, name)),
);
const installed = (name: string, why: string): { ok: boolean; why: string } =>
  AI_PACKAGES.includes(name)
    ? { ok: true, why }
    : {
        ok: false,
        why: `SKIPPED: ${join(node22Modules, name)} is not installed (bash scripts/clients/setup.sh installs it)`,
      };
const openai = installed('@ai-sdk/openai', 'on @ai-sdk/openai 4');
const compatible = installed('@ai-sdk/openai-compatible', 'on @ai-sdk/openai-compatible 3, DashScope');

/*
 * A user's project on AI SDK 7, laid out as npm would install it: `ai` 7 and its provider from
 * the clients folder's Node 22 project, and forkcache as the package it publishes (this
 * package.json, its exports onto `dist/`, and `dist/` the suite's JavaScript build of these
 * sources, which has dist's layout: src/ and workers/). Why this and not a loader or an import
 * map: Node resolves a bare specifier from the importing file's real path, so the program must
 * be a file of this project (a copy: a symlink back into the repository would resolve `ai` to
 * its `ai` 6), and everything else resolves by the rules every user meets, the subpath exports
 * included. Node 22 strips the example's types itself: what runs is the file as written.
 */
const projects: string[] = [];
afterAll(() => projects.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function project(programs: readonly string[]): Promise<{ dir: string; built: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'fc-ai-sdk-7-'));
  projects.push(dir);
  writeFileSync(join(dir, 'package.json'), '{ "name": "ai-sdk-7-app", "private": true, "type": "module" }\n');
  for (const name of AI_PACKAGES) {
    mkdirSync(dirname(join(dir, 'node_modules', name)), { recursive: true });
    symlinkSync(join(node22Modules, name), join(dir, 'node_modules', name));
  }
  const forkcache = join(dir, 'node_modules', 'forkcache');
  mkdirSync(forkcache);
  copyFileSync(join(ROOT, 'package.json'), join(forkcache, 'package.json'));
  const built = process.env['FORKCACHE_BUILT_SOURCES'] ?? (await builtSources());
  symlinkSync(built, join(forkcache, 'dist'));
  for (const program of programs) copyFileSync(join(ROOT, program), join(dir, basename(program)));
  return { dir, built };
}

/** Only what a shell gives a program: none of this test process's variables (vitest's, the build's). */
const cleared = Object.fromEntries(Object.keys(process.env).map((key) => [key, undefined]));

function node22(args: string[], cwd: string, env: Record<string, string> = {}): Promise<RunResult> {
  return runProgram(node22Bin, args, {
    cwd,
    env: { ...cleared, PATH: process.env['PATH'], HOME: process.env['HOME'], NO_COLOR: '1', ...env },
  });
}

/** The request bodies the emulator logged, in arrival order. */
function exchanges(dir: string): { body: Record<string, unknown> }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const record = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { request: { body: Record<string, unknown> } };
      return { body: record.request.body };
    });
}

/**
 * A request part as the app sent it: forkcache's cache markers taken out (on DashScope a marked
 * message's text is in array form, one text part: back to the string the app sent).
 */
function unmarked(value: unknown): string {
  const text = JSON.parse(
    JSON.stringify(value ?? null, (key, v: unknown) => (key === 'cache_control' ? undefined : v)),
  ) as unknown;
  const content = (text as { content?: unknown } | null)?.content;
  if (
    Array.isArray(content) &&
    content.length === 1 &&
    content[0]?.type === 'text' &&
    Object.keys(content[0]).length === 2
  )
    return JSON.stringify({ ...(text as object), content: content[0].text });
  return JSON.stringify(text);
}

interface TypedAppReport {
  stream: string[];
  screen: string[];
  output: ForkToolOutput<{ ticket: string; priority: 'low' | 'high' }>;
  read: string[];
  text: string;
  records: LedgerRecord[];
}

interface AppReport {
  output: ForkToolOutput;
  calls: { tool: string; aborts: boolean }[];
  text: string;
  sent: string[];
  records: LedgerRecord[];
}

describe.skipIf(!aiSdk7.ok)(`forkcache/ai-sdk on AI SDK 7 (${aiSdk7.why})`, () => {
  it('examples/ai-sdk/ai-sdk.ts, unchanged: the agent forks 20 children that call its three tools', async () => {
    const { dir, built } = await project(['examples/ai-sdk/ai-sdk.ts']);
    // the project resolves the AI SDK 7 packages, on Node 22, and forkcache through its exports
    const versions = await node22(
      [
        '--input-type=module',
        '-e',
        `const v = async (name) => (await import(name + '/package.json', { with: { type: 'json' } })).default.version;
         console.log(process.version, await v('ai'), await v('@ai-sdk/anthropic'), import.meta.resolve('forkcache/ai-sdk'));`,
      ],
      dir,
    );
    const expected = (name: string): string =>
      (JSON.parse(readFileSync(join(node22Modules, name, 'package.json'), 'utf8')) as { version: string }).version;
    expect(pinnedNode22).toMatch(/^22\./);
    expect(versions.stderr).toBe('');
    // Node resolves through symlinks: the build's real path (node_modules may be a link to another checkout's)
    expect(versions.stdout.trim()).toBe(
      `v${pinnedNode22} ${expected('ai')} ${expected('@ai-sdk/anthropic')} ${pathToFileURL(realpathSync(join(built, 'src/ai-sdk.js'))).href}`,
    );
    expect(expected('ai')).toMatch(/^7\./);

    const { code, stdout, stderr } = await node22(['ai-sdk.ts'], dir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expectForkedTwenty(stdout);
  });

  it("the examples type-check against AI SDK 7's declarations (the installed .d.ts are the contract)", async () => {
    const examples = ['examples/ai-sdk/ai-sdk.ts', ...(openai.ok ? ['examples/ai-sdk/openai-background.ts'] : [])];
    const { dir } = await project(examples);
    // forkcache's types from its sources, as examples/ai-sdk/tsconfig.json has them (no
    // declaration build needed); everything else from the project, so `ai` is 7's
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.json'),
        compilerOptions: {
          noEmit: true,
          rootDir: '/',
          typeRoots: [join(ROOT, 'node_modules/@types')],
          paths: {
            forkcache: [join(ROOT, 'src/index.ts')],
            'forkcache/ai-sdk': [join(ROOT, 'src/ai-sdk.ts')],
            'forkcache/testing': [join(ROOT, 'src/testing.ts')],
          },
        },
        include: examples.map((file) => basename(file)),
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const { code, stdout } = await runProgram(process.execPath, [tsc, '-p', dir, '--listFiles'], { cwd: dir });
    expect(
      stdout
        .split('\n')
        .filter((line) => !line.startsWith('/'))
        .join('\n'),
    ).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(join(node22Modules, 'ai/dist/index.d.ts'));
  });

  const wires = [
    { wire: 'anthropic', api: 'anthropic', why: 'on @ai-sdk/anthropic 4', ok: true },
    { wire: 'openai', api: 'openai', ...openai },
    { wire: 'dashscope', api: 'dashscope', ...compatible },
  ] as const;
  for (const { wire, api, ok, why } of wires)
    it.skipIf(!ok)(
      `${wire}: 20 children fork from the exact request the app sent, call its three tools, and read ≥ 99% of it (${why})`,
      async () => {
        const logDir = mkdtempSync(join(tmpdir(), 'fc-ai-sdk-7-log-'));
        projects.push(logDir);
        const emulator = await startEmulator({ api, script: 'ai-sdk', latency: 'off', logDir });
        let run: RunResult;
        try {
          const { dir } = await project(['test/clients/fixtures/ai-sdk-agent.ts']);
          run = await node22(['ai-sdk-agent.ts'], dir, { EMULATOR_URL: emulator.url, WIRE: wire, FORKS: '20' });
        } finally {
          await emulator.close();
        }
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        const app = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as AppReport;

        // the reports came back as the fork tool's output, and every child called the app's three tools
        expect(app.output.forks.map((f) => f.status)).toEqual(Array.from({ length: 20 }, () => 'completed'));
        for (const fork of app.output.forks) expect(fork.report).toContain('add_comment → comment added to triage');
        for (const tool of ['search_tickets', 'lookup_user', 'add_comment'])
          expect(app.calls.filter((c) => c.tool === tool)).toHaveLength(20);
        expect(app.calls).toHaveLength(60);
        expect(app.calls.every((c) => c.aborts)).toBe(true);
        expect(app.text).toContain('The children reported');

        // The emulator received the app's request exactly as the app sent it, and every child's
        // request starts with it: its system prompt and tools, its messages, then the assistant
        // turn that called the fork tool.
        const log = exchanges(logDir);
        const [first, second] = app.sent.map((body) => JSON.parse(body) as Record<string, unknown>);
        expect(log[0]!.body).toEqual(first);
        const own = app.records.find((r) => r.kind === 'parent')!.usage;
        const prompt = own.input_tokens + own.cache_read_input_tokens + own.cache_creation_input_tokens;
        expect(prompt).toBeGreaterThan(1024);
        const said = first!['messages'] as unknown[];
        const turn = (second!['messages'] as unknown[])[said.length];
        const children = log.filter((e) => JSON.stringify(e.body).includes('fork-boilerplate'));
        expect(children.length).toBeGreaterThanOrEqual(20 * 4);
        for (const { body } of children) {
          expect(unmarked(body['system'])).toBe(unmarked(first!['system']));
          expect((body['tools'] as unknown[]).map(unmarked)).toEqual((first!['tools'] as unknown[]).map(unmarked));
          const messages = body['messages'] as unknown[];
          expect(messages.slice(0, said.length).map(unmarked)).toEqual(said.map(unmarked));
          expect(unmarked(messages[said.length])).toBe(unmarked(turn));
        }

        // The fan-out's cache efficiency against that request, as the API counted it: what
        // each child's first request read of it, over what could be read (all of it each, less
        // the one write of what the app's request left uncached: on the Messages API, which
        // caches only at markers and the app set none, the first child writes it; on OpenAI
        // and DashScope here every child reads it, so the figure passes 1, as on ai 6).
        const firsts = app.records.filter((r) => r.kind === 'fork' && r.turn === 0);
        expect(firsts).toHaveLength(20);
        const shares = firsts.map((r) => r.usage.cache_read_input_tokens / prompt);
        expect(shares.filter((share) => share >= 0.99).length).toBeGreaterThanOrEqual(19);
        const read = firsts.reduce((sum, r) => sum + Math.min(r.usage.cache_read_input_tokens, prompt), 0);
        const efficiency = read / (20 * prompt - own.input_tokens);
        expect(efficiency).toBeGreaterThanOrEqual(0.99);
        expect(app.output.cacheEfficiency).toBeGreaterThanOrEqual(0.99);
        console.log(
          `ai 7, ${wire}: the app's request ${prompt} tokens; ${shares.filter((share) => share >= 0.99).length} of 20 first requests read ≥ 99% of it; efficiency against it ${efficiency.toFixed(3)}`,
        );
      },
    );

  it("typed results: the app streams each child's progress, then gets values its zod schema checked (one repair turn, then invalid_output)", async () => {
    // the children of ../ai-sdk/typed-model.ts: part 1 matches, part 2 after its repair turn, part 3 never
    const { model, seen } = typedOutputModel();
    const emulator = await startEmulator({ scripts: [model], script: 'typed-output', latency: 'off' });
    let run: RunResult;
    try {
      const { dir } = await project(['test/clients/fixtures/ai-sdk-typed.ts']);
      run = await node22(['ai-sdk-typed.ts'], dir, { EMULATOR_URL: emulator.url, FORKS: '3' });
    } finally {
      await emulator.close();
    }
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const app = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as TypedAppReport;

    // each child's progress arrived as preliminary results, in its order, before the one final result
    expect(app.stream.filter((e) => e === 'final')).toHaveLength(1);
    expect(app.stream.at(-1)).toBe('final');
    const at = (event: string): number => app.stream.indexOf(event);
    for (const [n, status] of [
      [1, 'completed'],
      [2, 'completed'],
      [3, 'invalid_output'],
    ] as const) {
      expect(at(`fork ${n} started`)).toBeGreaterThanOrEqual(0);
      expect(at(`fork ${n} started`)).toBeLessThan(at(`fork ${n} called lookup_user`));
      expect(at(`fork ${n} called lookup_user`)).toBeLessThan(at(`fork ${n} ended: ${status}`));
    }
    // the repaired children's third turn (the repair) was shown live too; the matching child had two
    for (const [n, status] of [
      [2, 'completed'],
      [3, 'invalid_output'],
    ] as const) {
      expect(at(`fork ${n} finished turn 2`)).toBeLessThan(at(`fork ${n} finished turn 3`));
      expect(at(`fork ${n} finished turn 3`)).toBeLessThan(at(`fork ${n} ended: ${status}`));
    }
    expect(at('fork 1 finished turn 3')).toBe(-1);
    expect(app.screen).toEqual([
      'fork 1: completed, 2 turn(s)',
      'fork 2: completed, 3 turn(s)',
      'fork 3: invalid_output, 3 turn(s)',
    ]);

    // the statuses and the typed values, as the app read them
    expect(app.output.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'invalid_output']);
    expect(app.output.forks.map((f) => f.output)).toEqual([
      { ticket: 'T-1', priority: 'high' },
      { ticket: 'T-2', priority: 'low' },
      undefined,
    ]);
    expect(app.read).toEqual(['T-1 is high', 'T-2 is low', 'invalid_output']);
    expect(app.text).toContain('The children reported');

    // one repair turn each for parts 2 and 3, quoting the field that failed, and none for part 1
    const repairs = seen.filter(isRepair).map((r) => lastUserText(r.messages)!.text);
    expect(repairs).toHaveLength(2);
    expect(repairs.some((t) => t.includes('ticket:'))).toBe(true);
    expect(repairs.some((t) => t.includes('priority:'))).toBe(true);
    // every child was shown the app's schema (the project's zod as JSON Schema) after its directive
    const directives = seen.map((r) => findForkDirective(r.messages)?.directive).filter((d) => d !== undefined);
    expect(directives.length).toBeGreaterThanOrEqual(3 * 2);
    for (const directive of directives) expect(directive).toContain('"enum":["low","high"]');
    const fork = app.records.filter((r) => r.kind === 'fork');
    const turnsOf = (id: string) => fork.filter((r) => r.forkId === id).sort((a, b) => a.turn - b.turn);
    const [one, two, three] = app.output.forks.map((f) => turnsOf(f.forkId));
    expect(one!.map((r) => r.turn)).toEqual([0, 1]);
    for (const turns of [two!, three!]) {
      expect(turns.map((r) => r.turn)).toEqual([0, 1, 2]);
      const [, report, repair] = turns;
      const sent =
        report!.usage.input_tokens + report!.usage.cache_creation_input_tokens + report!.usage.cache_read_input_tokens;
      // the repair turn continues the child's own conversation: it reads what the report turn sent from the cache
      expect(repair!.usage.cache_read_input_tokens).toBeGreaterThan(0);
      expect(repair!.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(sent);
    }
    console.log(
      `ai 7, typed: ${app.stream.length - 1} progress results before the final one; repair turns read ${[two!, three!].map((t) => t[2]!.usage.cache_read_input_tokens).join(' and ')} tokens from the cache`,
    );
  });

  it.skipIf(!openai.ok)(
    `examples/ai-sdk/openai-background.ts, unchanged: 10 background forks through .chat() (${openai.why})`,
    async () => {
      const { dir } = await project(['examples/ai-sdk/openai-background.ts']);
      const { code, stdout, stderr } = await node22(['openai-background.ts'], dir);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expectBackgroundTen(stdout);
    },
  );
});
