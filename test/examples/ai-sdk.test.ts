import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RunResult, runNode } from '../cli/run-cli.ts';

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
    expect(stdout).toMatch(/^forks: 20, completed: 20, cache efficiency (1\.000|0\.99\d)$/m);
    expect(stdout).toMatch(/^tool calls by the children: search_tickets 20, lookup_user 20, add_comment 20$/m);
    expect(stdout).toMatch(/^agent: The children reported/m);
    expect(stdout).toMatch(/^ledger: \d+ requests \(the agent and its 20 forks\), cache read \d+ tokens, cost \$\d/m);
  });

  it('openai-background.ts: on OpenAI, the reports of 10 background forks come back as a later message', async () => {
    const { code, stdout, stderr } = await runExample('openai-background.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^agent: The forks run in the background/m);
    expect(stdout).toMatch(/^pending: fo\S+ \(10 forks\)$/m);
    expect(stdout).toMatch(/^agent, later: The background forks reported: 10 completed/m);
    expect(stdout).toMatch(/^ledger: \d+ requests \(the agent's 3 turns and its 10 forks\), cache efficiency (1\.000|0\.99\d)/m);
  });
});
