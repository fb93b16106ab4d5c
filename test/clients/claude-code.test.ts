// The real client runs as a child process (node:child_process, started by the test): the integration project.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importClaudeTranscript } from '../../src/cli/importers/claude-transcript.ts';
import type { LoggedCachePlan } from '../../src/integrations/emulator/server/exchange-log.ts';
import { startEmulator, type Emulator } from '../../src/integrations/emulator/start.ts';
import { BUILTIN_CATALOGUE } from '../../src/core/models/catalogue.ts';
import { forkcache, lastJson } from '../cli/run-cli.ts';
import { workspace } from '../core/engine/helpers.ts';
import { claudeCodeBuilds, clientHome, runClient } from './helpers.ts';

/*
 * Each Claude Code build of scripts/clients/claude-code.json (today 2.1.337 and 2.1.332), run
 * offline against the emulator as a user runs it: `claude -p` on its default model and on each
 * current model, a Read → Bash session in first-party shape, a fork fan-out through its Agent
 * tool; then that session's transcript imported as a parent (exactly, every record known), and
 * forkcache forks of it running Claude Code's own tools. The figures docs/real-clients.md
 * quotes are printed (`console.info`).
 */

interface Logged {
  request: { url: string; headers: Record<string, string>; body: Record<string, unknown> };
  response: { status: number };
  cache: LoggedCachePlan | null;
}

const CURRENT = BUILTIN_CATALOGUE.models
  .filter((m) => m.status === 'current' && m.provider === 'anthropic')
  .map((m) => m.id);
const servers: Emulator[] = [];
afterAll(async () => {
  for (const emu of servers) await emu.destroy();
});

/** A fresh emulator logging every exchange into a folder of its own. */
async function emulator(script: string): Promise<{ emu: Emulator; logged: () => Logged[] }> {
  const logDir = mkdtempSync(join(tmpdir(), 'forkcache-cc-log-'));
  const emu = await startEmulator({ latency: 'off', script, logDir });
  servers.push(emu);
  const logged = (): Logged[] =>
    readdirSync(logDir)
      .sort()
      .map((f) => JSON.parse(readFileSync(join(logDir, f), 'utf8')) as Logged);
  return { emu, logged };
}
const turns = (records: Logged[]): Logged[] => records.filter((r) => /^\/v1\/messages(\?|$)/.test(r.request.url));
const readShare = (c: LoggedCachePlan): number =>
  c.usage.cache_read_input_tokens /
  (c.usage.input_tokens + c.usage.cache_creation_input_tokens + c.usage.cache_read_input_tokens);
const billing = (r: Logged): string =>
  ((r.request.body['system'] as { text: string }[] | undefined) ?? [])
    .map((b) => b.text)
    .find((t) => t.startsWith('x-anthropic-billing-header:')) ?? '';

/** `a` is `b` or a later release (dotted numbers). */
const atLeast = (a: string, b: string): boolean => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  const i = x!.findIndex((n, k) => n !== y![k]);
  return i === -1 || x![i]! > y![i]!;
};

describe.each(claudeCodeBuilds)('Claude Code $version against the emulator', ({ version, bin, claudeCode }) => {
  describe.skipIf(!claudeCode.ok)(claudeCode.why, () => {
    /** The fork fan-out's session: what the import and the forkcache run below start from. */
    const fanOut: { session?: string; emu?: Emulator; cached?: number } = {};

    it(`says hi on its default model and on ${CURRENT.length} current models, naming ${version} in every request`, async () => {
      for (const model of [undefined, ...CURRENT]) {
        const { project, env } = clientHome();
        const { emu, logged } = await emulator('echo');
        const args = ['-p', 'say hi', ...(model ? ['--model', model] : [])];
        const { code, out } = await runClient(bin, args, project, { ...env, ANTHROPIC_BASE_URL: emu.url });
        expect(code, out).toBe(0);
        expect(out).toContain('Result: echo:');
        const main = turns(logged()).find((r) => r.request.body['model'] === (model ?? 'claude-opus-5-5'));
        expect(
          main,
          `${model ?? 'default'}: ${JSON.stringify(turns(logged()).map((r) => r.request.body['model']))}`,
        ).toBeDefined();
        expect(main!.response.status).toBe(200);
        expect(main!.request.headers['user-agent']).toMatch(
          new RegExp(`^claude-cli/${version.replace(/\./g, '\\.')} `),
        );
        expect(billing(main!)).toContain(`cc_version=${version}.`);
        // it marks its prefix, and a fresh emulator writes it
        expect(main!.cache!.writes.length).toBeGreaterThan(0);
        expect(main!.cache!.usage.cache_creation_input_tokens).toBeGreaterThan(5000);
        await emu.close();
      }
    });

    it('a 3-turn Read → Bash session in first-party shape reads at least 90% on turns 2 and 3', async () => {
      const { project, env } = clientHome();
      const { emu, logged } = await emulator('claude-code');
      const { code, out } = await runClient(
        bin,
        ['-p', 'read notes.txt then run `wc -l notes.txt`', '--allowedTools', 'Read', 'Bash'],
        project,
        { ...env, ANTHROPIC_BASE_URL: emu.url, _CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL: '1' },
      );
      expect(code, out).toBe(0);
      const main = turns(logged());
      expect(main.map((r) => r.response.status)).toEqual([200, 200, 200]);
      // first-party shape: the billing block changes every request, and the cache ignores it
      expect(new Set(main.map(billing)).size).toBe(3);
      expect(readShare(main[1]!.cache!)).toBeGreaterThanOrEqual(0.9);
      expect(readShare(main[2]!.cache!)).toBeGreaterThanOrEqual(0.9);
      await emu.close();
    });

    it("forks twice through its Agent tool, each child reading at least 95% of its first request from the parent's cache", async () => {
      const { project, env } = clientHome();
      const { emu, logged } = await emulator('claude-code');
      const { code, out } = await runClient(
        bin,
        ['-p', 'fork read notes.txt | count the lines of notes.txt', '--allowedTools', 'Agent', 'Read', 'Bash'],
        project,
        { ...env, ANTHROPIC_BASE_URL: emu.url },
      );
      expect(code, out).toBe(0);
      const main = turns(logged());
      const children = main.filter((r) => billing(r).includes('cc_is_subagent=true'));
      expect(children).toHaveLength(2);
      for (const child of children) expect(readShare(child.cache!)).toBeGreaterThanOrEqual(0.95);
      const last = main.at(-1)!.cache!;
      console.info(
        `claude-code ${version}: fork children read ${children.map((c) => `${(100 * readShare(c.cache!)).toFixed(1)}%`).join(', ')}; the parent's last request cached ${last.usage.cache_read_input_tokens + last.usage.cache_creation_input_tokens} tokens`,
      );
      const projects = join(env['CLAUDE_CONFIG_DIR']!, 'projects');
      const dir = join(projects, readdirSync(projects)[0]!);
      fanOut.session = join(
        dir,
        readdirSync(dir).find((f) => f.endsWith('.jsonl'))!,
      );
      fanOut.emu = emu; // it holds the session's cache: the forks below read it
      fanOut.cached = last.usage.cache_read_input_tokens + last.usage.cache_creation_input_tokens;
    });

    it('its transcript imports exactly: every record known, the route read, the cache the session wrote expected', () => {
      expect(fanOut.session, 'the fork fan-out above ran').toBeDefined();
      const { source, notes, expectedCachedTokens, route, snapshot } = importClaudeTranscript(fanOut.session!);
      expect(source).toBe('wire');
      expect(notes.filter((n) => n.startsWith('skipped'))).toEqual([]);
      expect(expectedCachedTokens).toBe(fanOut.cached);
      expect(snapshot.model).toBe('claude-opus-5-5');
      // api-request-route is written from 2.1.333 on: the session went to the emulator, a custom endpoint
      if (atLeast(version, '2.1.333')) expect(route).toMatchObject({ provider: 'customEndpoint', credential: 'key' });
      else expect(route).toBeUndefined();
    });

    it("a forkcache run of that session runs Claude Code's tools, every first request reading >= 99% of its cache", async () => {
      expect(fanOut.session, 'the fork fan-out above ran').toBeDefined();
      const FILES = 4;
      const dir = mkdtempSync(join(tmpdir(), 'forkcache-cc-tools-'));
      const files = Object.fromEntries(
        Array.from({ length: FILES }, (_, i) => [
          `src/f${i + 1}.ts`,
          `export function fetchData() {\n  return ${i};\n}\nexport const again = fetchData();\n`,
        ]),
      );
      const ws = workspace(files);
      writeFileSync(
        join(dir, 'plan.json'),
        JSON.stringify({
          directives: Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
          workspace: ws,
          runDir: join(dir, 'runs'),
          allow: ['read_file', 'edit_file', 'bash'],
          limits: { maxThreads: 2 },
        }),
      );
      const { code, stdout, stderr } = await forkcache(
        ['run', join(dir, 'plan.json'), '--parent-from-claude-transcript', fanOut.session!, '--api', 'real', '--json'],
        { ANTHROPIC_BASE_URL: fanOut.emu!.url, ANTHROPIC_API_KEY: 'sk-ant-test' },
      );
      expect(code, stderr).toBe(0);
      // the forks went where the session did (a custom endpoint): no warning about the route
      expect(stderr).not.toContain('they will not read the cache');
      const summary = lastJson(stdout) as { forks: { completed: number }; parent_cache: { share: number } };
      expect(summary.forks.completed).toBe(FILES);
      expect(summary.parent_cache.share).toBeGreaterThanOrEqual(0.99);
      for (const file of Object.keys(files))
        expect(readFileSync(join(ws, file), 'utf8').match(/\bloadData\b/g), file).toHaveLength(2);
      console.info(
        `claude-code ${version}: a forkcache run of its session, ${FILES} forks with Read/Edit/Bash: least first-request share ${(100 * summary.parent_cache.share).toFixed(1)}%`,
      );
    });
  });
});
