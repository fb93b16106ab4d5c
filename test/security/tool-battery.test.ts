import { readdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { z } from 'zod';
import { sampleInput } from '../../src/integrations/emulator/scripts/host-tools.ts';
import { MAX_TOOL_INPUT_BYTES, maxCallResultBytes } from '../../src/core/tools/call-bounds.ts';
import { createToolExecutor, type PermissionAsker, type ToolExecutorOptions } from '../../src/core/tools/executor.ts';
import { runHostTool, type HostTool, type HostToolSet } from '../../src/core/tools/host-tools.ts';
import { DEFAULT_TOOL_LIMITS } from '../../src/core/tools/limits.ts';
import type { PermissionPolicy } from '../../src/core/tools/permissions.ts';
import type { ToolResult } from '../../src/core/tools/result.ts';
import { RUN } from '../../src/core/tools/client-tools/handler.ts';
import { TOOL_SETS } from '../../src/core/tools/client-tools/registry.ts';
import { TOOL_SET_NAMES, type ClientTool, type ToolSetName } from '../../src/core/tools/client-tools/types.ts';
import { EXECUTABLE_TOOL_NAMES } from '../../src/core/wire/tool-names.ts';
import { makeSandbox, type Sandbox } from '../core/tools/helpers.ts';

/*
 * The hostile-input battery (docs/security.md, "The tool gate"): every attack of the table
 * below, against every tool of every registered tool set (enumerated from the registry: a tool
 * added later is covered with no line here) and a sample host tool, by every route a call can
 * take: direct, Qwen Code's deferred `tool_call {name, arguments}`, and a resumed call run again
 * (`rerun`). Each cell asserts the call resolved to a result (the process, the thread and the
 * siblings live on), that the result is an error or bounded, and that a handler the call was
 * refused never ran (every tool's `run` is watched, and the host handler records its calls).
 */

const SECRET = 'TOP SECRET';
const BIG = `${'x'.repeat(99)}\n`.repeat(30_000); // 3 MB
const HOST = 'post_comment';
const LIMITS = { bashTimeoutMs: 2_000, toolTimeoutMs: 5_000 };

let sandbox: Sandbox;
let hostCalls: unknown[] = [];
const runs = new Map<ClientTool, MockInstance>();

/** Every (set, tool) the registry holds. */
const CELLS: { set: ToolSetName; tool: ClientTool }[] = TOOL_SET_NAMES.flatMap((set) =>
  [...TOOL_SETS[set].tools.values()].map((tool) => ({ set, tool })),
);

beforeAll(() => {
  for (const { tool } of CELLS) if (!runs.has(tool)) runs.set(tool, vi.spyOn(tool, RUN));
});
afterAll(() => {
  for (const spy of runs.values()) spy.mockRestore();
});

beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('a.txt', 'alpha\n');
  await sandbox.put('grow.txt', 'e'.repeat(1000));
  await sandbox.put('.git/config', `[core]\n\tmarker = ${SECRET}\n`);
  await symlink(sandbox.outside, path.join(sandbox.workspace, 'link'));
  hostCalls = [];
  for (const spy of runs.values()) spy.mockClear();
});
afterEach(() => sandbox.cleanup());

/** The sample host tool, served the way the engine serves one (runHostTool), recording its calls. */
function hostSet(execute?: HostTool['execute']): HostToolSet {
  const tool: HostTool = {
    timeoutMs: 300,
    execute:
      execute ??
      ((input) => {
        hostCalls.push(input);
        return 'comment posted';
      }),
  };
  return {
    has: (name) => name === HOST,
    readOnly: () => false,
    call: (name, input, { signal, toolUseId }) =>
      runHostTool(name, tool, input, { signal: signal ?? new AbortController().signal, forkId: 'f01', toolUseId }),
  };
}

function executor(set: ToolSetName, options: Partial<ToolExecutorOptions> = {}) {
  return createToolExecutor({
    workspace: sandbox.workspace,
    allow: [...EXECUTABLE_TOOL_NAMES],
    sandbox: 'none',
    limits: LIMITS,
    toolSet: set,
    clientRoot: sandbox.workspace,
    host: hostSet(),
    ...options,
  });
}

/** A valid-looking input for `tool`, from its own schema, with fields overridden. */
function inputFor(tool: ClientTool, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const sample = sampleInput(schema, 'a.txt') as Record<string, unknown>;
  const keys = new Set(Object.keys(sample));
  return { ...sample, ...Object.fromEntries(Object.entries(fields).filter(([k]) => keys.has(k))) };
}

/** The routes a call of `name` can take in a fork of `set`. */
function routes(set: ToolSetName, name: string, input: unknown): { route: string; call: [string, unknown] }[] {
  const direct = { route: 'direct', call: [name, input] as [string, unknown] };
  const deferred = TOOL_SETS[set].deferred;
  return deferred ? [direct, { route: 'tool_call', call: [deferred.call, { name, arguments: input }] }] : [direct];
}

const called = (tool: ClientTool): number => runs.get(tool)!.mock.calls.length;
const bytes = (text: string): number => Buffer.byteLength(text);

/** Attacks on paths, in each spelling a model has used. */
function escapes(): string[] {
  return [
    '../outside/secret.txt',
    'sub/../../outside/secret.txt',
    path.join(sandbox.outside, 'secret.txt'),
    `${sandbox.workspace}/../outside/secret.txt`,
    `${sandbox.workspace}-evil/secret.txt`,
    'link/secret.txt',
    '.git/config',
    `${sandbox.workspace}/.git/config`,
    '/proc/self/environ',
  ];
}

/** A tool's input with every path-like field set to `value` (a glob field to a glob of it). */
function pathFields(tool: ClientTool, value: string): Record<string, unknown> {
  const pattern = tool.capability === 'glob' ? `${value.replace(/\/[^/]*$/, '')}/*` : 'x';
  return inputFor(tool, {
    file_path: value,
    path: value,
    directory: value,
    paths: [value],
    pattern,
    glob: tool.capability === 'grep' ? '**' : undefined,
  });
}

describe('the gate refuses before any handler runs, by every route', () => {
  it.each(CELLS.map((c) => [`${c.set} ${c.tool.name}`, c] as const))('%s: denyTools', async (_label, { set, tool }) => {
    const tools = executor(set, { deny: [tool.name, HOST] });
    for (const [name, input] of [
      [tool.name, inputFor(tool)],
      [HOST, { body: 'hi' }],
    ] as const) {
      for (const { route, call } of routes(set, name, input)) {
        for (const rerun of [false, true]) {
          const result = await tools.execute(...call, { rerun });
          expect(result, `${route} ${name}`).toMatchObject({ isError: true });
          expect(result.content, `${route} ${name}`).not.toMatch(/may use: .*\bpost_comment\b/);
        }
      }
    }
    expect(called(tool)).toBe(0);
    expect(hostCalls).toEqual([]);
  });

  it.each(CELLS.map((c) => [`${c.set} ${c.tool.name}`, c] as const))(
    '%s: policy deny, and ask answered no (asked once per call; a rerun is never asked)',
    async (_label, { set, tool }) => {
      for (const decision of ['deny', 'ask'] as const) {
        const asked: [string, unknown][] = [];
        const ask: PermissionAsker = async (name, input) => {
          asked.push([name, input]);
          return { allow: false, reason: 'no' };
        };
        const permissions: PermissionPolicy = { tools: { [tool.capability]: decision, [HOST]: decision } };
        const tools = executor(set, { permissions, ask });
        let calls = 0;
        for (const [name, subject, input] of [
          [tool.name, tool.capability, inputFor(tool)],
          [HOST, HOST, { body: 'hi' }],
        ] as const) {
          for (const { route, call } of routes(set, name, input)) {
            const result = await tools.execute(...call);
            expect(result, `${decision} ${route} ${name}`).toMatchObject({ isError: true, code: 'PERMISSION_DENIED' });
            if (decision === 'ask') {
              calls += 1;
              // asked in capability terms, with the input the tool would get (the inner one for tool_call)
              expect(asked.at(-1)).toEqual([subject, input]);
            }
            const rerun = await tools.execute(...call, { rerun: true });
            expect(rerun, `rerun ${route} ${name}`).toMatchObject({ isError: true, code: 'PERMISSION_DENIED' });
          }
        }
        expect(asked).toHaveLength(calls);
      }
      expect(called(tool)).toBe(0);
      expect(hostCalls).toEqual([]);
    },
  );

  it.each(CELLS.map((c) => [`${c.set} ${c.tool.name}`, c] as const))(
    '%s: an input over the size bound, and malformed inputs',
    async (_label, { set, tool }) => {
      const tools = executor(set);
      const huge = 'x'.repeat(MAX_TOOL_INPUT_BYTES + 1);
      for (const input of [
        inputFor(tool, { file_path: huge, path: huge, command: huge, pattern: huge, content: huge, paths: [huge] }),
      ])
        for (const { route, call } of routes(set, tool.name, input)) {
          const result = await tools.execute(...call);
          expect(result, route).toMatchObject({ isError: true, code: 'TOOL_INPUT_INVALID' });
        }
      expect(called(tool)).toBe(0);
      for (const input of [null, [], 'a.txt', 42, { file_path: 7, path: [], edits: {} }])
        for (const { route, call } of routes(set, tool.name, input)) {
          expect(await tools.execute(...call), `${route} ${JSON.stringify(input)}`).toMatchObject({ isError: true });
        }
    },
  );
});

describe('a call that runs stays inside its bounds', () => {
  it.each(CELLS.filter((c) => c.tool.capability !== 'bash').map((c) => [`${c.set} ${c.tool.name}`, c] as const))(
    '%s: every spelling of a path out of the workspace is refused, nothing outside read or written',
    async (_label, { set, tool }) => {
      const tools = executor(set);
      for (const target of escapes()) {
        for (const { route, call } of routes(set, tool.name, pathFields(tool, target))) {
          const result = await tools.execute(...call);
          expect(result.content.includes(SECRET), `${route} ${target}: ${result.content.slice(0, 200)}`).toBe(false);
          if (tool.capability === 'read_file' || tool.capability === 'edit_file' || tool.capability === 'write_file')
            expect(result.isError || /not read: /.test(result.content), `${route} ${target}`).toBe(true);
        }
      }
      expect(await readdir(sandbox.outside)).toEqual(['secret.txt']);
      expect(await readFile(path.join(sandbox.outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`);
    },
  );

  it.each(CELLS.map((c) => [`${c.set} ${c.tool.name}`, c] as const))(
    '%s: a 3 MB file, a 5 MB command output and 300 reads of it come back bounded',
    async (_label, { set, tool }) => {
      await sandbox.put('big.txt', BIG);
      const tools = executor(set);
      const input = inputFor(tool, {
        file_path: 'big.txt',
        path: tool.capability === 'list_dir' ? '.' : 'big.txt',
        paths: Array.from({ length: 300 }, () => 'big.txt').concat('**'),
        pattern: tool.capability === 'glob' ? '**' : 'x',
        command: "head -c 5000000 /dev/zero | tr '\\0' x",
        content: 'small\n',
        old_string: 'no such text',
      });
      const max = maxCallResultBytes({ ...DEFAULT_TOOL_LIMITS, ...LIMITS });
      for (const { route, call } of routes(set, tool.name, input)) {
        const result = await tools.execute(...call, { turn: 1 });
        expect(bytes(result.content), route).toBeLessThanOrEqual(max + 512);
      }
    },
  );

  it.each(
    CELLS.filter(
      (c) => c.tool.capability === 'glob' || c.tool.capability === 'grep' || c.tool.name === 'read_many_files',
    ).map((c) => [`${c.set} ${c.tool.name}`, c] as const),
  )('%s: pathological globs return at once, refused or matched in linear time', async (_label, { set, tool }) => {
    const tools = executor(set);
    const patterns = [
      `${'{'.repeat(40)}a${'}'.repeat(40)}`, // nested one-alternative braces: exponential before
      `${'{'.repeat(31)}a${'}'.repeat(31)}`,
      `${'{*,*}'.repeat(30)}x`, // alternation backtracking in RegExp
      `${'*a'.repeat(40)}b`, // polynomial backtracking in RegExp
      `${'{a,'.repeat(200)}b${'}'.repeat(200)}`,
      '['.repeat(5000),
    ];
    for (const pattern of patterns) {
      await sandbox.put(`${'a'.repeat(60)}`, 'a\n');
      const input = inputFor(tool, {
        pattern: tool.capability === 'glob' ? pattern : 'a',
        glob: pattern,
        paths: [pattern],
      });
      for (const { route, call } of routes(set, tool.name, input)) {
        const result = await tools.execute(...call);
        expect(result.isError ? result.code : 'ok', `${route} ${pattern.slice(0, 20)}`).toMatch(
          /^(ok|TOOL_BAD_PATTERN)$/,
        );
      }
    }
  });

  it.each(CELLS.filter((c) => c.tool.capability === 'edit_file').map((c) => [`${c.set} ${c.tool.name}`, c] as const))(
    '%s: edits that grow the file without bound are refused before the text is built',
    async (_label, { set, tool }) => {
      const tools = executor(set);
      const grow = { old_string: 'e', new_string: 'ee', replace_all: true };
      const input = inputFor(tool, {
        file_path: 'grow.txt',
        path: 'grow.txt',
        old_string: 'e',
        new_string: 'e'.repeat(2000),
        replace_all: true,
        edits: Array.from({ length: 40 }, () => grow),
      });
      for (const { route, call } of routes(set, tool.name, input)) {
        const result = await tools.execute(...call);
        expect(result, route).toMatchObject({ isError: true, code: 'TOOL_FILE_TOO_LARGE' });
      }
      expect(await readFile(path.join(sandbox.workspace, 'grow.txt'), 'utf8')).toBe('e'.repeat(1000));
    },
  );

  it.each(CELLS.filter((c) => c.tool.capability === 'bash').map((c) => [`${c.set} ${c.tool.name}`, c] as const))(
    '%s: a command that never ends is stopped at its deadline',
    async (_label, { set, tool }) => {
      const tools = executor(set, { limits: { ...LIMITS, bashTimeoutMs: 300 } });
      const input = inputFor(tool, { command: 'while :; do :; done', directory: undefined });
      delete input['directory'];
      delete input['timeout'];
      for (const { route, call } of routes(set, tool.name, input)) {
        const result = await tools.execute(...call);
        expect(result.isError, route).toBe(true);
        expect(result.content.slice(0, 200), route).toMatch(/timed out after 300 ms and was killed/);
      }
    },
  );

  it.each(TOOL_SET_NAMES.map((s) => [s] as const))(
    '%s: a host tool that never settles times out; one that floods is cut; redaction holds',
    async (set) => {
      const flood = createToolExecutor({
        workspace: sandbox.workspace,
        toolSet: set,
        secrets: ['s3cr3t-token-value'],
        host: hostSet(() => `s3cr3t-token-value ${'y'.repeat(20_000_000)}`),
      });
      for (const { route, call } of routes(set, HOST, {})) {
        const result = await flood.execute(...call);
        expect(bytes(result.content), route).toBeLessThanOrEqual(DEFAULT_TOOL_LIMITS.maxReadBytes + 200);
        expect(result.content.includes('s3cr3t'), route).toBe(false);
      }
      const stuck = createToolExecutor({
        workspace: sandbox.workspace,
        toolSet: set,
        host: hostSet((_input, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', reject))),
      });
      for (const { route, call } of routes(set, HOST, {})) {
        expect(await stuck.execute(...call), route).toMatchObject({ isError: true, code: 'TOOL_TIMEOUT' });
      }
    },
  );

  it('the results of one turn share one budget', async () => {
    await sandbox.put('big.txt', BIG);
    const tools = executor('forkcache');
    const max = maxCallResultBytes({ ...DEFAULT_TOOL_LIMITS, ...LIMITS });
    let total = 0;
    for (let i = 0; i < 12; i++)
      total += bytes(
        (await tools.execute('read_file', { path: 'big.txt', offset: 1 + i * 2000 }, { turn: 3 })).content,
      );
    expect(total).toBeLessThanOrEqual(2 * max + 12 * 200);
    // the next turn starts afresh
    expect((await tools.execute('read_file', { path: 'a.txt' }, { turn: 4 })).content).toBe('alpha\n');
  });
});

describe('findings of issue 43, each as its attacker played it', () => {
  it("a host tool the policy denies does not run through Qwen Code's tool_call; ask is asked", async () => {
    const asked: string[] = [];
    for (const decision of ['deny', 'ask'] as const) {
      const tools = executor('qwen-code', {
        permissions: { tools: { [HOST]: decision } },
        ask: async (name) => {
          asked.push(name);
          return { allow: false };
        },
      });
      const result: ToolResult = await tools.execute('tool_call', { name: HOST, arguments: { body: 'spam' } });
      expect(result).toMatchObject({ isError: true, code: 'PERMISSION_DENIED' });
    }
    expect(hostCalls).toEqual([]);
    expect(asked).toEqual([HOST]);
  });

  it('denyTools stops a host tool whose handler is registered', async () => {
    const tools = executor('forkcache', { deny: [HOST] });
    expect(await tools.execute(HOST, { body: 'spam' })).toMatchObject({ isError: true, code: 'TOOL_NOT_IN_FORK' });
    expect(tools.isAllowed(HOST)).toBe(false);
    expect(hostCalls).toEqual([]);
  });

  it('one MultiEdit of 40 edits e -> ee with replace_all is refused, the file untouched', async () => {
    const tools = executor('claude-code');
    const edits = Array.from({ length: 40 }, () => ({ old_string: 'e', new_string: 'ee', replace_all: true }));
    const result = await tools.execute('MultiEdit', { file_path: path.join(sandbox.workspace, 'grow.txt'), edits });
    expect(result).toMatchObject({ isError: true, code: 'TOOL_FILE_TOO_LARGE' });
    expect(result.content).toMatch(/^edit 11: the edit would make .* 2048000 bytes, over the edit limit of 1048576/);
  });

  it('nested one-alternative braces (81 characters) are parsed at once', async () => {
    const tools = executor('claude-code');
    const pattern = `${'{'.repeat(40)}a${'}'.repeat(40)}`;
    expect(await tools.execute('Glob', { pattern })).toMatchObject({ isError: true, code: 'TOOL_BAD_PATTERN' });
    const shallow = `${'{'.repeat(30)}a.txt${'}'.repeat(30)}`;
    expect(await tools.execute('Glob', { pattern: shallow })).toMatchObject({ isError: false });
  });

  it('read_many_files of one 260 KB file named 300 times reads it once, within one read', async () => {
    await sandbox.put('260k.txt', `${'z'.repeat(99)}\n`.repeat(2600));
    const tools = executor('qwen-code');
    const result = await tools.execute('read_many_files', { paths: Array.from({ length: 300 }, () => '260k.txt') });
    expect(bytes(result.content)).toBeLessThanOrEqual(DEFAULT_TOOL_LIMITS.maxReadBytes + 1024);
    expect(result.content.match(/^--- .*260k\.txt ---$/gm)).toHaveLength(1);
  });
});
