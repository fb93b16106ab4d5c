import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAUDE_ATTACKS, QWEN_ATTACKS } from '../../src/integrations/emulator/scripts/hostile.ts';
import { tsxLoaderUrl } from '../../src/core/pool/worker-file.ts';
import { lastJson, runNode } from '../cli/run-cli.ts';

/*
 * Issue 43's done-when, as the script `scripts/hostile-fan-out.mts` runs it in its own process:
 * the tool-level attacks by their real clients' routes (Qwen Code's `tool_call` to a denied host
 * tool and to `read_many_files`, nested braces in glob, denyTools naming a registered host tool;
 * Claude Code's 40-edit MultiEdit) in two fan-outs of 20 forks, the rest benign. Before the gate,
 * the denied host tool's handler ran and the MultiEdit took the process down (no summary). The
 * MCP session swap and the `push` force are not tool calls: test/integrations/mcp/fork-calls.test.ts,
 * test/integrations/mcp/mcp-proxy.test.ts and test/cli/push.test.ts play them.
 */

const ROOT = join(import.meta.dirname, '../..');

interface Result {
  fanOuts: { toolSet: string; requests: number; forks: { directive: string; status: string; call: string }[] }[];
  summaries: number;
  benignCompleted: number;
  benign: number;
  deniedHandlerCalls: number;
  runDirKb: number;
  peakRssMb: number;
}

describe('a hostile fan-out (issue 43)', () => {
  it('ends with its summaries, the benign forks completed, no denied handler called, under 1 GB', async () => {
    const { code, stdout, stderr } = await runNode(
      ['--import', tsxLoaderUrl(), join(ROOT, 'scripts/hostile-fan-out.mts'), '--json'],
      { cwd: ROOT },
    );
    expect(code, stderr).toBe(0);
    const result = lastJson<Result>(stdout);
    expect(result.fanOuts.map((f) => [f.toolSet, f.forks.length])).toEqual([
      ['qwen-code', 20],
      ['claude-code', 20],
    ]);
    expect(result.summaries).toBe(2);
    expect(result.benign).toBe(40 - Object.keys(QWEN_ATTACKS).length - Object.keys(CLAUDE_ATTACKS).length);
    expect(result.benignCompleted).toBe(result.benign);
    // an attack's call fails; its fork reports that and completes like the others
    expect(result.fanOuts.flatMap((f) => f.forks.filter((fork) => fork.status !== 'completed'))).toEqual([]);
    expect(result.deniedHandlerCalls).toBe(0);
    // a safety net, far above what the run takes (about 370 MB): the MultiEdit alone once took 2.3 GB
    expect(result.peakRssMb).toBeLessThan(1024);
    // the 300-times read once wrote a 78 MB transcript
    expect(result.runDirKb).toBeLessThan(10 * 1024);

    // every attack made its call by its route, and the gate answered it
    const calls = Object.fromEntries(
      result.fanOuts.flatMap((f) => f.forks.map((fork) => [`${f.toolSet} ${fork.directive}`, fork.call])),
    );
    expect(calls).toMatchObject({
      'qwen-code attack tool_call host tool the policy denies': 'tool_call: PERMISSION_DENIED',
      'qwen-code attack host tool in denyTools': 'delete_ticket: TOOL_NOT_IN_FORK',
      'qwen-code attack tool_call host tool in denyTools': 'tool_call: TOOL_NOT_IN_FORK',
      'qwen-code attack glob nested braces': 'glob: TOOL_BAD_PATTERN',
      'qwen-code attack tool_call read_many_files 260 KB x 300': 'tool_call: ok',
      'qwen-code attack tool_call edit e -> 4000 e replace_all': 'tool_call: TOOL_FILE_TOO_LARGE',
      'claude-code attack MultiEdit 40 x e -> ee replace_all': 'MultiEdit: TOOL_FILE_TOO_LARGE',
      'claude-code attack Glob nested braces': 'Glob: TOOL_BAD_PATTERN',
      'claude-code attack host tool the policy denies': 'post_comment: PERMISSION_DENIED',
      'claude-code attack host tool in denyTools': 'delete_ticket: TOOL_NOT_IN_FORK',
    });
    // grep_search's nested-braces glob is parsed (linear) and matches nothing: the call returns
    expect(calls['qwen-code attack grep_search nested braces']).toMatch(/^grep_search: /);
  });
});
