import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RunResult, runNode } from '../cli/run-cli.ts';
import { expectBackgroundTen, expectForkedTwenty } from './ai-sdk-output.ts';

// examples/ai-sdk/ai-sdk.ts is docs/ai-sdk.md's program: it must run as written, with the real
// `ai` and `@ai-sdk/anthropic` packages, `forkcache/ai-sdk` resolved to this checkout's sources
// by the example's own tsconfig, against the local emulator it starts itself.
const ROOT = resolve(import.meta.dirname, '../..');
const tsxCli = join(createRequire(import.meta.url).resolve('tsx'), '../cli.mjs');

function runExample(file = 'ai-sdk.ts'): Promise<RunResult> {
  return runNode([tsxCli, '--tsconfig', 'examples/ai-sdk/tsconfig.json', `examples/ai-sdk/${file}`], {
    cwd: ROOT,
    env: { ANTHROPIC_API_KEY: '' },
  });
}

describe('examples/ai-sdk', () => {
  it('runs on the emulator: the agent forks 20 children that call its three tools', async () => {
    const { code, stdout, stderr } = await runExample();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expectForkedTwenty(stdout);
  });

  it('openai-background.ts: on OpenAI, the reports of 10 background forks come back as a later message', async () => {
    const { code, stdout, stderr } = await runExample('openai-background.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expectBackgroundTen(stdout);
  });
});
