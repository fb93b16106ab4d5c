import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentSdk, agentSdkDir, claudeBin, claudeCode, node22Bin, qwenCode, qwenEntry } from '../clients/helpers.ts';
import { runProgram } from '../cli/run-cli.ts';

// examples/mcp/run.sh as a user runs it: the emulator, `forkcache proxy --mcp` and a real client
// as separate processes, the client's MCP config the one the proxy wrote.
const ROOT = resolve(import.meta.dirname, '../..');
const script = join(ROOT, 'examples/mcp/run.sh');

/** The proxy's `--json` summary: the script's last line. */
function summaryOf(stdout: string): { requests: { total: number }; fanouts: { requests: number }[] } {
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as never;
}

describe('examples/mcp/run.sh', () => {
  it.skipIf(!claudeCode.ok)(`claude-code: 6 forks through the MCP tool (${claudeCode.why})`, async () => {
    const env = { CLAUDE: claudeBin, ANTHROPIC_BASE_URL: undefined, ANTHROPIC_API_KEY: undefined };
    const { code, stdout, stderr } = await runProgram('bash', [script, 'claude-code', '6'], { cwd: ROOT, env });
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('6 completed fork report(s) came back from mcp__forkcache__fork');
    expect(summaryOf(stdout).fanouts.some((f) => f.requests >= 6)).toBe(true);
  });

  it.skipIf(!agentSdk.ok)(`agent-sdk: 3 forks through the MCP tool (${agentSdk.why})`, async () => {
    const env = { AGENT_SDK: agentSdkDir, ANTHROPIC_BASE_URL: undefined, ANTHROPIC_API_KEY: undefined };
    const { code, stdout, stderr } = await runProgram('bash', [script, 'agent-sdk', '3'], { cwd: ROOT, env });
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('3 completed fork report(s) came back from mcp__forkcache__fork');
    expect(summaryOf(stdout).fanouts.some((f) => f.requests >= 3)).toBe(true);
  });

  it.skipIf(!qwenCode.ok)(`qwen-code: 4 forks through the MCP tool (${qwenCode.why})`, async () => {
    const env = { QWEN: qwenEntry, NODE22: node22Bin, ANTHROPIC_BASE_URL: undefined, ANTHROPIC_API_KEY: undefined };
    const { code, stdout, stderr } = await runProgram('bash', [script, 'qwen-code', '4'], { cwd: ROOT, env });
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('4 completed fork report(s) came back from mcp__forkcache__fork');
    expect(summaryOf(stdout).fanouts.some((f) => f.requests >= 4)).toBe(true);
  });
});
