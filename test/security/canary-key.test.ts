import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { forkcacheProcess as forkcache } from '../cli/run-cli.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CANARY = 'sk-ant-canary-7f3c9e21d4b8a6f0';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emulator: Emulator;
let calls = 0;
beforeAll(async () => {
  // every third request fails mid-stream, so errors and retries are written too
  emulator = await startEmulator({
    latency: 'off',
    script: 'refactor',
    faultFor: () => (++calls % 3 === 0 ? 'stream-error' : 'none'),
  });
});
afterAll(async () => {
  await emulator.close();
});

describe('the API key never leaves the process', () => {
  it('appears in no transcript, summary, manifest, event log, --json output or error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-canary-'));
    writeFileSync(join(dir, 'a.ts'), 'export const fetchData = 1;\n');
    writeFileSync(join(dir, 'b.ts'), 'export const fetchData = 2;\n');
    const parent = {
      ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
      tools: TOOL_DECLARATIONS,
    };
    writeFileSync(
      join(dir, 'plan.json'),
      JSON.stringify({
        parent,
        directives: [
          'rename fetchData to loadData in a.ts',
          'rename fetchData to loadData in b.ts',
          'read missing.ts and report',
        ],
        workspace: '.',
        runDir: 'runs',
      }),
    );
    const env = { ANTHROPIC_API_KEY: CANARY, ANTHROPIC_BASE_URL: emulator.url };
    const ok = await forkcache(['run', join(dir, 'plan.json'), '--json'], env);
    expect(ok.stderr).toMatch(/against the Anthropic API/); // the key path, pointed at the emulator
    expect(ok.code).toBe(1); // 'read missing.ts' is not done (issue 23); the key is what this test is about
    // a failing run: the server refuses the key
    const refusing = await startEmulator({ latency: 'off', apiKey: 'another-key' });
    const denied = await forkcache(['run', join(dir, 'plan.json'), '--json'], {
      ANTHROPIC_API_KEY: CANARY,
      ANTHROPIC_BASE_URL: refusing.url,
    });
    await refusing.close();
    expect(denied.code).toBe(1);
    expect(denied.stdout).toMatch(/authentication_error|401/);
    for (const text of [ok.stdout, ok.stderr, denied.stdout, denied.stderr]) expect(text).not.toContain(CANARY);
    const written = filesUnder(join(dir, 'runs'));
    expect(written.some((f) => f.endsWith('.jsonl'))).toBe(true);
    for (const file of written) expect(readFileSync(file, 'utf8'), file).not.toContain(CANARY);
  });
});
